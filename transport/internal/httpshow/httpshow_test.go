package httpshow

import (
	"strings"
	"testing"
)

// TestBodyHTML: an error page is shown by its title or first text, never
// as markup; a body that is not HTML is shown as it is, quoted and cut.
func TestBodyHTML(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>", `an HTML page: "502 Bad Gateway"`},
		{"<!DOCTYPE html><html lang=en><head><style>p{color:red}</style><script>x()</script></head><body>\n\n  <p>Service   &amp; friends\nunavailable</p></body></html>", `an HTML page: "Service & friends"`},
		{"<!-- c --><html><title>  </title><body><h1>Not Found</h1>", `an HTML page: "Not Found"`},
		{"<html><body></body></html>", `an HTML page: "(no text)"`},
		{`{"error":"bad <html> here"}`, `"{\"error\":\"bad <html> here\"}"`},
		{"   ", "(empty body)"},
		{strings.Repeat("x", 400), `"` + strings.Repeat("x", 300) + `…"`},
	} {
		if got := Body([]byte(tc.body)); got != tc.want {
			t.Errorf("Body(%.40q) = %s, want %s", tc.body, got, tc.want)
		}
	}
}

// FuzzBody: whatever the body, what is shown is one quoted string (no raw
// newline; an HTML page without its title tag) of bounded length.
func FuzzBody(f *testing.F) {
	f.Add([]byte("<html><title>t</title></html>"))
	f.Add([]byte("<!doctype html><p>a<b>c</b></p>"))
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > ErrorBodyBytes {
			b = b[:ErrorBodyBytes]
		}
		got := Body(b)
		if strings.ContainsAny(got, "\n\r") || len(got) > 2000 {
			t.Fatalf("Body(%q) = %q", b, got)
		}
		if strings.HasPrefix(got, "an HTML page: ") && strings.Contains(strings.ToLower(got), "<title>") {
			t.Fatalf("the title tag shown: %q", got)
		}
	})
}
