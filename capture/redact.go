package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// MinSecretLen is the shortest --env value treated as a secret. Shorter
// values ("1", "on", "dev") would match everywhere and make the capture
// useless; they are not redacted.
const MinSecretLen = 4

// Redactor replaces secrets with the Redacted marker. The zero value (and
// nil) redacts nothing. It is safe for concurrent use.
type Redactor struct {
	literals [][]byte
	regexps  []*regexp.Regexp
	kinds    []string

	// late are secrets learnt while recording (AddSecret: OAuth tokens).
	mu   sync.RWMutex
	late [][]byte
}

// AddSecret adds a secret learnt after the redactor was built (an OAuth
// access or refresh token): from now on it is replaced like an --env value
// (values shorter than MinSecretLen are skipped). Safe for concurrent use.
func (r *Redactor) AddSecret(v string) {
	if r == nil || len(v) < MinSecretLen {
		return
	}
	b, _ := json.Marshal(v)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.late = append(r.late, []byte(v))
	if esc := b[1 : len(b)-1]; !bytes.Equal(esc, []byte(v)) {
		r.late = append(r.late, esc)
	}
}

// NewRedactor returns a redactor for the values of env entries (KEY=VALUE,
// as given to --env; values shorter than MinSecretLen are skipped) and for
// every match of the patterns (--redact). A pattern that does not compile
// is an error naming it.
func NewRedactor(env []string, patterns []string) (*Redactor, error) {
	r := &Redactor{}
	for _, kv := range env {
		_, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < MinSecretLen {
			continue
		}
		r.addLiteral(v)
	}
	if len(r.literals) > 0 {
		r.kinds = append(r.kinds, "env")
	}
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("--redact %q: %v", p, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("--redact %q: the pattern matches the empty string", p)
		}
		r.regexps = append(r.regexps, re)
	}
	if len(r.regexps) > 0 {
		r.kinds = append(r.kinds, "regex")
	}
	return r, nil
}

// addLiteral adds v and, when JSON would escape it differently, its escaped
// form as it appears inside a JSON string on the wire.
func (r *Redactor) addLiteral(v string) {
	r.literals = append(r.literals, []byte(v))
	b, _ := json.Marshal(v)
	if esc := b[1 : len(b)-1]; !bytes.Equal(esc, []byte(v)) {
		r.literals = append(r.literals, esc)
	}
}

// Kinds names what this redactor redacts ("env", "regex"), for the header.
func (r *Redactor) Kinds() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.kinds...)
}

// Bytes returns b with every secret replaced, and whether anything was. b
// itself is never modified; when nothing matches, b is returned as is.
func (r *Redactor) Bytes(b []byte) ([]byte, bool) {
	if r == nil {
		return b, false
	}
	r.mu.RLock()
	lits := r.literals
	if len(r.late) > 0 {
		lits = append(append([][]byte(nil), r.literals...), r.late...)
	}
	r.mu.RUnlock()
	b, changed := r.plain(b, lits)
	if (len(lits) > 0 || len(r.regexps) > 0) && bytes.IndexByte(b, '\\') >= 0 {
		if out, ok := r.escapedStrings(b, lits); ok {
			b, changed = out, true
		}
	}
	return b, changed
}

// escapedStrings redacts secrets that a JSON string in b spells with
// escapes ("\u0073ecret", "a\/b"), which the byte search above cannot see: each
// quoted string holding a backslash is decoded, redacted, and written
// back in JSON's own spelling when a secret was in it. The rest of b is
// kept byte for byte. It reports whether anything changed.
func (r *Redactor) escapedStrings(b []byte, lits [][]byte) ([]byte, bool) {
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, escaped := stringEnd(b, i)
		if end < 0 {
			break
		}
		if escaped {
			var v string
			if json.Unmarshal(b[i:end+1], &v) == nil {
				if red, ok := r.plain([]byte(v), lits); ok {
					enc, _ := json.Marshal(string(red))
					out = append(append(out, b[last:i]...), enc...)
					last = end + 1
				}
			}
		}
		i = end
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

// stringEnd returns the index of the quote closing the JSON string opened
// at b[start] (or -1), and whether the string holds a backslash.
func stringEnd(b []byte, start int) (int, bool) {
	end := quoteEnd(b, start+1)
	if end < 0 {
		return -1, false
	}
	return end - 1, bytes.IndexByte(b[start+1:end-1], '\\') >= 0
}

// plain replaces the literals and the pattern matches in v (a line, or a
// decoded string), never modifying v itself.
func (r *Redactor) plain(v []byte, lits [][]byte) ([]byte, bool) {
	changed := false
	for _, lit := range lits {
		if bytes.Contains(v, lit) {
			v = bytes.ReplaceAll(v, lit, []byte(Redacted))
			changed = true
		}
	}
	for _, re := range r.regexps {
		if re.Match(v) {
			v = re.ReplaceAllLiteral(v, []byte(Redacted))
			changed = true
		}
	}
	return v, changed
}

// String is Bytes for a string.
func (r *Redactor) String(s string) (string, bool) {
	if r == nil {
		return s, false
	}
	b, changed := r.Bytes([]byte(s))
	if !changed {
		return s, false
	}
	return string(b), true
}

// Strings redacts every element of ss (a copy is returned when anything
// changed).
func (r *Redactor) Strings(ss []string) ([]string, bool) {
	var out []string
	for i, s := range ss {
		t, changed := r.String(s)
		if changed && out == nil {
			out = append([]string(nil), ss...)
		}
		if out != nil {
			out[i] = t
		}
	}
	if out == nil {
		return ss, false
	}
	return out, true
}

// secretHeader reports whether the values of HTTP header k never reach a
// capture.
func secretHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie":
		return true
	}
	return false
}

// HeaderLines redacts header lines written as "> Name: value" or
// "< Name: value" (or "Name: value"): the values of Authorization,
// Proxy-Authorization, Cookie and Set-Cookie always, the rest through the
// redactor. It returns a copy when anything changed.
func (r *Redactor) HeaderLines(lines []string) ([]string, bool) {
	var out []string
	for i, l := range lines {
		t := l
		prefix, rest := "", l
		if len(rest) > 2 && (rest[:2] == "> " || rest[:2] == "< ") {
			prefix, rest = rest[:2], rest[2:]
		}
		if name, _, ok := strings.Cut(rest, ":"); ok && secretHeader(strings.TrimSpace(name)) {
			t = prefix + name + ": " + Redacted
		} else {
			t, _ = r.String(l)
		}
		if t != l && out == nil {
			out = append([]string(nil), lines...)
		}
		if out != nil {
			out[i] = t
		}
	}
	if out == nil {
		return lines, false
	}
	return out, true
}
