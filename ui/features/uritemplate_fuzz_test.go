package features

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzURITemplate: any template from a server and any values typed in the
// form. TemplateVars names each variable once, never by an empty name; an
// expansion adds to the template's own bytes only unreserved, reserved and
// '%' (the values are percent-encoded: a control byte, a space, a brace
// in a value never reaches the URI raw); and a simple {x} decodes back to
// the value.
func FuzzURITemplate(f *testing.F) {
	for _, s := range []struct{ tpl, val string }{
		{"db://{schema}/{table}{?limit,schema}{/path*}{x:3}", "a b"},
		{"{+path}/here", "/foo/bar?x#y"},
		{"X{#var}{.x,y}{;x,y,empty}{&x}", "{}\x00\r\n"},
		{"{var:3}{var:-1}{var:99999999999999999999}", "héllo\x1b[31m"},
		{"{", "}"},
		{"}{", "{"},
		{"{}{,}{ , }{:3}{*}", "x"},
		{"{{x}}", "%41"},
		{"{ x }{x*}{x :2}", "\xff\xfe"},
		{"file:///{+path}", "C:\\dir\\a b.txt"},
	} {
		f.Add(s.tpl, s.val)
	}
	f.Fuzz(func(t *testing.T, tpl, val string) {
		vars := TemplateVars(tpl)
		seen := map[string]bool{}
		vals := map[string]string{}
		for i, v := range vars {
			if v == "" || seen[v] {
				t.Fatalf("TemplateVars(%q) = %q: empty or repeated name", tpl, vars)
			}
			seen[v] = true
			vals[v] = val
			if i%2 == 1 {
				vals[v] = val + "\x00\x1b\r\n {}/?#\x7f"
			}
		}
		out := ExpandTemplate(tpl, vals)
		const allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;=%"
		for i := 0; i < len(out); i++ {
			if c := out[i]; strings.IndexByte(allowed, c) < 0 && strings.IndexByte(tpl, c) < 0 {
				t.Fatalf("ExpandTemplate(%q, %q) = %q: raw byte %#x from a value", tpl, vals, out, c)
			}
		}
		if got := ExpandTemplate("{x}", map[string]string{"x": val}); strings.ContainsAny(got, "/?#{} ") {
			t.Fatalf("{x} with %q = %q: a delimiter not encoded", val, got)
		} else if back, err := url.PathUnescape(got); err != nil || back != val {
			t.Fatalf("{x} with %q = %q, decodes to %q (%v)", val, got, back, err)
		}
	})
}
