package connect

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// FuzzHeaderFlag: --header 'Name: value' gives a header Go sends as it
// is (a token name, a trimmed value without CR, LF or another control
// character but tab) that 'Name: value' gives back unchanged, or a usage
// error that never shows the value.
func FuzzHeaderFlag(f *testing.F) {
	for _, s := range []string{"Authorization: Bearer abc", "X-Key:v", " X : spaced ", "NoColon", ": v", "Bad Name: v", "X: a\r\nInjected: 1",
		"X: \x00secret", "X: tab\tok", "X: ünï", "ünï: v", "X: a:b:c", "X:", "(x): v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, kv string) {
		name, value, err := parseHeaderFlag(kv)
		if err != nil {
			var u *cmdutil.UsageError
			if !errors.As(err, &u) {
				t.Fatalf("parseHeaderFlag(%q): %v is not a usage error", kv, err)
			}
			// The flag is shown with its value redacted, then a fixed
			// reason: the value is nowhere.
			rest, ok := strings.CutPrefix(u.Msg, fmt.Sprintf("--header %q: ", redactArg(kv)))
			switch {
			case !ok, rest != "want 'Name: value'" && !strings.HasPrefix(rest, "the name is not an HTTP token") && rest != "the value holds a control character (CR, LF, NUL…)":
				t.Fatalf("parseHeaderFlag(%q): %q", kv, u.Msg)
			}
			return
		}
		if !headerToken(name) || value != strings.TrimSpace(value) || strings.ContainsAny(value, "\r\n\x00") {
			t.Fatalf("parseHeaderFlag(%q) = %q, %q", kv, name, value)
		}
		n2, v2, err := parseHeaderFlag(name + ": " + value)
		if err != nil || n2 != name || v2 != value {
			t.Fatalf("round trip of %q: %q %q %v", kv, n2, v2, err)
		}
	})
}

// FuzzInputFlag: --input ID=VALUE gives the id (non-empty, what comes
// before the first "=") and the value as written, the last one of an id
// winning, or a usage error.
func FuzzInputFlag(f *testing.F) {
	for _, s := range [][2]string{{"region=eu-west-1", "token=a=b"}, {"=v", ""}, {"novalue", "x=1"}, {"x=1", "x=2"}, {"x=", "y=\x00\n"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		fl := &Flags{Inputs: []string{a, b}}
		values, err := fl.InputValues()
		if err != nil {
			var u *cmdutil.UsageError
			if !errors.As(err, &u) || values != nil {
				t.Fatalf("InputValues(%q, %q): %v, %q", a, b, err, values)
			}
			if strings.Contains(a, "=") && !strings.HasPrefix(a, "=") && strings.Contains(b, "=") && !strings.HasPrefix(b, "=") {
				t.Fatalf("InputValues(%q, %q): %v for two good values", a, b, err)
			}
			return
		}
		want := map[string]string{}
		for _, kv := range []string{a, b} {
			id, v, ok := strings.Cut(kv, "=")
			if !ok || id == "" {
				t.Fatalf("InputValues(%q, %q) took %q", a, b, kv)
			}
			want[id] = v
		}
		if len(values) != len(want) {
			t.Fatalf("InputValues(%q, %q) = %q, want %q", a, b, values, want)
		}
		for id, v := range want {
			if values[id] != v {
				t.Fatalf("InputValues(%q, %q) = %q, want %q", a, b, values, want)
			}
		}
	})
}
