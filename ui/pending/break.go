package pending

import (
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/ui/list"
)

// BreakMsg asks the root to set a breakpoint (a filter query) from the
// row selected: `b`.
type BreakMsg struct{ Expr string }

// SetBreaks enables `b` (the session can hold frames) or disables it.
func (m *Model) SetBreaks(on bool) { m.breaks = on; m.syncKeys() }

// breakQuery is the breakpoint `b` sets on a row: the answers to requests
// like it (same tool, or same method; results and errors), coming back the other way: a call
// of sonde's holds the server's answers (dir:in), a request of the
// server's holds sonde's (dir:out).
func breakQuery(dir client.Direction, method, tool string) string {
	back := client.In
	if dir == client.In {
		back = client.Out
	}
	return list.BreakQuery(back.String(), "", method, tool)
}
