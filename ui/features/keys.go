package features

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"

	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/list"
)

// KeyMap holds the pane's bindings; those of other views are disabled, so
// the help bar shows what applies.
type KeyMap struct {
	// The movement bindings: Up and Down move the selection, Home and End
	// go to the first and the last row, PageUp and PageDown scroll the
	// detail.
	list.KeyMap
	// NextView and PrevView cycle Resources, Prompts and Log; Resources,
	// Prompts and Log go to one.
	NextView, PrevView, Resources, Prompts, Log key.Binding
	// Open reads the selected resource, or opens the form of a template or
	// prompt.
	Open key.Binding
	// Subscribe toggles the subscription of the selected resource.
	Subscribe key.Binding
	// Save writes the shown contents to a file.
	Save key.Binding
	// Refresh lists resources, templates and prompts again.
	Refresh key.Binding
	// LevelUp and LevelDown move the log's level threshold; Logger cycles
	// the logger filter; SetLevel sends the threshold to the server.
	LevelUp, LevelDown, Logger, SetLevel key.Binding
	// Complete asks for completions of the focused form field.
	Complete key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	nav := list.DefaultKeyMap()
	nav.PageUp.SetHelp("pgup", "scroll detail up")
	nav.PageDown.SetHelp("pgdn", "scroll detail down")
	return KeyMap{
		KeyMap:    nav,
		NextView:  key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "next view")),
		PrevView:  key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "previous view")),
		Resources: key.NewBinding(key.WithKeys("U"), key.WithHelp("U", "resources (by URI)")),
		Prompts:   key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "prompts")),
		Log:       key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "log")),
		Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "read/get…")),
		Subscribe: key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "(un)subscribe")),
		Save:      key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "save contents")),
		Refresh:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh lists")),
		LevelUp:   key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "raise level")),
		LevelDown: key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "lower level")),
		Logger:    key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "filter by next logger")),
		SetLevel:  key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "set server level")),
		Complete:  key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "complete")),
	}
}

// syncKeys enables the bindings of the current view.
func (m *Model) syncKeys() {
	k := &m.keys
	res, prm, lg := m.view == ViewResources, m.view == ViewPrompts, m.view == ViewLog
	k.Open.SetEnabled((res || prm) && m.selected() != nil)
	sel := m.selected()
	k.Subscribe.SetEnabled(res && sel != nil && sel.resource != nil)
	k.Save.SetEnabled(!lg && m.blob != nil)
	k.Refresh.SetEnabled(!lg && m.loaded)
	for _, b := range []*key.Binding{&k.LevelUp, &k.LevelDown, &k.Logger, &k.SetLevel} {
		b.SetEnabled(lg)
	}
	k.Complete.SetEnabled(m.form != nil && m.hasCompletions)
}

// ShortHelp returns the bindings of the help line.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextView, k.Open, k.Subscribe, k.Save, k.LevelUp, k.LevelDown, k.Logger, k.SetLevel}
}

// FullHelp returns every binding, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Bindings(),
		{k.NextView, k.PrevView, k.Resources, k.Prompts, k.Log},
		{k.Open, k.Subscribe, k.Save, k.Refresh},
		{k.LevelUp, k.LevelDown, k.Logger, k.SetLevel},
	}
}

// Keys returns the pane's key map for the help bar; with a form open, the
// form's.
func (m *Model) Keys() help.KeyMap {
	m.syncKeys()
	if m.form != nil {
		return formHelp{form: m.form.Keys(), complete: m.keys.Complete}
	}
	return m.keys
}

// formHelp shows a form's bindings, and completion, in the help bar.
type formHelp struct {
	form     form.KeyMap
	complete key.Binding
}

// ShortHelp lists the form's bindings.
func (k formHelp) ShortHelp() []key.Binding {
	return append([]key.Binding{k.complete}, k.form.All()...)
}

// FullHelp lists the form's bindings in one column.
func (k formHelp) FullHelp() [][]key.Binding {
	return [][]key.Binding{append([]key.Binding{k.complete}, k.form.All()...)}
}
