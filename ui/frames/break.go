package frames

import (
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/list"
)

// BreakMsg asks the root to set a breakpoint (a filter query) from the
// frame selected: `b` in the list.
type BreakMsg struct{ Expr string }

// SetBreaks enables `b` (the session can hold frames) or disables it.
func (m *Model) SetBreaks(on bool) { m.breaks = on; m.syncKeys() }

// breakCmd is `b` on the selected frame: frames like it, the same way, of
// the same kind, for the same tool (or method); a response by its
// request's.
func (m *Model) breakCmd() tea.Cmd {
	if m.count() == 0 {
		return nil
	}
	e := m.ring.at(m.absAt(m.indexOf(m.sel)))
	if e == nil || e.f == nil || e.h != nil {
		return nil
	}
	it := m.frameItem(e)
	kind := it.Kind
	if e.f.Msg.Kind == jsonrpc.KindInvalid || e.f.Err != nil {
		kind = ""
	}
	q := list.BreakQuery(e.f.Dir.String(), kind, it.Method, it.Tool)
	return func() tea.Msg { return BreakMsg{Expr: q} }
}
