package transport

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/transport/oauth"
)

// Metadata whose issuer is not the authorization server the PRM names
// must not be used (RFC 8414 §3.3): the flow refuses before registering
// at its endpoints, which are another server's.
func TestHostile_OAuthIssuerMismatch(t *testing.T) {
	evil := newSink(t)
	srv := newAuthServer(t, func(base string) string { return base + "/as" }, func(string) string { return asMeta(evil.URL, evil.URL) })
	oe := discoveryRefusal(t, srv.URL+"/mcp")
	if !strings.Contains(oe.Msg, "names issuer "+evil.URL+", not "+srv.URL+"/as") || !strings.Contains(oe.Msg, "RFC 8414") {
		t.Fatalf("%v", oe)
	}
	if got := evil.requests(); len(got) != 0 {
		t.Errorf("the other issuer's endpoints got %q", got)
	}
}

// The authorization, token and registration endpoints must be https,
// unless on a loopback host: the flow refuses before any of them.
func TestHostile_OAuthPlainHTTPEndpoint(t *testing.T) {
	srv := newAuthServer(t, func(base string) string { return base + "/as" }, func(base string) string {
		return fmt.Sprintf(`{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"registration_endpoint":%q,"code_challenge_methods_supported":["S256"]}`,
			base+"/as", base+"/as/authorize", "http://token.sonde-test.invalid/token", base+"/as/register")
	})
	oe := discoveryRefusal(t, srv.URL+"/mcp")
	if !strings.Contains(oe.Msg, "token_endpoint http://token.sonde-test.invalid/token is not https") {
		t.Fatalf("%v", oe)
	}
	for _, r := range srv.requests() {
		if strings.HasPrefix(r, "POST /as/") || strings.HasPrefix(r, "GET /as/") {
			t.Errorf("the flow went on: %s", r)
		}
	}
}

// discoveryRefusal dials url with OAuth on and returns the error that
// refused the first request, failing unless it is an OAuth discovery error.
func discoveryRefusal(t *testing.T, url string) *oauth.Error {
	t.Helper()
	h, err := DialHTTP(HTTPConfig{URL: url, Mode: ModeStreamable, OAuth: &oauth.Config{Browser: oauth.BrowserFetch, Timeout: 5 * time.Second}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	xe := refusal(t, h, initLine)
	var oe *oauth.Error
	if !errors.As(xe, &oe) || oe.Step != "discovery" {
		t.Fatalf("not a discovery error: %v", xe)
	}
	return oe
}
