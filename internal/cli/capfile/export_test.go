package capfile_test

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

func TestExportCommand(t *testing.T) {
	path := recordCall(t)
	r := clitest.RunSonde(t, "", "export", "--mermaid", path)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "sequenceDiagram\n    participant C as sonde\n    participant S as sonde-fixture\n") ||
		!strings.Contains(r.Stdout, "    C->>S: tools/call echo [id 2]\n") || !strings.Contains(r.Stdout, "    S-->>C: result [id 2] ") {
		t.Errorf("export --mermaid: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "export", "--format", "text", "--width", "70", "--to", "#3", path)
	if r.Code != 0 || strings.Contains(r.Stdout, "tools/call") || !strings.Contains(r.Stdout, "│─ initialize [id 1] ─") || !strings.Contains(r.Stdout, "window from the start to event 3: events 1 to 3") {
		t.Errorf("export --format text: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, args := range [][]string{
		{"--from", "soon"}, {"--to", "-1s"}, {"--format", "svg"}, {"--mermaid", "--format", "text"}, {"--width", "10"},
	} {
		if r := clitest.RunSonde(t, "", append(append([]string{"export"}, args...), path)...); r.Code != 2 || r.Stdout != "" {
			t.Errorf("export %v: %d %q", args, r.Code, r.Stderr)
		}
	}
}
