package stderr

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/ui/list"
)

// KeyMap holds the pane's bindings. Home goes to the oldest line; End
// follows new output.
type KeyMap struct {
	list.KeyMap
	Wrap key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	nav := list.DefaultKeyMap()
	nav.Home.SetHelp("g", "oldest")
	nav.End.SetHelp("G", "follow")
	return KeyMap{
		KeyMap: nav,
		Wrap:   key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "soft wrap")),
	}
}

// ShortHelp returns the bindings shown in the help bar.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.End, k.Wrap} }

// FullHelp returns every binding, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown}, {k.Home, k.End, k.Wrap}}
}

// Keys returns the pane's key map for the help bar.
func (m *Model) Keys() help.KeyMap { return m.keys }

// Update handles keys and the mouse wheel while the pane has focus.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := m.keys
		switch {
		case key.Matches(msg, k.Up):
			m.up(1)
		case key.Matches(msg, k.Down):
			m.down(1)
		case key.Matches(msg, k.PageUp):
			m.up(max(m.h, 1))
		case key.Matches(msg, k.PageDown):
			m.down(max(m.h, 1))
		case key.Matches(msg, k.Home):
			lo, _ := m.bounds()
			m.top = pos{lo, 0}
			m.follow = m.atBottom()
		case key.Matches(msg, k.End):
			m.follow = true
		case key.Matches(msg, k.Wrap):
			m.wrap = !m.wrap
			m.top.sub = 0
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.up(3)
		case tea.MouseWheelDown:
			m.down(3)
		}
	}
	return nil
}

// up scrolls n rows towards older output and stops following.
func (m *Model) up(n int) {
	if m.follow {
		m.top, m.follow = m.bottom(), false
	}
	m.top = m.clamp(m.top)
	lo, _ := m.bounds()
	for ; n > 0; n-- {
		if m.top.sub > 0 {
			m.top.sub--
		} else if m.top.line > lo {
			m.top.line--
			m.top.sub = max(len(m.rowsOf(m.top.line))-1, 0)
			if m.top.sub == 0 && len(m.rowsOf(m.top.line)) == 0 {
				n++ // another server's line, not shown: no row scrolled
			}
		} else {
			break
		}
	}
	m.follow = m.atBottom()
}

// down scrolls n rows towards newer output; reaching the end follows again.
func (m *Model) down(n int) {
	if m.follow {
		return
	}
	m.top = m.clamp(m.top)
	_, hi := m.bounds()
	for ; n > 0; n-- {
		if m.top.sub+1 < len(m.rowsOf(m.top.line)) {
			m.top.sub++
		} else if m.top.line+1 < hi {
			m.top = pos{m.top.line + 1, 0}
			if len(m.rowsOf(m.top.line)) == 0 {
				n++ // another server's line, not shown: no row scrolled
			}
		} else {
			break
		}
	}
	m.follow = m.atBottom()
}
