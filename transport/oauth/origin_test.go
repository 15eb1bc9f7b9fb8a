package oauth

import (
	"net/url"
	"testing"
)

// TestSameOrigin: scheme, host and port decide, without regard to case,
// with the scheme's default port made explicit; path, user and query do not
// count.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://mcp.example/a", "https://mcp.example/b?x=1", true},
		{"https://mcp.example/", "https://mcp.example:443/", true},
		{"HTTPS://MCP.example/", "https://mcp.EXAMPLE/", true},
		{"http://h/", "http://h:80/", true},
		{"https://u:pw@h/", "https://h/", true},
		{"https://mcp.example/", "http://mcp.example/", false},
		{"https://mcp.example/", "https://mcp.example:444/", false},
		{"http://h/", "http://h:443/", false},
		{"https://mcp.example/", "https://evil.example/", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := SameOrigin(a, b); got != tc.same {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
