package stats

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// TestErrorsAreClientErrored: on a real session, the isError call is an
// error and the user's cancel is not (client.Errored, the one definition).
func TestErrorsAreClientErrored(t *testing.T) {
	path := capturetest.Record(t, capturetest.Options{}, capturetest.Outcomes(t))
	r := collect(capturetest.Events(t, path))
	got := map[string][2]int{} // tool -> count, errors
	for _, m := range r.Methods {
		if m.Method == "tools/call" {
			got[m.Tool] = [2]int{m.Count, m.Errors}
		}
	}
	if g := got["tool-error"]; g != [2]int{1, 1} {
		t.Errorf("tool-error (isError): count, errors %v, want 1, 1", g)
	}
	if g := got["echo"]; g != [2]int{2, 0} {
		t.Errorf("echo (one cancelled, one resolved): count, errors %v, want 2, 0", g)
	}
}
