package chaos

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

const resp1 = `{"jsonrpc":"2.0","id":1,"result":{}}`

// notesOf collects a pipe's notes.
type notesOf struct {
	mu sync.Mutex
	n  []Note
}

func (c *notesOf) hook(n Note) { c.mu.Lock(); c.n = append(c.n, n); c.mu.Unlock() }
func (c *notesOf) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.n {
		b.WriteString(n.Text + "\n")
	}
	return b.String()
}

// TestApplyBoundsAddUp: what several rules ask of one frame is cut to the
// limits of one: at most MaxCopies copies from all the duplicate rules,
// at most MaxDelay of delays and of stalls, each cut said in its note.
func TestApplyBoundsAddUp(t *testing.T) {
	e := engine(t, "duplicate:n=1000", "duplicate:n=1000", "duplicate:n=5,ms=10",
		"delay:ms=3600000", "delay:ms=5", "stall:ms=3600000", "stall:ms=1")
	eff := e.Apply(ToHost, []byte(resp1))
	if len(eff.Lines) != 1+MaxCopies || len(eff.Later) != 0 {
		t.Errorf("%d lines and %d later, want %d and 0", len(eff.Lines), len(eff.Later), 1+MaxCopies)
	}
	if eff.Delay != MaxDelay || eff.Stall != MaxDelay {
		t.Errorf("delay %v, stall %v, want %v each", eff.Delay, eff.Stall, MaxDelay)
	}
	var all strings.Builder
	for _, n := range eff.Notes {
		all.WriteString(n.Text + "\n")
	}
	for _, want := range []string{
		"to-host 1000 more time(s)\n",
		"to-host 0 more time(s) (not 1000: one frame gets at most 1000 copies from all the rules)",
		"0 more time(s), 10ms later (not 5:",
		"by 5ms (cut to 0s in all: one frame's delays add up to at most 1h0m0s)",
		"for 1ms after the response to id 1 (cut to 0s in all: one frame's stalls add up to at most 1h0m0s)",
	} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no %q in the notes:\n%s", want, all.String())
		}
	}
}

// TestPipeCopiesInBatches: a line's copies reach the output in writes of
// at most batchBytes (a longer line, one write a copy), in order, every
// one of them.
func TestPipeCopiesInBatches(t *testing.T) {
	for _, tc := range []struct{ size, n int }{{100, 1000}, {batchBytes + 10, 3}} {
		line := `{"jsonrpc":"2.0","id":1,"result":{"v":"` + strings.Repeat("x", tc.size) + `"}}`
		var w writes
		p := engine(t, fmt.Sprintf("duplicate:to-host,n=%d", tc.n)).NewPipe(&w, &w, &w, 4*batchBytes, Hooks{})
		p.ToHost.Write([]byte(line + "\n"))
		size := tc.size
		if got, want := w.b.String(), strings.Repeat(line+"\n", tc.n+1); got != want {
			t.Fatalf("size %d: %d bytes written, want %d", size, len(got), len(want))
		}
		if w.max > max(batchBytes, len(line)+1) {
			t.Errorf("size %d: a write of %d bytes", size, w.max)
		}
	}
}

// writes records what is written and the largest write.
type writes struct {
	b   bytes.Buffer
	max int
}

func (w *writes) Write(p []byte) (int, error) { w.max = max(w.max, len(p)); return w.b.Write(p) }

// TestPipeHeldBytesBounded: a reorder rule whose window would hold more
// than MaxHeldBytes releases its frames early, with a note that says so.
func TestPipeHeldBytesBounded(t *testing.T) {
	var host proctest.Buffer
	var c notesOf
	p := engine(t, "reorder:to-host,window=1000,ms=3600000").NewPipe(&proctest.Buffer{}, &host, &proctest.Buffer{}, 2<<20, Hooks{Note: c.hook})
	defer p.Close()
	big := strings.Repeat("x", 1<<20)
	for i := range MaxHeldBytes/(1<<20) + 1 {
		p.ToHost.Write(fmt.Appendf(nil, "%d %s\n", i, big)) // not JSON: matched without decoding
	}
	if len(host.String()) < MaxHeldBytes || !strings.Contains(c.text(), fmt.Sprintf("early: the frames held to-host came to over %d bytes", MaxHeldBytes)) {
		t.Errorf("%d bytes written; notes:\n%.2000s", len(host.String()), c.text())
	}
}

