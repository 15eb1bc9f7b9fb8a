package mcpserver

import (
	"fmt"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// cutMarker ends a text cut to its cap; it says how much was left out.
const cutMarker = "…[cut: %d of %d bytes shown]"

// serverText is text from a target server as every tool gives it:
// redacted (red's secrets, nil: none), escaped as the panes escape it
// (textfmt.Escape: control characters, escape sequences and invalid UTF-8
// shown, not passed on; newlines as \n), and cut to max bytes of the
// input with a marker (max <= 0: no cap). cut reports a cut.
func serverText(red *capture.Redactor, b []byte, max int) (text string, cut bool) {
	b, _ = red.Bytes(b)
	total := len(b)
	if max > 0 && total > max {
		n := max
		for n > 0 && !utf8.RuneStart(b[n]) { // cut between runes
			n--
		}
		b, cut = b[:n], true
	}
	text = textfmt.Escape(string(b))
	if cut {
		text += fmt.Sprintf(cutMarker, max, total)
	}
	return text, cut
}

// serverString is serverText for a string.
func serverString(red *capture.Redactor, s string, max int) string {
	t, _ := serverText(red, []byte(s), max)
	return t
}
