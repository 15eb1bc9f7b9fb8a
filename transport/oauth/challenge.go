package oauth

import (
	"net/http"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): a scheme and its parameters (names lower-cased) or token68.
type Challenge struct {
	Scheme  string
	Params  map[string]string
	Token68 string
}

// ParseChallenges parses a WWW-Authenticate value into its challenges. It
// is lenient: what it cannot read is skipped.
func ParseChallenges(h string) []Challenge {
	p := &authLexer{s: h}
	var out []Challenge
	for {
		p.skip(" \t,")
		if p.eof() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // not a token character: skip it
			continue
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		p.skip(" \t")
		if t, ok := p.token68(); ok {
			c.Token68 = t
			out = append(out, c)
			continue
		}
		for {
			save := p.i
			p.skip(" \t,")
			name := p.token()
			p.skip(" \t")
			if name == "" || p.peek() != '=' {
				p.i = save // a new challenge, or the end
				break
			}
			p.i++
			p.skip(" \t")
			var v string
			if p.peek() == '"' {
				v = p.quoted()
			} else {
				v = p.token()
			}
			if _, dup := c.Params[strings.ToLower(name)]; !dup {
				c.Params[strings.ToLower(name)] = v
			}
		}
		out = append(out, c)
	}
}

// BearerChallenge returns the Bearer challenge of a WWW-Authenticate value
// (the first challenge when none is Bearer).
func BearerChallenge(h string) Challenge {
	cs := ParseChallenges(h)
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c
		}
	}
	if len(cs) > 0 {
		return cs[0]
	}
	return Challenge{Params: map[string]string{}}
}

type authLexer struct {
	s string
	i int
}

func (p *authLexer) eof() bool { return p.i >= len(p.s) }

func (p *authLexer) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *authLexer) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads an RFC 9110 token.
func (p *authLexer) token() string {
	start := p.i
	for !p.eof() && isTChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 reads a token68 if one stands here alone (followed by the end or
// a comma); otherwise it moves nothing.
func (p *authLexer) token68() (string, bool) {
	j := p.i
	for j < len(p.s) && (isAlnum(p.s[j]) || strings.IndexByte("-._~+/", p.s[j]) >= 0) {
		j++
	}
	if j == p.i {
		return "", false
	}
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	k := j
	for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
		k++
	}
	if k < len(p.s) && p.s[k] != ',' {
		return "", false
	}
	t := p.s[p.i:j]
	p.i = k
	return t, true
}

// quoted reads a quoted-string, undoing backslash escapes.
func (p *authLexer) quoted() string {
	p.i++ // the opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String()
		case c == '\\' && !p.eof():
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isTChar(c byte) bool { return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 }

// NeedsDiscovery reports whether a refusal calls for discovery: a 401, or a
// 403 whose challenge has error="insufficient_scope".
func NeedsDiscovery(status int, challenge string) bool {
	switch status {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		return BearerChallenge(challenge).Params["error"] == "insufficient_scope"
	}
	return false
}