// TestPipeLaterBounded: copies sent later hold at most MaxLaterBytes: a
// frame whose copies would pass it gets none, and a note says so; Close
// lets the waiting ones go (nothing written after it).
func TestPipeLaterBounded(t *testing.T) {
	var host proctest.Buffer
	var c notesOf
	p := engine(t, "duplicate:to-host,ms=3600000").NewPipe(&proctest.Buffer{}, &host, &proctest.Buffer{}, 2<<20, Hooks{Note: c.hook})
	big := strings.Repeat("x", 1<<20)
	n := MaxLaterBytes/(1<<20) + 1
	for i := range n {
		p.ToHost.Write(fmt.Appendf(nil, "%d %s\n", i, big)) // not JSON: matched without decoding
	}
	if !strings.Contains(c.text(), "did not send 1 later cop(ies) to-host: the copies waiting hold") {
		t.Errorf("notes:\n%.3000s", c.text())
	}
	p.sh.mu.Lock()
	waiting, held := len(p.sh.timers), p.sh.laterBytes
	p.sh.mu.Unlock()
	if waiting >= n || held > MaxLaterBytes {
		t.Errorf("%d copies waiting, %d bytes", waiting, held)
	}
	p.Close()
	p.sh.mu.Lock()
	waiting = len(p.sh.timers)
	p.sh.mu.Unlock()
	if waiting != 0 {
		t.Errorf("%d copies waiting after Close", waiting)
	}
}

// TestPipeCloseEndsWaits: Close ends a delay under way at once (its frame
// is not written, a note says so) and lets go of held frames (noted).
func TestPipeCloseEndsWaits(t *testing.T) {
	var host proctest.Buffer
	var c notesOf
	p := engine(t, "delay:to-host,id=1,ms=3600000", "reorder:to-host,id=2,ms=3600000").NewPipe(&proctest.Buffer{}, &host, &proctest.Buffer{}, 1024, Hooks{Note: c.hook})
	p.ToHost.Write([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.ToHost.Write([]byte(resp1 + "\n"))
	}()
	for !strings.Contains(c.text(), "delayed") {
		time.Sleep(time.Millisecond)
	}
	p.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the delay went on after Close")
	}
	if len(host.String()) != 0 || !strings.Contains(c.text(), "fault rule 1: the session ended during its delay: not written") || !strings.Contains(c.text(), "held 1 frame(s) to-host when the session ended: not written") {
		t.Errorf("host %q; notes:\n%s", host.String(), c.text())
	}
	if n, _ := p.ToHost.Write([]byte(resp1 + "\n")); n != len(resp1)+1 || len(host.String()) != 0 {
		t.Errorf("after Close: %d, host %q", n, host.String())
	}
}

// TestTrackingBounded: a request with an id longer than a rule's can be
// is not remembered, and a note cuts a long method.
func TestTrackingBounded(t *testing.T) {
	e := engine(t, "noise:to-server")
	long := strings.Repeat("m", 10000)
	eff := e.Apply(ToServer, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"%s","method":"%s"}`, long, long))
	if len(e.reqs[ToServer]) != 0 {
		t.Errorf("a request with a 10000-byte id was remembered")
	}
	if len(eff.Notes) != 1 || len(eff.Notes[0].Text) > 4*MaxValueBytes {
		t.Errorf("a note of %d bytes", len(eff.Notes[0].Text))
	}
}
