package pending

import (
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	flt "github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/ui/list"
)

// query is the `/` filter of the pane, in the filter language
// (docs/filter.md): it narrows both views; the cursors count the rows
// that match.
type query struct {
	list.Query
	// live and hist are the indices of the matching rows of each view,
	// recomputed when stale.
	live, hist []int
	stale      bool
}

// filtering reports whether the filter narrows the rows.
func (m *Model) filtering() bool { return m.q.Active() || m.only != "" }

// setQuery sets the query's text; the cursors start again.
func (m *Model) setQuery(text string) {
	m.q.Set(text)
	m.q.stale = true
	m.lv, m.hv = cursor{}, cursor{}
}

// index recomputes the matching rows of both views when stale.
func (m *Model) index() {
	if !m.q.stale {
		return
	}
	m.q.stale = false
	m.q.live, m.q.hist = m.q.live[:0], m.q.hist[:0]
	for i, e := range m.live {
		if it := item(e); m.shows(e) && m.q.Match(&it) {
			m.q.live = append(m.q.live, i)
		}
	}
	for i := range m.hist.Len() {
		if e := m.hist.At(i); m.shows(e) {
			if it := item(e); m.q.Match(&it) {
				m.q.hist = append(m.q.hist, i)
			}
		}
	}
}

// shows reports whether e is of the server shown (SetServer).
func (m *Model) shows(e *entry) bool { return m.only == "" || e.server == m.only }

// item is what the filter language sees of a row: its method, tool, id,
// direction, state, latency once settled, and its error text as payload.
func item(e *entry) flt.Item {
	it := flt.Item{Method: e.method, Tool: e.tool, Dir: e.key.dir.String(), Kind: "request",
		Status: []string{string(e.state)}, IsError: e.isError, Payload: []byte(e.err)}
	if e.key.id.IsValid() {
		it.ID = e.key.id.String()
	}
	if e.isError {
		it.Status = append(it.Status, "isError")
	}
	if e.state.Final() {
		it.Duration, it.HasDuration = e.latency, e.state != client.StateRejected
		switch e.state {
		case client.StateResolved, client.StateRetried, client.StateAnswered:
		default:
			it.Failed = true
		}
	}
	return it
}

// filterKey handles a key while the query is typed.
func (m *Model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	changed, cmd := m.q.Key(msg, m.keys.Accept, m.keys.Clear)
	if changed {
		m.q.stale = true
		m.lv, m.hv = cursor{}, cursor{}
	}
	return cmd
}
