package answer

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

// KeyMap holds a dialog's bindings; those that do not apply to its kind
// are disabled.
type KeyMap struct {
	// Accept sends the answer (sampling: the text written; elicitation:
	// accept, with the form's content in form mode).
	Accept key.Binding
	// Decline declines an elicitation, or refuses a sampling request with
	// a JSON-RPC error.
	Decline key.Binding
	// Cancel answers an elicitation with cancel (sampling: refuses it).
	Cancel key.Binding
	// Later closes the dialog and leaves the request waiting.
	Later key.Binding
	// Switch moves between the answer text and the model name (sampling).
	Switch key.Binding
	// Copy puts the URL on the clipboard (URL mode; OSC 52).
	Copy key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Accept:  key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "accept")),
		Decline: key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "decline")),
		Cancel:  key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "cancel")),
		Later:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "answer later")),
		Switch:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "answer/model")),
		Copy:    key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy URL")),
	}
}

func (k *KeyMap) setKind(kind Kind) {
	k.Switch.SetEnabled(kind == Sampling)
	k.Copy.SetEnabled(kind == URL)
	if kind == Sampling {
		k.Accept.SetHelp("ctrl+s", "send")
		k.Decline.SetHelp("ctrl+x", "refuse")
		k.Cancel.SetEnabled(false) // refusing is all a sampling request can be
	}
	if kind == URL {
		k.Accept.SetKeys("ctrl+s", "a")
		k.Accept.SetHelp("a", "accept (opened)")
		k.Decline.SetKeys("ctrl+x", "d")
		k.Decline.SetHelp("d", "decline")
		k.Cancel.SetKeys("ctrl+o", "c")
		k.Cancel.SetHelp("c", "cancel")
	}
}

// ShortHelp returns the bindings shown in the help bar.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Accept, k.Decline, k.Cancel, k.Switch, k.Copy, k.Later}
}

// FullHelp returns every binding.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// Keys returns the dialog's bindings for the help bar; in form mode the
// form's own keys come first.
func (d *Dialog) Keys() help.KeyMap {
	if d.kind != Form {
		return d.keys
	}
	fk := d.form.Keys()
	return keyList{fk.Submit, fk.Next, fk.Toggle, fk.CycleNext, d.keys.Decline, d.keys.Cancel, fk.Cancel}
}

// keyList is a help.KeyMap of a flat list of bindings.
type keyList []key.Binding

func (l keyList) ShortHelp() []key.Binding  { return l }
func (l keyList) FullHelp() [][]key.Binding { return [][]key.Binding{l} }
