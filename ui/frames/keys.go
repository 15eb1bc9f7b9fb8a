package frames

import (
	"charm.land/bubbles/v2/key"

	"github.com/sonde-mcp/sonde/ui/list"
)

// KeyMap holds the pane's bindings. Bindings that do not apply in the
// current mode (list, filter input, detail) are disabled.
type KeyMap struct {
	// KeyMap moves the selection; its Home and End go to the oldest and
	// newest frame (End also turns follow mode on); in the detail view, to
	// its top and bottom.
	list.KeyMap
	Follow key.Binding
	Filter key.Binding
	// Next and Prev jump to the next or previous error or protocol violation.
	Next, Prev key.Binding
	Open       key.Binding
	// HTTP shows or hides the rows of HTTP exchanges and stream events.
	HTTP key.Binding
	// Break asks the root to set a breakpoint from the selected frame
	// (BreakMsg); disabled where the session has no breakpoints.
	Break key.Binding
	// Copy copies the frame's JSON to the clipboard (OSC 52); Save writes
	// it to a file. Both act on the selected row, or the open frame.
	Copy, Save key.Binding
	// Clear drops the filter (list) or the query being typed (filter input).
	Clear key.Binding
	// Accept keeps the typed query and returns to the list.
	Accept key.Binding
	// Back leaves the detail view (esc, backspace; q is the root's quit,
	// which does nothing in a detail view).
	Back key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	nav := list.DefaultKeyMap()
	nav.PageUp.SetKeys("pgup", "ctrl+b")
	nav.PageDown.SetKeys("pgdown", "ctrl+f")
	nav.Home.SetHelp("g/home", "oldest")
	nav.End.SetKeys("G", "shift+g", "end")
	nav.End.SetHelp("G/end", "newest, follow")
	return KeyMap{
		KeyMap: nav,
		Follow: b([]string{"f"}, "f", "toggle follow"),
		Filter: b([]string{"/"}, "/", "filter"),
		Next:   b([]string{"n"}, "n", "next problem"),
		Prev:   b([]string{"N", "shift+n"}, "N", "prev problem"),
		Open:   b([]string{"enter"}, "enter", "open frame"),
		HTTP:   b([]string{"x"}, "x", "show/hide HTTP rows"),
		Break:  b([]string{"b"}, "b", "break on frames like this"),
		Copy:   b([]string{"y"}, "y", "copy frame JSON"),
		Save:   b([]string{"w"}, "w", "save frame to a file"),
		Clear:  b([]string{"esc"}, "esc", "clear filter"),
		Accept: b([]string{"enter"}, "enter", "keep filter"),
		Back:   b([]string{"esc", "backspace"}, "esc", "back to list"),
	}
}

// ShortHelp lists the main bindings of the current mode.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.Filter, k.Follow, k.Next, k.Prev, k.Accept, k.Clear, k.Up, k.Down, k.Back}
}

// FullHelp lists every binding, grouped.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Bindings(),
		{k.Follow, k.Next, k.Prev, k.Open, k.HTTP, k.Break, k.Copy, k.Save, k.Back},
		{k.Filter, k.Accept, k.Clear},
	}
}

// syncKeys enables the bindings of the current mode.
func (m *Model) syncKeys() {
	k := &m.keys
	list, detail := m.mode == modeList, m.mode == modeDetail
	k.KeyMap.SetEnabled(list || detail)
	for _, b := range []*key.Binding{&k.Follow, &k.Filter, &k.Next, &k.Prev, &k.Open, &k.HTTP} {
		b.SetEnabled(list)
	}
	k.Break.SetEnabled(list && m.breaks)
	k.Copy.SetEnabled(list || detail)
	k.Save.SetEnabled(list || detail)
	k.Clear.SetEnabled(m.mode == modeFilter || (list && m.flt.active()))
	k.Accept.SetEnabled(m.mode == modeFilter)
	k.Back.SetEnabled(detail)
	if detail {
		k.Home.SetHelp("g/home", "top")
		k.End.SetHelp("G/end", "bottom")
	} else {
		k.Home.SetHelp("g/home", "oldest")
		k.End.SetHelp("G/end", "newest, follow")
	}
	if m.mode == modeFilter {
		k.Clear.SetHelp("esc", "clear query")
	} else {
		k.Clear.SetHelp("esc", "clear filter")
	}
}
