package textfmt

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPreview(t *testing.T) {
	for in, want := range map[string]string{
		"a\r\nb\tc":        `a\r\nb\tc`,
		"\x1b[31mred":      `\x1b[31mred`,
		"bad\xffutf8":      `bad\xffutf8`,
		"c1\u0085x":        `c1\u0085x`,
		"日本語":              "日本語",
		"abcdefghijklmnop": "abcdefghij…",
	} {
		if got := Preview([]byte(in), 10); got != want {
			t.Errorf("Preview(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         "plain",
		"\x1b[2J":       `\x1b[2J`,
		"a\r\n\tb":      `a\r\n\tb`,
		"\u009b31m":     `\u009b31m`,
		"bad \xff utf8": `bad \xff utf8`,
		"日本語 ok":        "日本語 ok",
		"del\x7f":       `del\x7f`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"a\x1b[31mb\nc\u009bd": `a\x1b[31mb c\u009bd`, // was ui/form: C1 now spelt as Escape spells it
		"héllo (wörld)":        "héllo (wörld)",
		"tab\there\r\n":        "tab here  ",
		"raw \x9b csi":         `raw \x9b csi`, // ui/form's Clean let this byte through
		"del\x7f nul\x00":      `del\x7f nul\x00`,
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanBlock(t *testing.T) {
	for in, want := range map[string]string{
		"a\r\nb\nc":        "a\nb\nc",
		"col\tumn":         "col    umn",
		"lone\rcr":         `lone\rcr`,
		"esc \x1b[2J \x9b": `esc \x1b[2J \x9b`,
		"c1 \u0085 x":      `c1 \u0085 x`,
		"plain\n日本語\n":     "plain\n日本語\n",
	} {
		if got := CleanBlock(in); got != want {
			t.Errorf("CleanBlock(%q) = %q, want %q", in, got, want)
		}
	}
}

var modes = []Whitespace{EscapeWhitespace, FlattenWhitespace, KeepLines, KeepTerminal}

// safe reports why out could act on a terminal, or "" when it cannot: it
// must be valid UTF-8 with no C0 control (but \n under KeepLines), no ESC,
// no DEL and no C1 control.
func safe(out string, ws Whitespace) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8 (a raw C1 byte such as 0x9b)"
	}
	for _, r := range out {
		switch {
		case r == '\n' && (ws == KeepLines || ws == KeepTerminal):
		case r == '\t' && ws == KeepTerminal:
		case r < 0x20, r == 0x7f:
			return "C0 control or DEL"
		case r >= 0x80 && r <= 0x9f:
			return "C1 control"
		}
	}
	return ""
}

// TestNoControlOut feeds every byte 0x00-0xff raw, and every C1 code point
// encoded, through every mode: none comes out able to act on the terminal.
func TestNoControlOut(t *testing.T) {
	var ins []string
	for b := range 256 {
		ins = append(ins, string([]byte{'a', byte(b), 'z'}))
	}
	for r := rune(0x80); r <= 0x9f; r++ {
		ins = append(ins, "a"+string(r)+"z")
	}
	ins = append(ins, "\x1b]0;title\x07", "\x9b2J", "\xc2\x9b2J", "\xc2", "a\r\n\tb")
	for _, ws := range modes {
		for _, in := range ins {
			out := Sanitize(in, ws)
			if why := safe(out, ws); why != "" {
				t.Errorf("Sanitize(%q, %d) = %q: %s", in, ws, out, why)
			}
		}
	}
	for b := range 256 {
		if out := Preview([]byte{byte(b), 'x'}, 10); safe(out, EscapeWhitespace) != "" {
			t.Errorf("Preview(%#x) = %q", b, out)
		}
	}
}

// TestCleanIsSanitize checks the one-line wrappers against Sanitize.
func TestCleanIsSanitize(t *testing.T) {
	in := "a\tb\r\nc\x1b\u0085\xff"
	if Escape(in) != Sanitize(in, EscapeWhitespace) || Clean(in) != Sanitize(in, FlattenWhitespace) ||
		CleanBlock(in) != Sanitize(in, KeepLines) || Preview([]byte(in), -1) != Escape(in) {
		t.Error("a wrapper differs from Sanitize")
	}
	if strings.Contains(Clean(in), "\n") {
		t.Error("Clean kept a newline")
	}
}

// FuzzEscape checks the sanitizer's property on any input, in every mode:
// no C0 control (but \n when lines are kept), no ESC, no DEL, no C1
// control, valid UTF-8; and text without control characters is unchanged.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{
		"", "plain", "\x1b[31mred\x1b[0m", "\x9b31m", "\xc2\x9b31m", "\x1b]8;;http://x\x07link\x1b]8;;\x07",
		"a\r\nb\tc\rd", "\x00\x01\x7f\x85", "日本語", "\xff\xfe", "\xe2\x80", "\u202eevil", "\x1bP+q\x1b\\",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, ws := range modes {
			out := Sanitize(in, ws)
			if why := safe(out, ws); why != "" {
				t.Fatalf("Sanitize(%q, %d) = %q: %s", in, ws, out, why)
			}
			if safe(in, ws) == "" && !strings.ContainsAny(in, "\r\t\n") && out != in {
				t.Fatalf("Sanitize(%q, %d) = %q: changed safe text", in, ws, out)
			}
		}
		if out := Preview([]byte(in), 8); safe(out, EscapeWhitespace) != "" {
			t.Fatalf("Preview(%q) = %q", in, out)
		}
		var b strings.Builder
		w := NewTerminalWriter(&b)
		half := len(in) / 2
		for _, part := range []string{in[:half], in[half:]} {
			if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
				t.Fatalf("TerminalWriter.Write(%q) = %d, %v", part, n, err)
			}
		}
		if why := safe(b.String(), KeepTerminal); why != "" {
			t.Fatalf("TerminalWriter wrote %q for %q: %s", b.String(), in, why)
		}
	})
}

// TestTerminalWriter: plain text, newlines and tabs pass as written; the
// escapes a terminal obeys are shown instead of obeyed.
func TestTerminalWriter(t *testing.T) {
	var b strings.Builder
	w := NewTerminalWriter(&b)
	for _, s := range []string{"name\tdescription\n", "a\r\nb\n", "x\x1b]0;pwned\x07\x1b[2J\u009b\x00\r!\n", "\xff\n"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	want := "name\tdescription\na\nb\nx\\u001b]0;pwned\\u0007\\u001b[2J\\u009b\\u0000\\r!\n\\xff\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
}

// TestTerminalWriterKeepsJSON: --json output written to a terminal goes
// through the writer too; encoding/json leaves DEL and C1 characters raw,
// and the writer's \u00NN spelling keeps the document valid JSON with the
// same value.
func TestTerminalWriterKeepsJSON(t *testing.T) {
	in := map[string]string{"text": "a\x7fb\u009bc\x1b]0;t\x07"}
	raw, _ := json.Marshal(in)
	var b strings.Builder
	if _, err := NewTerminalWriter(&b).Write(raw); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back["text"] != in["text"] {
		t.Fatalf("%s → %s → %q, %v", raw, b.String(), back, err)
	}
	if why := safe(b.String(), KeepTerminal); why != "" {
		t.Fatalf("%q: %s", b.String(), why)
	}
}
