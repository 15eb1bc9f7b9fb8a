package ui

import "charm.land/bubbles/v2/key"

// keyMap holds the global keys: they work whatever pane has the focus
// (unless the pane is capturing text input).
type keyMap struct {
	Next, Prev, Zoom, Help, Restart, Quit, Focus, Record key.Binding
	// Roots opens the roots editor (ui/answer).
	Roots            key.Binding
	LessonNext, FIFO key.Binding
	// Server cycles the server the panes show, in the aggregated
	// inspector (Options.Servers); Report shows that server's failure
	// report there (R, which records with one server).
	Server, Report key.Binding
	// Faults lists a watched tap's fault rules, to turn them on and off
	// (the watch mode, when its source offers WatchedFaults).
	Faults key.Binding
	// Held shows the frames breakpoints hold; Breakpoints lists the
	// breakpoints (a session that can hold frames: Options.Breaks).
	Held, Breakpoints key.Binding
	// Export writes the session's HTML report beside its capture.
	Export key.Binding
}

func defaultKeyMap() keyMap {
	return keyMap{
		Next:        key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev:        key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Zoom:        key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "zoom pane")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Restart:     key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "restart server")),
		Record:      key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "record on/off")),
		Roots:       key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "edit roots")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Focus:       key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7"), key.WithHelp("1-7", "focus pane")),
		LessonNext:  key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "next lesson step")),
		FIFO:        key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "FIFO view")),
		Server:      key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "servers: all")),
		Report:      key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "failure report")),
		Faults:      key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "fault rules")),
		Held:        key.NewBinding(key.WithKeys("H"), key.WithHelp("H", "held frames")),
		Breakpoints: key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "breakpoints")),
		Export:      key.NewBinding(key.WithKeys("X"), key.WithHelp("X", "export HTML")),
	}
}

// ShortHelp is the global part of the help line.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Server, k.Next, k.Zoom, k.Help, k.Quit}
}

// FullHelp lists every global key.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Next, k.Prev, k.Focus, k.Zoom}, {k.Help, k.Restart, k.Record, k.Export, k.Roots, k.Quit}, {k.Server, k.Report, k.Faults, k.Held, k.Breakpoints, k.LessonNext, k.FIFO}}
}
