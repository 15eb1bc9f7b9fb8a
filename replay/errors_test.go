package replay_test

import (
	"slices"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// TestProblemsAreClientErrored: on a real session, e (NextProblem) stops
// at the isError call's outcome and not at the user's cancel
// (client.Errored, the one definition of an error).
func TestProblemsAreClientErrored(t *testing.T) {
	path := capturetest.Record(t, capturetest.Options{}, capturetest.Outcomes(t))
	tl := open(t, path)
	all := capturetest.Events(t, path)
	var isError, cancel int = -1, -1
	for i, ev := range all {
		if ev.Kind != client.EvRequest || ev.Req.Dir != client.Out {
			continue
		}
		switch {
		case ev.Req.Tool == "tool-error" && ev.Req.State == client.StateResolved:
			isError = i
		case ev.Req.State == client.StateCancelled:
			cancel = i
		}
	}
	if isError < 0 || cancel < 0 {
		t.Fatalf("the capture lacks the isError outcome (%d) or the cancel (%d)", isError, cancel)
	}
	var got []int
	for p := tl.NextProblem(0); p >= 0; p = tl.NextProblem(p + 1) {
		got = append(got, p)
	}
	if !slices.Contains(got, isError) {
		t.Errorf("problems %v lack the isError outcome at %d", got, isError)
	}
	if slices.Contains(got, cancel) {
		t.Errorf("problems %v hold the user's cancel at %d", got, cancel)
	}
}
