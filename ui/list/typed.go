package list

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// SingleLine drops line breaks and other control characters from typed or
// pasted text, for a one-line query.
func SingleLine(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r >= 0x20 && r != 0x7f {
			out = append(out, r)
		}
	}
	return string(out)
}

// TypeKey is query after a key typed into it: backspace deletes the last
// character, text is added (SingleLine). ok is false for any other key.
func TypeKey(query string, msg tea.KeyPressMsg) (string, bool) {
	switch {
	case msg.Code == tea.KeyBackspace:
		if r := []rune(query); len(r) > 0 {
			return string(r[:len(r)-1]), true
		}
		return query, true
	case msg.Text != "":
		return query + SingleLine(msg.Text), true
	}
	return query, false
}

// Typing sets the movement keys of a list with a filter typed into it: while
// typing the letters type, so only the arrows (and ctrl+p, ctrl+n) move and
// Home and End are off; otherwise k and j move too.
func (k *KeyMap) Typing(on bool) {
	if on {
		k.Up.SetKeys("up", "ctrl+p")
		k.Down.SetKeys("down", "ctrl+n")
	} else {
		k.Up.SetKeys("up", "k", "ctrl+p")
		k.Down.SetKeys("down", "j", "ctrl+n")
	}
	k.Home.SetEnabled(!on)
	k.End.SetEnabled(!on)
}

// AltView is the view of a list program: content on the alternate screen,
// with the terminal's title.
func AltView(content, title string) tea.View {
	v := tea.NewView(content)
	v.AltScreen = true
	v.WindowTitle = title
	return v
}

// Screen is a list program's screen: the lines draw returns, fitted to
// exactly w×h cells; empty while the size is not known (draw is not
// called).
func Screen(w, h int, draw func() []string) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	return textfmt.Lines(strings.Join(draw(), "\n"), w, h)
}

// Row is a row of a list, w cells wide: "› " and text in the Selected
// style when it is the selected row, two spaces and text otherwise.
func Row(st *theme.Styles, text string, selected bool, w int) string {
	marker := "  "
	if selected {
		marker = "› "
	}
	line := textfmt.Fit(marker+text, w)
	if selected {
		return st.Selected.Render(line)
	}
	return line
}
