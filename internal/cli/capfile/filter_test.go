package capfile_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestFilterFlag: --filter on stats, lint and export keeps what the query
// matches, judging every event of a request by the request (a response by
// its request's method and outcome), and a bad query is a usage error
// that says where.
func TestFilterFlag(t *testing.T) {
	sample := filepath.Join(peertest.Root(), "testdata", "captures", "out-of-order-late-crash.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
		not  []string
	}{
		{"stats timeout", []string{"stats", "--filter", "status:timeout", sample}, 0,
			[]string{"tools/call echo         1         1", "1 request in"}, []string{"initialize", "crash"}},
		{"stats tool", []string{"stats", "--filter", "tool:crash", sample}, 0,
			[]string{"tools/call crash", "1 exited"}, []string{"echo"}},
		{"stats duration", []string{"stats", "--filter", "method:tools/call duration:>50ms status:resolved", sample}, 0,
			[]string{"tools/call echo         1         0"}, []string{"initialize", "crash"}},
		{"lint id", []string{"lint", "--filter", "id:4", sample}, 1,
			[]string{"id 4  late-response", "1 finding"}, []string{"not-json"}},
		{"lint nothing", []string{"lint", "--filter", "kind:notification", sample}, 0, nil, []string{"late-response", "not-json"}},
		{"export id", []string{"export", "--format", "text", "--filter", "id:3", sample}, 0,
			[]string{"tools/call echo [id 3]", "result [id 3]"}, []string{"[id 4]", "initialize"}},
		{"bad field", []string{"stats", "--filter", "methd:x", sample}, 2,
			[]string{`unknown field "methd"`, "at character 1"}, nil},
		{"bad duration", []string{"export", "--filter", "duration:>soon", sample}, 2,
			[]string{`"soon" is not a duration`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.RunSonde(t, "", tc.args...)
			out := r.Stdout + r.Stderr
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", r.Code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(r.Stdout, w) {
					t.Errorf("output has %q:\n%s", w, r.Stdout)
				}
			}
		})
	}
}
