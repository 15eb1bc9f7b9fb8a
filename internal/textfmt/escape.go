package textfmt

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Whitespace says what Sanitize does with line feeds, carriage returns and
// tabs. Every other character is treated the same way whatever it says:
// C0 controls, ESC and DEL are shown as \xNN, C1 controls (U+0080 to
// U+009F) as \u00NN, and each byte that is not valid UTF-8 (a raw 0x9b
// among them) as \xNN. Nothing else is changed.
type Whitespace uint8

const (
	// EscapeWhitespace shows \n, \r and \t as those two-character escapes:
	// one line that shows exactly what was there (Escape, Preview).
	EscapeWhitespace Whitespace = iota
	// FlattenWhitespace turns each \n, \r and \t into one space: one line
	// for names, labels and messages (Clean).
	FlattenWhitespace
	// KeepLines keeps \n, drops the \r of a "\r\n", shows a lone \r as the
	// escape \r and turns a tab into four spaces: a block of lines
	// (CleanBlock).
	KeepLines
	// KeepTerminal keeps \n and \t, drops the \r of a "\r\n" and shows a
	// lone \r as the escape \r (it would move the cursor back over what
	// was written): text for a terminal that is not drawn in cells
	// (TerminalWriter). Other C0 controls and DEL are shown as \u00NN, as
	// JSON spells them, so a JSON document written through it is still
	// JSON meaning the same (C1 controls are \u00NN already).
	KeepTerminal
)

// Sanitize makes text from a server, a capture or a config file safe to
// draw on a terminal: no byte of the result can act on the terminal, and
// the result is valid UTF-8. ws chooses what happens to line breaks and
// tabs; see Whitespace for the rest.
func Sanitize(s string, ws Whitespace) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return sanitize([]byte(s), ws, -1)
		}
	}
	return s
}

// Escape makes text from the wire safe to draw on one line, showing
// exactly what was there: control characters (C0, DEL, C1) and invalid
// UTF-8 are escaped (\r, \n, \t, \xNN, \u00NN). It is Sanitize with
// EscapeWhitespace.
func Escape(s string) string { return Sanitize(s, EscapeWhitespace) }

// Clean makes text from a server safe to draw on one line as a name,
// label or message: line breaks and tabs become spaces, other control
// characters and invalid UTF-8 are escaped. It is Sanitize with
// FlattenWhitespace.
func Clean(s string) string { return Sanitize(s, FlattenWhitespace) }

// CleanBlock makes multi-line text from a server safe to draw: newlines
// are kept, "\r\n" becomes "\n", tabs become four spaces, other control
// characters and invalid UTF-8 are escaped. It is Sanitize with KeepLines.
func CleanBlock(s string) string { return Sanitize(s, KeepLines) }

// Preview renders raw bytes on one line, at most max runes, escaped as by
// Escape; an ellipsis marks a cut.
func Preview(b []byte, max int) string {
	return sanitize(b, EscapeWhitespace, max)
}

// sanitize is Sanitize over bytes, keeping at most max runes of the input
// (max < 0: no limit); an ellipsis marks a cut.
func sanitize(b []byte, ws Whitespace, max int) string {
	var sb strings.Builder
	sb.Grow(len(b))
	n := 0
	for len(b) > 0 && (max < 0 || n < max) {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&sb, `\x%02x`, b[0])
		case r == '\n' || r == '\r' || r == '\t':
			whitespace(&sb, r, ws, len(b) > 1 && b[1] == '\n')
		case (r < 0x20 || r == 0x7f) && ws == KeepTerminal:
			fmt.Fprintf(&sb, `\u%04x`, r) // as JSON spells it: a JSON document stays one
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
		b = b[size:]
		n++
	}
	if len(b) > 0 {
		sb.WriteString("…")
	}
	return sb.String()
}

// whitespace writes r (\n, \r or \t) as ws says; crlf reports that r is
// the \r of a "\r\n".
func whitespace(sb *strings.Builder, r rune, ws Whitespace, crlf bool) {
	switch {
	case ws == FlattenWhitespace:
		sb.WriteByte(' ')
	case (ws == KeepLines || ws == KeepTerminal) && r == '\n':
		sb.WriteByte('\n')
	case ws == KeepLines && r == '\t':
		sb.WriteString("    ")
	case ws == KeepTerminal && r == '\t':
		sb.WriteByte('\t')
	case (ws == KeepLines || ws == KeepTerminal) && crlf: // the \n that follows is kept
	case r == '\n':
		sb.WriteString(`\n`)
	case r == '\r':
		sb.WriteString(`\r`)
	default:
		sb.WriteString(`\t`)
	}
}

// TerminalWriter passes what is written through Sanitize with
// KeepTerminal: whatever reaches it (a tool's text, a server's error
// message, its stderr), nothing written to a terminal through it can set
// the title, write the clipboard, move the cursor or clear the screen.
// Each Write is sanitized whole: a character split between two writes is
// shown as the bytes of each half.
type TerminalWriter struct{ w io.Writer }

// NewTerminalWriter returns a TerminalWriter writing to w.
func NewTerminalWriter(w io.Writer) *TerminalWriter { return &TerminalWriter{w: w} }

// Write writes the sanitized p; it reports len(p) when all of it was
// written.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	clean := true
	for _, c := range p {
		if (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return t.w.Write(p)
	}
	if _, err := io.WriteString(t.w, sanitize(p, KeepTerminal, -1)); err != nil {
		return 0, err
	}
	return len(p), nil
}
