package pending

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	flt "github.com/sonde-mcp/sonde/filter"
)

// query is the `/` filter of the pane, in the filter language
// (docs/filter.md): it narrows both views; the cursors count the rows
// that match.
type query struct {
	text   string
	lang   *flt.Filter
	err    string // why text is not a valid query (nothing matches)
	typing bool
	input  textinput.Model
	// live and hist are the indices of the matching rows of each view,
	// recomputed when stale.
	live, hist []int
	stale      bool
}

func newQuery() query {
	in := textinput.New()
	in.Prompt = "/ "
	in.SetStyles(textinput.DefaultStyles(true))
	return query{input: in}
}

// active reports whether rows are filtered.
func (q *query) active() bool { return q.text != "" }

// filtering reports whether the filter narrows the rows.
func (m *Model) filtering() bool { return m.q.active() }

// setQuery parses text; a mistake keeps the text and matches nothing.
func (m *Model) setQuery(text string) {
	m.q.text, m.q.lang, m.q.err = text, nil, ""
	if f, err := flt.Parse(text); err != nil {
		m.q.err = err.Error()
	} else {
		m.q.lang = f
	}
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
	if m.q.lang == nil {
		return
	}
	for i, e := range m.live {
		if it := item(e); m.q.lang.Match(&it) {
			m.q.live = append(m.q.live, i)
		}
	}
	for i := range m.hist.Len() {
		if it := item(m.hist.At(i)); m.q.lang.Match(&it) {
			m.q.hist = append(m.q.hist, i)
		}
	}
}

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

// filterKey handles a key while the query is typed: enter keeps it, esc
// clears it, anything else edits it.
func (m *Model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Clear):
		m.q.typing = false
		m.q.input.Blur()
		m.q.input.SetValue("")
		m.setQuery("")
	case key.Matches(msg, m.keys.Accept):
		m.q.typing = false
		m.q.input.Blur()
	default:
		var cmd tea.Cmd
		m.q.input, cmd = m.q.input.Update(msg)
		if v := m.q.input.Value(); v != m.q.text {
			m.setQuery(v)
		}
		return cmd
	}
	return nil
}

// openFilter starts typing a query.
func (m *Model) openFilter() tea.Cmd {
	m.q.typing = true
	m.q.input.SetValue(m.q.text)
	m.q.input.CursorEnd()
	return m.q.input.Focus()
}
