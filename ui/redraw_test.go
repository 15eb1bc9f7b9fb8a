package ui

import (
	"testing"
)

// TestNoRedrawWhenIdle counts the draws of the screen: ticks of an idle
// session draw nothing; ticks while a request is in flight (its age and
// countdown run) draw each time; a key draws once.
func TestNoRedrawWhenIdle(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.connect()
	hs.tick(nowMS)
	hs.m.View()
	hs.tick(nowMS + 5000) // past the calls/s window
	hs.m.View()
	base := hs.m.renders
	for i := 1; i <= 40; i++ {
		hs.tick(nowMS + 5000 + i*250)
		hs.m.View()
	}
	if got := hs.m.renders - base; got != 0 {
		t.Fatalf("an idle UI drew %d times in 40 ticks, want 0", got)
	}
	hs.press("tab")
	hs.m.View()
	hs.m.View()
	if got := hs.m.renders - base; got != 1 {
		t.Fatalf("a key drew %d times, want 1", got)
	}

	var e events
	e.call(nowMS+16000, 9, "tools/call", "slow", `{"name":"slow"}`, 60_000)
	hs.feed(e.take()...)
	hs.m.View()
	base = hs.m.renders
	for i := 1; i <= 10; i++ {
		hs.tick(nowMS + 16000 + i*250)
		hs.m.View()
	}
	if got := hs.m.renders - base; got != 10 {
		t.Fatalf("with a request in flight 10 ticks drew %d times, want 10 (its age runs)", got)
	}
}
