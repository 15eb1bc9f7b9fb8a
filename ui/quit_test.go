package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
)

// TestQuitQuestionGoneWhenSettled: q with a request in flight asks; when
// that request settles before the answer, the question is gone, and the
// next key does what it does (here 2 focuses Frames) instead of being
// taken as "stay".
func TestQuitQuestionGoneWhenSettled(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.play()
	hs.press("1")
	if cmd := hs.press("q"); isQuit(cmd) || !hs.m.confirmQuit {
		t.Fatal("q with a request in flight did not ask")
	}
	e := events{seq: 1000}
	e.req(5950, 6, "tools/call", "slow", client.StateResolved)
	hs.feed(e.take()...)
	if hs.m.pending.InFlight() != 0 {
		t.Fatalf("still %d in flight", hs.m.pending.InFlight())
	}
	if l := ansi.Strip(hs.m.helpLine()); strings.Contains(l, "in flight") {
		t.Fatalf("the question stayed with nothing in flight: %q", l)
	}
	if cmd := hs.press("2"); isQuit(cmd) || hs.m.focus != paneFrames {
		t.Fatalf("2 after the question went: focus %d", hs.m.focus)
	}
	if cmd := hs.press("q"); !isQuit(cmd) {
		t.Fatal("q with nothing in flight did not quit at once")
	}
}
