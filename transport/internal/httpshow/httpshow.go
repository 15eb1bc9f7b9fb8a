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
	"regexp"
	"strings"
)

// Redacted replaces a secret value wherever sonde shows or records it.
const Redacted = "«redacted»"

// ErrorBodyBytes bounds the body of a failed exchange kept for display.
const ErrorBodyBytes = 2048

// Body is a body as shown in an error message: trimmed, escaped, cut. An
// HTML page (a proxy's or a framework's error page) is shown by its title,
// or its first line of text, not as markup.
func Body(b []byte) string {
	s := strings.TrimSpace(string(bytes.ToValidUTF8(b, []byte("\uFFFD"))))
	if s == "" {
		return "(empty body)"
	}
	if text, ok := htmlText(s); ok {
		return "an HTML page: " + show(text)
	}
	return show(s)
}

var (
	htmlStart = regexp.MustCompile(`(?i)^(<!--.*?-->\s*)*<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>]|title[\s>])`)
	htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	htmlDrop  = regexp.MustCompile(`(?is)<(script|style|head)[^>]*>.*?</(script|style|head)>|<!--.*?-->`)
	htmlTag   = regexp.MustCompile(`(?s)<[^>]*>`)
	spaces    = regexp.MustCompile(`\s+`)
)

// htmlText is what a person reads first of an HTML page: its title, else
// its first line of text; ok is false when s is not HTML.
func htmlText(s string) (string, bool) {
	if !htmlStart.MatchString(s) {
		return "", false
	}
	if m := htmlTitle.FindStringSubmatch(s); m != nil {
		if t := strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(htmlTag.ReplaceAllString(m[1], " ")), " ")); t != "" {
			return t, true
		}
	}
	body := htmlTag.ReplaceAllString(htmlDrop.ReplaceAllString(s, "\n"), "\n")
	for line := range strings.SplitSeq(body, "\n") {
		if t := strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(line), " ")); t != "" {
			return t, true
		}
	}
	return "(no text)", true
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

// ResponseHeaders lists the response headers worth showing, as
// "< Name: value" (a cookie's value redacted).
func ResponseHeaders(resp *http.Response) []string {
	var out []string
	for _, name := range []string{"Content-Type", "Mcp-Session-Id", "Www-Authenticate", "Retry-After", "Location", "Allow"} {
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
