package form

import "charm.land/bubbles/v2/key"

// KeyMap are the form's bindings. Bindings that do not apply to the current
// mode or to the focused field are disabled by Form.Keys.
type KeyMap struct {
	// Next and Prev move between fields (fields mode).
	Next, Prev key.Binding
	// Enter moves to the next field, or submits on the last one.
	Enter key.Binding
	// Toggle flips a boolean field.
	Toggle key.Binding
	// CycleNext and CyclePrev step through the choices of an enum field.
	CycleNext, CyclePrev key.Binding
	// Submit validates and sends from any field or from the JSON editor.
	Submit key.Binding
	// RawJSON switches between the fields and the raw JSON editor.
	RawJSON key.Binding
	// Cancel closes the form without sending.
	Cancel key.Binding
}

// DefaultKeyMap returns the form's default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Next:      key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab/↓", "next field")),
		Prev:      key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab/↑", "previous field")),
		Enter:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next / call")),
		Toggle:    key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "toggle")),
		CycleNext: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next choice")),
		CyclePrev: key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "previous choice")),
		Submit:    key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "call")),
		RawJSON:   key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "fields/JSON")),
		Cancel:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

// All returns every binding, in help order.
func (k KeyMap) All() []key.Binding {
	return []key.Binding{k.Submit, k.Enter, k.Next, k.Prev, k.Toggle, k.CycleNext, k.CyclePrev, k.RawJSON, k.Cancel}
}

// SetEnabled enables or disables every binding.
func (k *KeyMap) SetEnabled(on bool) {
	for _, b := range []*key.Binding{&k.Next, &k.Prev, &k.Enter, &k.Toggle, &k.CycleNext, &k.CyclePrev, &k.Submit, &k.RawJSON, &k.Cancel} {
		b.SetEnabled(on)
	}
}
