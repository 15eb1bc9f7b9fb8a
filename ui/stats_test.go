package ui

import (
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

func TestStatsRateAndErrors(t *testing.T) {
	var s stats
	t0 := time.Unix(1000, 0)
	var evs []client.Event
	for i := 0; i < 50; i++ {
		state := client.StateResolved
		if i%10 == 0 {
			state = client.StateTimeout
		}
		evs = append(evs, client.Event{Kind: client.EvRequest, Time: t0.Add(time.Duration(i) * 100 * time.Millisecond),
			Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(int64(i + 1)), State: state}})
	}
	evs = append(evs, client.Event{Kind: client.EvFrame, Time: t0, Frame: &client.FrameInfo{Verdict: client.VerdictMalformed}})
	s.apply(evs)
	if s.errors != 6 {
		t.Fatalf("errors %d, want 5 timeouts + 1 malformed", s.errors)
	}
	// At t0+5s the window (t0+0.25s, t0+5s] holds the outcomes at 0.3s ... 4.9s.
	if got := s.rate(t0.Add(5 * time.Second)); got < 9 || got > 10 {
		t.Fatalf("rate %.2f/s, want about 9.5", got)
	}
	if got := s.rate(t0.Add(time.Minute)); got != 0 {
		t.Fatalf("rate a minute later %.2f", got)
	}
}

// A tool result with isError counts as an error; the user's own cancel
// does not.
func TestStatsIsErrorAndCancel(t *testing.T) {
	var s stats
	f := client.NewInFrame([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`), t0)
	ok := client.NewInFrame([]byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":false}}`), t0)
	s.apply([]client.Event{
		{Kind: client.EvFrame, Time: t0, Frame: &client.FrameInfo{Frame: f, Verdict: client.VerdictResolved}},
		{Kind: client.EvRequest, Time: t0, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(1), State: client.StateResolved}},
		{Kind: client.EvFrame, Time: t0, Frame: &client.FrameInfo{Frame: ok, Verdict: client.VerdictResolved}},
		{Kind: client.EvRequest, Time: t0, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(2), State: client.StateResolved}},
		{Kind: client.EvRequest, Time: t0, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(3), State: client.StateCancelled}},
	})
	if s.errors != 1 {
		t.Fatalf("errors %d, want 1 (the isError result)", s.errors)
	}
}

// TestStatsErrorsOnARealSession: the status bar counts the isError call of
// a real session and not the user's cancel (client.Errored, as sonde stats
// and sonde replay's e).
func TestStatsErrorsOnARealSession(t *testing.T) {
	path := capturetest.Record(t, capturetest.Options{}, capturetest.Outcomes(t))
	var s stats
	s.apply(capturetest.Events(t, path))
	if s.errors != 1 {
		t.Fatalf("errors %d, want 1 (the isError call; the cancel is not an error)", s.errors)
	}
	if len(s.isError) != 0 {
		t.Fatalf("%d isError answers kept after their outcomes", len(s.isError))
	}
}
