package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// maxShown bounds the bytes of one text block or JSON value drawn in the
// result view; the rest is counted, not drawn (the Frames pane has it all).
const maxShown = 256 << 10

// cut keeps at most maxShown bytes of s (on a rune boundary) and says how
// much was left out.
func cut(s string) (string, string) {
	if len(s) <= maxShown {
		return s, ""
	}
	n := maxShown
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n], fmt.Sprintf("… %s more not shown", textfmt.Size(len(s)-n))
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// wrapText cleans and wraps text to w cells, one string per line.
func wrapText(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(textfmt.CleanBlock(s), w, ""), "\n")
}

// jsonLines pretty-prints raw JSON with syntax colours, wrapped to w cells.
func jsonLines(st *theme.Styles, raw json.RawMessage, w int) []string {
	text, more := cut(string(raw))
	var b bytes.Buffer
	if more != "" || json.Indent(&b, []byte(text), "", "  ") != nil {
		out := wrapText(text, w)
		if more != "" {
			out = append(out, st.Subtle.Render(more))
		}
		return out
	}
	var out []string
	for _, line := range strings.Split(textfmt.CleanBlock(b.String()), "\n") {
		out = append(out, strings.Split(ansi.Hardwrap(colourJSON(st, line), w, true), "\n")...)
	}
	return out
}

// colourJSON colours one line of indented JSON (strings never span lines).
func colourJSON(st *theme.Styles, line string) string {
	var b strings.Builder
	emit := func(s lipgloss.Style, text string) { b.WriteString(s.Render(text)) }
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ':
			j := i
			for j < len(line) && line[j] == ' ' {
				j++
			}
			b.WriteString(line[i:j])
			i = j
		case c == '"':
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			style := st.JSONString
			if strings.HasPrefix(strings.TrimLeft(line[j:], " "), ":") {
				style = st.JSONKey
			}
			emit(style, line[i:j])
			i = j
		case strings.ContainsRune("{}[],:", rune(c)):
			emit(st.JSONPunct, line[i:i+1])
			i++
		default:
			j := i
			for j < len(line) && !strings.ContainsRune(" {}[],:", rune(line[j])) {
				j++
			}
			word := line[i:j]
			switch word {
			case "true", "false":
				emit(st.JSONBool, word)
			case "null":
				emit(st.JSONNull, word)
			default:
				emit(st.JSONNumber, word)
			}
			i = max(j, i+1)
		}
	}
	return b.String()
}
