package oauth

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	cases := map[string][]Challenge{
		`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`: {
			{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource", "scope": "files:read"}}},
		`Basic realm="x, y", Bearer error=invalid_token,error_description="a \"quoted\" word"`: {
			{Scheme: "Basic", Params: map[string]string{"realm": "x, y"}},
			{Scheme: "Bearer", Params: map[string]string{"error": "invalid_token", "error_description": `a "quoted" word`}}},
		`Negotiate abc+/==, Bearer`: {
			{Scheme: "Negotiate", Params: map[string]string{}, Token68: "abc+/=="},
			{Scheme: "Bearer", Params: map[string]string{}}},
		`Bearer Scope = "a b" , SCOPE="c"`: {{Scheme: "Bearer", Params: map[string]string{"scope": "a b"}}},
		`Bearer error_description="scope=x", scope="real"`: {
			{Scheme: "Bearer", Params: map[string]string{"error_description": "scope=x", "scope": "real"}}},
		``:             nil,
		`"junk`:        {{Scheme: "junk", Params: map[string]string{}}},
		`Bearer a="un`: {{Scheme: "Bearer", Params: map[string]string{"a": "un"}}},
	}
	for in, want := range cases {
		if got := ParseChallenges(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseChallenges(%q)\n got %+v\nwant %+v", in, got, want)
		}
	}
	if c := BearerChallenge(`Basic realm="r", Bearer scope="s"`); c.Params["scope"] != "s" {
		t.Errorf("bearerChallenge: %+v", c)
	}
}

func TestWellKnownURIs(t *testing.T) {
	u := func(s string) *url.URL { v, _ := url.Parse(s); return v }
	for in, want := range map[string][]string{
		"https://mcp.example.com/public/mcp": {"https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource"},
		"https://mcp.example.com/mcp/?x=1":   {"https://mcp.example.com/.well-known/oauth-protected-resource/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource"},
		"http://127.0.0.1:8080/":             {"http://127.0.0.1:8080/.well-known/oauth-protected-resource"},
		"http://127.0.0.1:8080":              {"http://127.0.0.1:8080/.well-known/oauth-protected-resource"},
	} {
		if got := wellKnownPRM(u(in)); !slices.Equal(got, want) {
			t.Errorf("wellKnownPRM(%s) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string][]string{
		"https://auth.example.com/tenant1": {"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://auth.example.com/.well-known/openid-configuration/tenant1", "https://auth.example.com/tenant1/.well-known/openid-configuration"},
		"https://auth.example.com/": {"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"},
		"https://auth.example.com":  {"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"},
	} {
		if got := wellKnownAS(u(in)); !slices.Equal(got, want) {
			t.Errorf("wellKnownAS(%s) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		resource, server string
		ok               bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true},
		{"https://MCP.example.com:443/mcp/", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/m", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp/x", "https://mcp.example.com/mcp", false},
		{"http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", false},
		{"https://other.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"/mcp", "https://mcp.example.com/mcp", false},
	} {
		if got := resourceMatches(tc.resource, u(tc.server)); got != tc.ok {
			t.Errorf("resourceMatches(%s, %s) = %v", tc.resource, tc.server, got)
		}
	}
}

// The diagnosis marshals with named kinds (for --json).
func TestAuthDiscoveryJSON(t *testing.T) {
	a := &Discovery{Status: 401, Problems: []*Problem{{Kind: ProblemNoS256, Msg: "m", Err: errors.New("hidden")}}}
	b, err := json.Marshal(a)
	if err != nil || string(b) != `{"status":401,"problems":[{"kind":"no-s256","message":"m"}]}` {
		t.Errorf("%s %v", b, err)
	}
}
