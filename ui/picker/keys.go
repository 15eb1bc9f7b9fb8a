package picker

import (
	"fmt"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"

	"github.com/sonde-mcp/sonde/ui/list"
)

// KeyMap are the picker's bindings. Those of the other mode (list or
// filter) are disabled, so the help line shows what applies now.
type KeyMap struct {
	// KeyMap moves the selection.
	list.KeyMap
	// Start picks the selected server, or the marked ones together.
	Start key.Binding
	// Mark marks (or unmarks) the selected server, to open several at once.
	Mark key.Binding
	// Filter starts typing a filter; ClearFilter empties it and goes back
	// to the list.
	Filter, ClearFilter key.Binding
	// QuitList quits from the list (esc, q); Quit quits from anywhere.
	QuitList, Quit key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	nav := list.DefaultKeyMap()
	nav.Up.SetKeys("up", "k", "ctrl+p")
	nav.Down.SetKeys("down", "j", "ctrl+n")
	return KeyMap{
		KeyMap:      nav,
		Start:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "start")),
		Mark:        key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "mark (several)")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		QuitList:    key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc/q", "quit")),
		Quit:        key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

// syncKeys enables the bindings of the current mode. In the filter, the
// letters type: only the arrows (and ctrl+p/ctrl+n) move.
func (m *Model) syncKeys() {
	k := &m.keys
	k.Typing(m.filtering)
	for _, b := range []*key.Binding{&k.Filter, &k.QuitList, &k.Mark} {
		b.SetEnabled(!m.filtering)
	}
	k.ClearFilter.SetEnabled(m.filtering)
	k.Start.SetEnabled(len(m.visible) > 0 || len(m.marked) > 0)
	if len(m.marked) > 0 {
		k.Start.SetHelp("enter", fmt.Sprintf("start the %d marked", len(m.marked)))
	} else {
		k.Start.SetHelp("enter", "start")
	}
}

// Keys returns the bindings for the help line.
func (m *Model) Keys() help.KeyMap {
	m.syncKeys()
	return helpKeys(m.keys)
}

type helpKeys KeyMap

// ShortHelp lists the main bindings; disabled ones are not shown.
func (k helpKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Start, k.Mark, k.Up, k.Down, k.Filter, k.ClearFilter, k.QuitList, k.Quit}
}

// FullHelp lists every binding.
func (k helpKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Bindings(), {k.Start, k.Mark, k.Filter, k.ClearFilter, k.QuitList, k.Quit}}
}
