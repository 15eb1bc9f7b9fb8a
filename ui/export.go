package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Exporter writes the HTML report of the capture at path beside it (X;
// docs/export.md) and returns the page's path. Options.Export holds it;
// the UI calls it from a command only.
type Exporter func(path string) (string, error)

// exportMsg is the outcome of X: the page written, or why not.
type exportMsg struct {
	path string
	err  error
}

// exportState is what the status bar says of the last export.
type exportState struct {
	note string
	err  bool
}

// exportCmd writes the report of the capture at path in a command.
func exportCmd(export Exporter, path string) tea.Cmd {
	if export == nil || path == "" {
		return nil
	}
	return func() tea.Msg {
		out, err := export(path)
		return exportMsg{path: out, err: err}
	}
}

// apply takes the outcome of an export.
func (e *exportState) apply(msg exportMsg) {
	if msg.err != nil {
		*e = exportState{note: "export: " + msg.err.Error(), err: true}
		return
	}
	*e = exportState{note: "exported " + msg.path}
}

// part is the status bar's word on the last export (none before one).
func (e exportState) part(st *theme.Styles) []statusPart {
	if e.note == "" {
		return nil
	}
	style := st.Info
	if e.err {
		style = st.Error
	}
	return []statusPart{{text: style.Render(textfmt.Clean(e.note))}}
}

// exportSource is the capture X exports for the mode: a live session's
// recording (the one under way, or the last), or the file replayed or
// watched (Options.Capture).
func exportSource(m *Model) string {
	if m.lv != nil {
		return m.rec.Path
	}
	return m.opts.Capture
}
