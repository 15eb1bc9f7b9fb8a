package oauth

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParseChallenges: any WWW-Authenticate value (the server chooses it)
// parses without a panic into challenges whose scheme and parameter names
// are tokens (names lower-cased), and a Bearer challenge written back with
// its parameters quoted parses to the same parameters.
func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		``, `Bearer`, `Bearer realm="mcp"`,
		`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`,
		`Basic realm="x, y", Bearer error=invalid_token,error_description="a \"quoted\" word"`,
		`Negotiate abc+/==, Bearer`, `Bearer Scope = "a b" , SCOPE="c"`, `"junk`, `Bearer a="un`,
		`Bearer error="insufficient_scope", scope="a b", resource_metadata="http://169.254.169.254/"`,
		`,,, ,Bearer ,, a=b,,c="d\`, "Bearer a=\"\x00\xff\"", `Bearer ===, x`, `Bearer a=, b=`, `a b c d`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		cs := ParseChallenges(h)
		for _, c := range cs {
			if c.Scheme == "" || strings.IndexFunc(c.Scheme, func(r rune) bool { return r > 0x7f || !isTChar(byte(r)) }) >= 0 {
				t.Fatalf("%q: scheme %q", h, c.Scheme)
			}
			if c.Params == nil {
				t.Fatalf("%q: nil params", h)
			}
			for name := range c.Params {
				if name == "" || name != strings.ToLower(name) {
					t.Fatalf("%q: parameter name %q", h, name)
				}
			}
		}
		b := BearerChallenge(h)
		if b.Params == nil {
			t.Fatalf("%q: BearerChallenge has nil params", h)
		}
		NeedsDiscovery(403, h)
		// Written back with every value quoted, the parameters survive.
		var parts []string
		for name, v := range b.Params {
			parts = append(parts, fmt.Sprintf(`%s="%s"`, name, strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v)))
		}
		if b.Token68 != "" || len(parts) == 0 {
			return
		}
		again := BearerChallenge("Bearer " + strings.Join(parts, ", "))
		for name, v := range b.Params {
			if again.Params[name] != v {
				t.Fatalf("%q: parameter %s=%q came back as %q", h, name, v, again.Params[name])
			}
		}
	})
}
