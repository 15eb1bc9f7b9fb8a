package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
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

// setInstructions takes the instructions of a new handshake; new text
// shows on the help line again.
func (m *Model) setInstructions(text string) {
	if text != m.instr.text {
		m.instr = instrState{text: text, fresh: text != ""}
	}
}

// seenInstructions dismisses the help line's instructions (a key was
// pressed: the usual help line comes back).
func (m *Model) seenInstructions() { m.instr.fresh = false }

// instructionsBanner is the help line while the instructions are fresh:
// their start on one line, and where to read them whole.
func (m *Model) instructionsBanner() (string, bool) {
	if !m.instr.fresh || m.lesson != nil {
		return "", false // the lesson's footer says what to press next
	}
	st := m.styles
	tail := st.Subtle.Render("  ? reads all")
	head := st.Info.Render("instructions: ")
	room := max(m.width-ansi.StringWidth(tail)-ansi.StringWidth("instructions: "), 10)
	text := textfmt.Clean(m.instr.text)
	if ansi.StringWidth(text) > room {
		text = ansi.Truncate(text, room-1, "") + "…"
	}
	return textfmt.Fit(head+st.Text.Render(text)+tail, m.width), true
}

// instructionsHelp is the help screen's section of the instructions,
// wrapped to the width, at most max(4, height/3) lines (what is left is
// counted).
func (m *Model) instructionsHelp() string {
	if m.instr.text == "" {
		return ""
	}
	st := m.styles
	lines := strings.Split(ansi.Wrap(textfmt.CleanBlock(m.instr.text), max(m.width, 20), ""), "\n")
	if limit := max(4, m.height/3); len(lines) > limit {
		more := len(lines) - limit + 1
		lines = append(lines[:limit-1], st.Subtle.Render(fmt.Sprintf("… %d more %s (a taller terminal shows them)", more, textfmt.Plural(more, "line", "lines"))))
	}
	return st.Accent.Render("The server's instructions (what the host gives the model)") + "\n\n" +
		strings.Join(lines, "\n") + "\n\n"
}
