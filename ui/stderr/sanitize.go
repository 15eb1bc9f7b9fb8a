package stderr

import (
	"strings"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// sanitize turns one line of a server's stderr into text that is safe to
// draw: ANSI escape sequences (colours, cursor moves, titles) are stripped;
// tabs are expanded to 8-column stops; the \r of a CRLF line ending is
// dropped; the rest goes through textfmt.Escape, so other control
// characters are shown escaped (\r, \xNN, \u0085) and so are invalid UTF-8
// bytes (\xNN). Nothing a server writes is ever interpreted by the terminal.
func sanitize(b []byte) string {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if printableASCII(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	col := 0 // one per rune: the column counting of the tab stops
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != 0x1b && b[i] != '\t' {
			i++
		}
		text := textfmt.Preview(b[:i], -1)
		sb.WriteString(text)
		col += utf8.RuneCountInString(text)
		switch {
		case i == len(b):
			b = nil
		case b[i] == '\t':
			n := 8 - col%8
			sb.WriteString("        "[:n])
			col += n
			b = b[i+1:]
		default:
			b = b[skipEscape(b, i):]
		}
	}
	return sb.String()
}

func printableASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// skipEscape returns the index just past the escape sequence that starts
// with the ESC at b[i]. An unterminated sequence runs to the end of b.
func skipEscape(b []byte, i int) int {
	i++ // ESC
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '[': // CSI: parameters and intermediates, then a final byte
		for i++; i < len(b); i++ {
			if c := b[i]; c >= 0x40 && c <= 0x7e {
				return i + 1
			} else if c < 0x20 || c > 0x7e {
				return i // broken sequence: show what follows
			}
		}
		return i
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: until BEL or ST
		for i++; i < len(b); i++ {
			if b[i] == 0x07 {
				return i + 1
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	for ; i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f; i++ { // intermediates
	}
	if i < len(b) && b[i] >= 0x30 && b[i] <= 0x7e {
		i++ // final byte
	}
	return i
}
