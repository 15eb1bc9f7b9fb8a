package httpshow

import (
	"strings"
	"testing"
)

func TestStatusBody(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><head><meta charset=utf-8>\n<title>\n  404 &mdash; Not Found\n</title><style>body{color:red}</style></head>" +
		"<body><h1>Not Found</h1>" + strings.Repeat("<p>filler</p>", 500) + "</body></html>"
	for _, tc := range []struct {
		name, ctype, body, want string
	}{
		{"title", "text/html; charset=utf-8", page, `an HTML page titled "404 — Not Found"`},
		{"sniffed", "", page, `an HTML page titled "404 — Not Found"`},
		{"no title", "text/html", "<html><body>\n<style>x{}</style>\n<h1>Bad Gateway</h1><p>nginx</p></body></html>", `an HTML page: "Bad Gateway"`},
		{"empty page", "text/html", "<html></html>", "an HTML page (no text)"},
		{"escape", "text/html", "<title>a\x1b[2Jb</title>", `an HTML page titled "a\x1b[2Jb"`},
		{"json", "application/json", `{"error":"nope"}`, `"{\"error\":\"nope\"}"`},
		{"text", "text/plain", "upstream timed out", `"upstream timed out"`},
	} {
		got := StatusBody(tc.ctype, []byte(tc.body))
		if got != tc.want {
			t.Errorf("%s: StatusBody = %s, want %s", tc.name, got, tc.want)
		}
		if strings.Contains(got, "filler") || strings.Contains(got, "\x1b") {
			t.Errorf("%s: shows the page or a raw escape: %q", tc.name, got)
		}
	}
}

// FuzzStatusBody: any body gives one line, bounded, without a raw control
// character.
func FuzzStatusBody(f *testing.F) {
	f.Add("text/html", "<title>x</title>")
	f.Add("", "<!doctype html><p>a\nb")
	f.Fuzz(func(t *testing.T, ctype, body string) {
		got := StatusBody(ctype, []byte(body))
		if len(got) > 1000 || strings.ContainsAny(got, "\n\r\x1b") {
			t.Fatalf("StatusBody(%q, %q) = %q", ctype, body, got)
		}
	})
}

// TestBodySniffsHTML: Body (used where no Content-Type is at hand, e.g.
// a metadata document that is not JSON) shows a page that starts like
// HTML by its title or first text too; anything else quoted and cut.
func TestBodySniffsHTML(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center></body></html>", `an HTML page titled "502 Bad Gateway"`},
		{"<!DOCTYPE html><html><body>\n<p>Service   &amp; friends\nunavailable</p></body></html>", `an HTML page: "Service & friends"`},
		{`{"error":"bad <html> here"}`, `"{\"error\":\"bad <html> here\"}"`},
		{"   ", "(empty body)"},
		{strings.Repeat("x", 400), `"` + strings.Repeat("x", 300) + `…"`},
	} {
		if got := Body([]byte(tc.body)); got != tc.want {
			t.Errorf("Body(%.40q) = %s, want %s", tc.body, got, tc.want)
		}
	}
}
