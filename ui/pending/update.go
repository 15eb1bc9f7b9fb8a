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
	}
}

// ShortHelp returns the bindings shown in the help bar.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Cancel, k.Frames, k.History}
}

// FullHelp returns every binding, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Bindings(),
		{k.Cancel, k.Answer, k.Frames, k.History},
	}
}

// Keys returns the pane's key map for the help bar.
func (m *Model) Keys() help.KeyMap { return m.keys }

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
	return cmd
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	if d, ok := k.Delta(msg, m.page()); ok {
		m.move(d)
		return nil
	}
	switch {
	case key.Matches(msg, k.History):
		m.history = !m.history
		k.Cancel.SetEnabled(!m.history)
		k.Answer.SetEnabled(!m.history)
	case key.Matches(msg, k.Cancel):
		e := m.selected()
		if e == nil || e.key.dir != client.Out || e.state.Final() {
			return nil
		}
		if id, ok := e.key.id.Int64(); ok {
			return func() tea.Msg { return CancelMsg{ID: id} }
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
			return func() tea.Msg { return AnswerMsg{ID: id} }
		}
	case key.Matches(msg, k.Frames):
		if e := m.selected(); e != nil && e.key.id.IsValid() {
			id, dir := e.key.id, e.key.dir
			return func() tea.Msg { return ShowFramesMsg{ID: id, Dir: dir} }
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

// rows is the number of rows of the current view.
func (m *Model) rows() int {
	if m.history {
		return m.hist.Len()
	}
	return len(m.live)
}

// page is the number of rows one screen shows (below the header).
func (m *Model) page() int { return max(m.h-1, 1) }

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
	if m.history {
		return m.hist.At(c.sel)
	}
	return m.live[c.sel]
}

// scroll clamps both cursors and keeps each selection on screen.
func (m *Model) scroll() {
	m.lv.clamp(len(m.live), m.page())
	m.hv.clamp(m.hist.Len(), m.page())
}

// clamp keeps sel within n rows and on a screen of page rows.
func (c *cursor) clamp(n, page int) {
	c.sel = list.Clamp(c.sel, n)
	c.off = list.Scroll(c.off, c.sel, n, page)
}
