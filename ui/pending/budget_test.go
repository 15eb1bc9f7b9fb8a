package pending

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// TestBudget: a row shows its request's own timeout and, when progress
// restarts the deadline, the total time left of its cap; neither when
// the queued event carries no budget.
func TestBudget(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(140, 6)
	m.SetNow(t0)
	plain := queued(0, 1, "tools/call", "slow", 30000)
	plain.Req.Timeout = 30 * time.Second
	reset := queued(0, 2, "tools/call", "export", 30000)
	reset.Req.Timeout, reset.Req.MaxEnd = 30*time.Second, at(300000)
	none := queued(0, 3, "tools/call", "old", 30000)
	m.Apply([]client.Event{plain, reset, none})
	m.SetNow(at(12000))
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	for i, want := range []string{"of 30s", "of 30s ↻ 4m48s of 5m0s", ""} {
		row := strings.TrimRight(lines[1+i], " ")
		if want == "" {
			if strings.Contains(row, " of ") {
				t.Errorf("row %d %q shows a budget it was not given", i+1, row)
			}
		} else if !strings.HasSuffix(row, want) {
			t.Errorf("row %d %q, want it to end with %q", i+1, row, want)
		}
	}
}
