package observe

import (
	"errors"
	"net/url"
	"sort"
	"strings"
	"testing"
)

// FuzzParseHeader: --otlp-header either gives a header Go would send (a
// token name, a value without CR, LF or another control character but
// tab) that NAME=VALUE gives back unchanged, or fails with ErrHeader
// and a message that does not quote the value.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"x-key=abc", " Authorization =Bearer a=b", "k=", "=v", "novalue", "k=a\r\nX-Injected: 1", "bad name=v", "k=\x00", "k=tab\tok", "ünï=v", "k=ünïcode"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, kv string) {
		name, value, err := ParseHeader(kv)
		if err != nil {
			if !errors.Is(err, ErrHeader) {
				t.Fatalf("ParseHeader(%q): %v, not ErrHeader", kv, err)
			}
			// The error never quotes the value (an API key): it is the
			// same with the value left out, or names the header only.
			k, _, hasEq := strings.Cut(kv, "=")
			if _, _, e2 := ParseHeader(k + "="); !hasEq {
				return
			} else if e2 == nil {
				if want := ErrHeader.Error() + ": the value of " + strings.TrimSpace(k) + " holds a control character (CR, LF, NUL…)"; err.Error() != want {
					t.Fatalf("ParseHeader(%q): %q, want %q", kv, err, want)
				}
			} else if e2.Error() != err.Error() {
				t.Fatalf("ParseHeader(%q): %q, but %q without the value", kv, err, e2)
			}
			return
		}
		if !validName(name) || strings.ContainsAny(value, "\r\n\x00") || !validValue(value) {
			t.Fatalf("ParseHeader(%q) = %q, %q: not a header", kv, name, value)
		}
		n2, v2, err := ParseHeader(name + "=" + value)
		if err != nil || n2 != name || v2 != value {
			t.Fatalf("round trip of %q: %q %q %v", kv, n2, v2, err)
		}
	})
}

// FuzzParseEnvHeaders: whatever OTEL_EXPORTER_OTLP_HEADERS holds, every
// header kept can be sent, and the headers kept, written back in the
// variable's format (values escaped), read back the same.
func FuzzParseEnvHeaders(f *testing.F) {
	for _, s := range []string{"a=1,b=x%20y", "api-key=abc%3D%3D", "a=%zz,b=2", "a=%0D%0AX: 1", ",,=,k", " k = v ", "a=1,a=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, _ := ParseEnvHeaders(s)
		var names []string
		for k, v := range h {
			if !validName(k) || !validValue(v) {
				t.Fatalf("ParseEnvHeaders(%q) kept %q=%q", s, k, v)
			}
			names = append(names, k)
		}
		sort.Strings(names)
		var parts []string
		for _, k := range names {
			parts = append(parts, k+"="+url.PathEscape(h[k]))
		}
		back, skipped := ParseEnvHeaders(strings.Join(parts, ","))
		if len(skipped) > 0 || len(back) != len(h) {
			t.Fatalf("ParseEnvHeaders(%q) = %q; written back %q: %q, skipped %q", s, h, parts, back, skipped)
		}
		for k, v := range h {
			if back[k] != v {
				t.Fatalf("ParseEnvHeaders(%q): %s=%q came back %q", s, k, v, back[k])
			}
		}
	})
}
