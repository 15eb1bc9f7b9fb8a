package ui

import "github.com/sonde-mcp/sonde/ui/tools"

// A tool's form (its fields, or its JSON editor) in a Tools pane too
// short to edit in is zoomed while it is open, and the layout comes back
// when it closes: at 80x24 the pane has six rows, the form's heading and
// description leave the editor four. z still toggles the zoom by hand
// (and then the form leaves it as it is).

// minFormRows is the inner height a form needs to be usable: its
// heading, and a dozen rows of fields or JSON.
const minFormRows = 12

// formOpen reports whether the Tools pane t has a form open: the one mode
// that both captures the keyboard and is nested.
func formOpen(t *tools.Model) bool { return t.Nested() && t.Capturing() }

// formRoom zooms the Tools pane while a form is open in it and it is too
// short, and unzooms what it zoomed once the form is closed.
func (m *Model) formRoom() {
	open := formOpen(m.tools) && m.focus == paneTools
	switch {
	case open && !m.zoom:
		if r, ok := m.rects[paneTools]; ok && r.H-2 < minFormRows {
			m.zoom, m.autoZoom = true, true
			m.relayout()
		}
	case !open && m.autoZoom:
		m.autoZoom = false
		if m.zoom {
			m.zoom = false
			m.relayout()
		}
	}
}
