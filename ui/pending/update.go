package pending

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/list"
)

// KeyMap holds the pane's bindings.
type KeyMap struct {
	list.KeyMap
	// Cancel is disabled in the history view.
	Cancel, Frames, History key.Binding
	// Answer opens the dialog of a request from the server that waits.
	Answer key.Binding
	// Break sets a breakpoint on the answers to requests like the one
	// selected (BreakMsg); disabled where the session has no breakpoints.
	Break key.Binding
	// Filter types a query in the filter language; Clear drops it (esc),
	// Accept keeps it (enter, while typing).
	Filter, Clear, Accept key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	nav := list.DefaultKeyMap()
	nav.Home.SetHelp("g", "first")
	nav.End.SetHelp("G", "last")
	return KeyMap{
		KeyMap:  nav,
		Cancel:  key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel request")),
		Frames:  key.NewBinding(key.WithKeys("enter", "f"), key.WithHelp("enter/f", "show frames")),
		History: key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "live/history")),
		Answer:  key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "answer server request")),
		Break:   key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "break on answers like this")),
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Clear:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Accept:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
	}
}

// ShortHelp returns the bindings shown in the help bar.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Cancel, k.Frames, k.History, k.Filter, k.Accept, k.Clear}
}

// FullHelp returns every binding, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Bindings(),
		{k.Cancel, k.Answer, k.Frames, k.History, k.Break},
		{k.Filter, k.Accept, k.Clear},
	}
}

// syncKeys enables the bindings of the current mode: while a query is
// typed, only enter and esc; in the history view, no cancel or answer.
func (m *Model) syncKeys() {
	k := &m.keys
	typing := m.q.Typing
	k.KeyMap.SetEnabled(!typing)
	for _, b := range []*key.Binding{&k.Frames, &k.History, &k.Filter} {
		b.SetEnabled(!typing)
	}
	k.Break.SetEnabled(!typing && m.breaks)
	k.Cancel.SetEnabled(!typing && !m.history)
	k.Answer.SetEnabled(!typing && !m.history)
	k.Accept.SetEnabled(typing)
	k.Clear.SetEnabled(typing || m.q.Active())
}

// Keys returns the pane's key map for the help bar.
func (m *Model) Keys() help.KeyMap { m.syncKeys(); return m.keys }

// Update handles keys and mouse messages while the pane has focus.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		cmd = m.key(msg)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.move(-3)
		case tea.MouseWheelDown:
			m.move(3)
		}
	case tea.MouseClickMsg:
		if c := m.cur(); msg.Button == tea.MouseLeft && msg.Y >= 1 && c.off+msg.Y-1 < m.rows() {
			c.sel = c.off + msg.Y - 1
		}
	}
	m.scroll()
	m.syncKeys()
	return cmd
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	m.syncKeys()
	if m.q.Typing {
		return m.filterKey(msg)
	}
	if d, ok := k.Delta(msg, m.page()); ok {
		m.move(d)
		return nil
	}
	switch {
	case key.Matches(msg, k.Filter):
		return m.q.Open()
	case key.Matches(msg, k.Clear):
		m.setQuery("")
	case key.Matches(msg, k.History):
		m.history = !m.history
	case key.Matches(msg, k.Cancel):
		e := m.selected()
		if e == nil || e.key.dir != client.Out || e.state.Final() {
			return nil
		}
		if id, ok := e.key.id.Int64(); ok {
			srv := e.server
			return func() tea.Msg { return CancelMsg{ID: id, Server: srv} }
		}
		return cancelTask(e)
	case key.Matches(msg, k.Answer):
		if e := m.selected(); e != nil && e.key.dir == client.In && !e.state.Final() {
			id := e.key.id
			if s, ok := id.Str(); ok && e.method == taskMethod {
				// A task sonde runs for the server: its request waits as
				// "task:<taskId>" (client.ServerRequests.Tasks).
				id = jsonrpc.String("task:" + s)
			}
			srv := e.server
			return func() tea.Msg { return AnswerMsg{ID: id, Server: srv} }
		}
	case key.Matches(msg, k.Break):
		if e := m.selected(); e != nil && e.method != "" {
			q := breakQuery(e.key.dir, e.method, e.tool)
			return func() tea.Msg { return BreakMsg{Expr: q} }
		}
	case key.Matches(msg, k.Frames):
		if e := m.selected(); e != nil && e.key.id.IsValid() {
			id, dir, srv := e.key.id, e.key.dir, e.server
			return func() tea.Msg { return ShowFramesMsg{ID: id, Dir: dir, Server: srv} }
		}
	}
	return nil
}

// cur is the cursor of the current view.
func (m *Model) cur() *cursor {
	if m.history {
		return &m.hv
	}
	return &m.lv
}

// rows is the number of rows of the current view (that match the filter).
func (m *Model) rows() int {
	if m.filtering() {
		m.index()
		if m.history {
			return len(m.q.hist)
		}
		return len(m.q.live)
	}
	if m.history {
		return m.hist.Len()
	}
	return len(m.live)
}

// at returns row i of the current view (0 <= i < rows()).
func (m *Model) at(i int) *entry {
	if m.filtering() {
		m.index()
		if m.history {
			i = m.q.hist[i]
		} else {
			i = m.q.live[i]
		}
	}
	if m.history {
		return m.hist.At(i)
	}
	return m.live[i]
}

// page is the number of rows one screen shows (below the header, above
// the filter's bar).
func (m *Model) page() int { return max(m.h-1-m.barLines(), 1) }

// barLines is 1 while the filter's bar shows.
func (m *Model) barLines() int {
	if m.q.Typing || m.q.Active() {
		return 1
	}
	return 0
}

func (m *Model) move(n int) {
	c := m.cur()
	c.sel = list.Clamp(c.sel+n, m.rows())
}

// selected returns the selected row, or nil.
func (m *Model) selected() *entry {
	c := m.cur()
	if c.sel < 0 || c.sel >= m.rows() {
		return nil
	}
	return m.at(c.sel)
}

// scroll clamps both cursors and keeps each selection on screen.
func (m *Model) scroll() {
	if m.filtering() {
		m.index()
		m.lv.clamp(len(m.q.live), m.page())
		m.hv.clamp(len(m.q.hist), m.page())
		return
	}
	m.lv.clamp(len(m.live), m.page())
	m.hv.clamp(m.hist.Len(), m.page())
}

// clamp keeps sel within n rows and on a screen of page rows.
func (c *cursor) clamp(n, page int) {
	c.sel = list.Clamp(c.sel, n)
	c.off = list.Scroll(c.off, c.sel, n, page)
}
