package tools

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"

	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/list"
)

// KeyMap are the pane's bindings. Bindings of other modes are disabled, so
// the help bar shows what applies now.
type KeyMap struct {
	// KeyMap moves the selection in the list and scrolls the result view.
	list.KeyMap
	// Filter focuses the fuzzy filter (the only way to start one: a letter
	// typed in the list does nothing); while it is focused every printable
	// key is typed into it. ClearFilter empties it; AcceptFilter leaves it
	// keeping its query, back in the list.
	Filter, ClearFilter, AcceptFilter key.Binding
	// Call opens the argument form of the selected tool (in the result
	// view: of the result's tool).
	Call key.Binding
	// Refresh asks the root to run tools/list again (RefreshMsg).
	Refresh key.Binding
	// Older and Newer step through the kept results (from the list they
	// open the newest).
	Older, Newer key.Binding
	// Back leaves the result view.
	Back key.Binding
	// Raw switches the result view between the drawn result and its raw
	// JSON.
	Raw key.Binding
	// CopyCall copies a call (the result's, or the selected tool's last)
	// as a sonde call command line, through OSC 52.
	CopyCall key.Binding
	// Form are the argument form's bindings.
	Form form.KeyMap
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		KeyMap:       list.DefaultKeyMap().WithEnds("top", "bottom"),
		Filter:       key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		AcceptFilter: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
		Call:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "call…")),
		Refresh:      key.NewBinding(key.WithKeys("ctrl+l"), key.WithHelp("ctrl+l", "refresh list")),
		Older:        key.NewBinding(key.WithKeys("["), key.WithHelp("[", "older result")),
		Newer:        key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "newer result")),
		Back:         key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Raw:          key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "raw JSON")),
		CopyCall:     key.NewBinding(key.WithKeys("Y"), key.WithHelp("Y", "copy as sonde call")),
		Form:         form.DefaultKeyMap(),
	}
}

// syncKeys enables the bindings of the current mode and disables the rest.
func (m *Model) syncKeys() {
	k := &m.keys
	list, filter, result := m.mode == modeList, m.mode == modeFilter, m.mode == modeResult
	move := list || filter || result
	k.KeyMap.SetEnabled(move)
	k.Filter.SetEnabled(list && len(m.tools) > 0)
	k.ClearFilter.SetEnabled(filter || (list && m.query != ""))
	k.AcceptFilter.SetEnabled(filter)
	k.Call.SetEnabled((list && len(m.visible) > 0) || (result && m.current() != nil))
	k.Refresh.SetEnabled(list || result)
	k.Older.SetEnabled((list && m.results.Len() > 0) || (result && m.cur > 0))
	k.Newer.SetEnabled((list && m.results.Len() > 0) || (result && m.cur < m.results.Len()-1))
	k.Back.SetEnabled(result)
	k.Raw.SetEnabled(result && m.current() != nil)
	_, _, called := m.callToCopy()
	k.CopyCall.SetEnabled(called)
	if m.raw {
		k.Raw.SetHelp("r", "drawn result")
	} else {
		k.Raw.SetHelp("r", "raw JSON")
	}
	if m.form != nil {
		k.Form = m.form.Keys()
	} else {
		k.Form = m.formKeys
		k.Form.SetEnabled(false)
	}
}

// Keys returns the pane's bindings for the help bar.
func (m *Model) Keys() help.KeyMap {
	m.syncKeys()
	return helpKeys(m.keys)
}

type helpKeys KeyMap

// ShortHelp lists the main bindings; disabled ones are not shown.
func (k helpKeys) ShortHelp() []key.Binding {
	f := k.Form
	return []key.Binding{k.Call, k.Filter, k.AcceptFilter, k.ClearFilter, k.Back, k.Raw, k.CopyCall, k.Older, k.Newer, k.Refresh,
		f.Submit, f.Enter, f.Next, f.Toggle, f.CycleNext, f.RawJSON, f.Cancel}
}

// FullHelp lists every binding, grouped.
func (k helpKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Bindings(),
		{k.Filter, k.AcceptFilter, k.ClearFilter, k.Call, k.Refresh},
		{k.Older, k.Newer, k.Raw, k.CopyCall, k.Back},
		k.Form.All(),
	}
}
