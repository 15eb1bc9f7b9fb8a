package tap

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// secretHeader reports whether a header's value is kept out of the
// recording: credentials and cookies, and any header whose name has a
// part that says it holds a secret.
func secretHeader(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return secretName(name)
}

// secretName reports whether a name (of a header, a query parameter) has
// a part, between '-' or '_', that says its value is a secret.
func secretName(name string) bool {
	for _, part := range strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '-' || r == '_' }) {
		switch part {
		case "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "KEY", "APIKEY", "CREDENTIAL", "CREDENTIALS",
			"AUTH", "COOKIE", "PAT", "PRIVATE", "SIGNATURE", "SESSIONKEY", "ACCESSTOKEN":
			return true
		}
	}
	return false
}

// Redacted stands for a value kept out of the recording.
const Redacted = "«redacted»"

// headerLines lists h as "> Name: value" (prefix "> " or "< "), sorted,
// secret values replaced by Redacted.
func headerLines(prefix string, h http.Header) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		v := strings.Join(h[k], ", ")
		if secretHeader(k) {
			v = Redacted
		}
		out = append(out, prefix+k+": "+v)
	}
	return out
}

// RedactURL is u with its password and the values of query parameters
// named like secrets replaced.
func RedactURL(u *url.URL) string {
	c := *u
	if q := c.Query(); len(q) > 0 {
		changed := false
		for k := range q {
			if secretName(k) {
				q[k] = []string{"redacted"}
				changed = true
			}
		}
		if changed {
			c.RawQuery = q.Encode()
		}
	}
	return c.Redacted()
}
