package list

import (
	"testing"

	"github.com/sonde-mcp/sonde/filter"
)

// BreakQuery builds queries the filter language parses back: a value with
// a space or a colon quoted, one it cannot carry left out.
func TestBreakQuery(t *testing.T) {
	for _, c := range []struct {
		name                    string
		dir, kind, method, tool string
		want                    string
	}{
		{"tool", "in", "response", "tools/call", "search", "dir:in kind:response tool:search"},
		{"method", "out", "", "sampling/createMessage", "", "dir:out method:sampling/createMessage"},
		{"spaced tool", "in", "", "tools/call", "my tool", `dir:in tool:"my tool"`},
		{"quote in tool", "in", "", "tools/call", `a"b`, "dir:in method:tools/call"},
		{"nothing named", "in", "notification", "", "", "dir:in kind:notification"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := BreakQuery(c.dir, c.kind, c.method, c.tool)
			if got != c.want {
				t.Fatalf("BreakQuery = %q, want %q", got, c.want)
			}
			if _, err := filter.Parse(got); err != nil {
				t.Fatalf("%q does not parse: %v", got, err)
			}
		})
	}
}
