package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// The server's instructions (initialize's, or server/discover's): what a
// host hands the model about the server. On connect the help line shows
// them, on one line, until the next key (not in the lesson, whose footer
// says what to press next); the help screen (?) has them whole, wrapped,
// above the keys. They are the server's text: escaped.

// instrState is what the root knows of the instructions.
type instrState struct {
	text  string // as the server sent them ("": none)
	fresh bool   // not yet dismissed: the help line shows them
}

// set takes the instructions of a new handshake; new text shows on the
// help line again.
func (s *instrState) set(text string) {
	if text != s.text {
		*s = instrState{text: text, fresh: text != ""}
	}
}

// seen dismisses the help line's instructions (a key was pressed: the
// usual help line comes back).
func (s *instrState) seen() { s.fresh = false }

// banner is the help line of width cells while the instructions are
// fresh: their start on one line, and where to read them whole (none in
// the lesson, whose footer says what to press next).
func (s instrState) banner(st *theme.Styles, width int, lesson bool) (string, bool) {
	if !s.fresh || lesson {
		return "", false
	}
	tail := st.Subtle.Render("  ? reads all")
	head := st.Info.Render("instructions: ")
	room := max(width-ansi.StringWidth(tail)-ansi.StringWidth("instructions: "), 10)
	text := textfmt.Clean(s.text)
	if ansi.StringWidth(text) > room {
		text = ansi.Truncate(text, room-1, "") + "…"
	}
	return textfmt.Fit(head+st.Text.Render(text)+tail, width), true
}

// help is the help screen's section of the instructions, wrapped to the
// width, at most max(4, height/3) lines (what is left is counted).
func (s instrState) help(st *theme.Styles, width, height int) string {
	if s.text == "" {
		return ""
	}
	lines := strings.Split(ansi.Wrap(textfmt.CleanBlock(s.text), max(width, 20), ""), "\n")
	if limit := max(4, height/3); len(lines) > limit {
		more := len(lines) - limit + 1
		lines = append(lines[:limit-1], st.Subtle.Render(fmt.Sprintf("… %d more %s (a taller terminal shows them)", more, textfmt.Plural(more, "line", "lines"))))
	}
	return st.Accent.Render("The server's instructions (what the host gives the model)") + "\n\n" +
		strings.Join(lines, "\n") + "\n\n"
}
