package stderr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSanitize: whatever a server writes to stderr, the line drawn is
// valid UTF-8 holding no C0 control (tabs are expanded to spaces, the rest
// escaped), no ESC, no DEL and no C1 control; and a line that needs no
// escaping loses no text (only its tabs become spaces).
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{
		"plain line",
		"crlf line\r",
		"a\tb\tc",
		"\x1b[31mred\x1b[0m",
		"\x1b]0;title\x07after",
		"\x1b]52;c;aGk=\x1b\\clip",
		"\x1bPdcs\x1b\\",
		"\x1b[1;2",
		"\x1b[\x00x",
		"\x1b(B",
		"\x1b",
		"caf\xc3\xa9\t\xe2\x80\x8bzero width",
		"\xc2\x9b31m C1 CSI",
		"\x9b31m raw C1 byte",
		"\xff\xfe bad utf8",
		"nul\x00 del\x7f bel\x07 bs\x08 cr\r in the middle",
		"\u2028line sep\u0085nel",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := sanitize(in)
		if !utf8.ValidString(out) {
			t.Fatalf("sanitize(%q) = %q: not valid UTF-8", in, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("sanitize(%q) = %q holds control %U", in, out, r)
			}
		}
		// A line of printable text and tabs: the tabs become spaces, the
		// rest is kept as it was.
		line := strings.TrimSuffix(string(in), "\r")
		if !utf8.ValidString(line) {
			return
		}
		for _, r := range line {
			if r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)) {
				return
			}
		}
		drop := strings.NewReplacer(" ", "", "\t", "")
		if drop.Replace(out) != drop.Replace(line) {
			t.Fatalf("sanitize(%q) = %q: text lost or changed", in, out)
		}
		if strings.Count(out, " ") < strings.Count(line, " ")+strings.Count(line, "\t") {
			t.Fatalf("sanitize(%q) = %q: a tab became no space", in, out)
		}
	})
}
