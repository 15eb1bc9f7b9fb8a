// Package httpshow holds what the HTTP transport and its OAuth side share
// to show an exchange without its secrets: the redaction marker, a body
// cut for a message, the response headers worth showing, and the cause of
// a *url.Error.
package httpshow

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
)

// Redacted replaces a secret value wherever sonde shows or records it.
const Redacted = "«redacted»"

// ErrorBodyBytes bounds the body of a failed exchange kept for display.
const ErrorBodyBytes = 2048

// Body is a body as shown in an error message: trimmed, escaped, cut. A
// body that starts like an HTML page (a proxy's or a framework's error
// page) is shown by its title, or its first line of text, not as markup.
func Body(b []byte) string {
	s := strings.TrimSpace(string(bytes.ToValidUTF8(b, []byte("\uFFFD"))))
	if s == "" {
		return "(empty body)"
	}
	if isHTML("", b) {
		return htmlPage(b)
	}
	return show(s)
}

// show quotes s, cut at 300 bytes.
func show(s string) string {
	if len(s) > 300 {
		cut := 300
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// StatusBody is the body of a failed exchange as shown in its message: an
// HTML page (by its Content-Type, or a body that starts like one) by its
// title, or without one by its first line of text, never the whole page;
// any other body as Body shows it.
func StatusBody(contentType string, b []byte) string {
	if !isHTML(contentType, b) {
		return Body(b)
	}
	return htmlPage(b)
}

// htmlPage shows an HTML page by its title, or its first line of text.
func htmlPage(b []byte) string {
	page := string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	lower := strings.ToLower(page)
	if i := strings.Index(lower, "<title"); i >= 0 {
		if j := strings.IndexByte(lower[i:], '>'); j >= 0 {
			rest := page[i+j+1:]
			if k := strings.Index(strings.ToLower(rest), "</title"); k >= 0 {
				rest = rest[:k]
			}
			if t := oneLine(html.UnescapeString(rest)); t != "" {
				return "an HTML page titled " + cutQuote(t, 120)
			}
		}
	}
	for _, line := range strings.Split(stripTags(page), "\n") {
		if t := oneLine(html.UnescapeString(line)); t != "" {
			return "an HTML page: " + cutQuote(t, 120)
		}
	}
	return "an HTML page (no text)"
}

// isHTML reports whether a body is an HTML page.
func isHTML(contentType string, b []byte) bool {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/html") {
		return true
	}
	head := strings.ToLower(string(bytes.TrimSpace(b[:min(len(b), 64)])))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

// stripTags removes <…> tags (each ends a line) and the contents of script
// and style elements, keeping the text and its line breaks.
func stripTags(s string) string {
	var b strings.Builder
	lower := strings.ToLower(s)
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(lower[i:], "<script"), strings.HasPrefix(lower[i:], "<style"):
			end := "</script"
			if strings.HasPrefix(lower[i:], "<style") {
				end = "</style"
			}
			j := strings.Index(lower[i:], end)
			if j < 0 {
				return b.String()
			}
			i += j
			k := strings.IndexByte(s[i:], '>')
			if k < 0 {
				return b.String()
			}
			i += k + 1
		case s[i] == '<':
			j := strings.IndexByte(s[i:], '>')
			if j < 0 {
				return b.String()
			}
			i += j + 1
			b.WriteByte('\n') // a tag ends a line of text: <h1>Bad Gateway</h1><p>nginx
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// oneLine collapses whitespace (line breaks included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutQuote cuts s to n bytes (on a rune boundary) and quotes it (escaped).
func cutQuote(s string, n int) string {
	if len(s) > n {
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// ResponseHeaders lists the response headers worth showing, as
// "< Name: value" (a cookie's value redacted).
func ResponseHeaders(resp *http.Response) []string {
	var out []string
	for _, name := range []string{"Content-Type", "Mcp-Session-Id", "Www-Authenticate", "DPoP-Nonce", "Retry-After", "Location", "Allow"} {
		if v := resp.Header.Get(name); v != "" {
			out = append(out, "< "+name+": "+v)
		}
	}
	for _, name := range []string{"Set-Cookie"} {
		if resp.Header.Get(name) != "" {
			out = append(out, "< "+name+": "+Redacted)
		}
	}
	return out
}

// URLError returns the cause of a *url.Error (which repeats the method
// and URL a message already names), or err itself.
func URLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
