package connect_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// Every HTTP fault of the fixture gives the report docs/fixtures.md and
// docs/errors.md promise, with its stable code and exit status.
func TestHTTPFixtureFaults(t *testing.T) {
	echo := []string{"call", "echo", "--args", `{"value":"hi"}`}
	cases := []struct {
		name    string
		fixture []string
		sonde   []string
		code    int
		stdout  string   // substring
		stderr  []string // substrings
	}{
		{name: "sse answers", sonde: echo, stdout: "hi"},
		{name: "json answers", fixture: []string{"--http-json"}, sonde: echo, stdout: "hi"},
		{name: "legacy sse", sonde: append(echo, "--transport", "sse"), stdout: "hi"},
		{name: "resume after a dropped stream", fixture: []string{"--fault", "http-drop-stream"}, sonde: append(echo, "--trace"), stdout: "hi",
			stderr: []string{"resuming in 300ms with Last-Event-ID p", "> Last-Event-ID: p", "[GET resume 2"}},
		{name: "no GET stream", fixture: []string{"--fault", "http-no-get"}, sonde: append(echo, "--trace"), stdout: "hi",
			stderr: []string{"the server offers no GET stream (405)"}},
		{name: "unauthorized", fixture: []string{"--fault", "http-unauthorized"}, sonde: echo, code: cmdutil.ExitHTTP,
			stderr: []string{"sonde: MCP_HTTP: initialize 1: HTTP 401: ", `WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1:`, "(resource metadata: http://127.0.0.1:", "/.well-known/oauth-protected-resource/mcp)",
				"/mcp); authorization: resource http://127.0.0.1:", "/mcp, authorization server http://127.0.0.1:", "/as (S256 ok, dynamic registration at http://127.0.0.1:", "/as/register), scope fixture:tools; pass credentials with", "--bearer-token-env"}},
		{name: "unauthorized, discovery traced", fixture: []string{"--fault", "http-unauthorized", "--http-auth", "no-resource-metadata,root-metadata"}, sonde: append(echo, "--trace"), code: cmdutil.ExitHTTP,
			stderr: []string{"/.well-known/oauth-protected-resource/mcp → 404 in ", "[auth]: protected resource metadata (well-known URI 1 of 2): GET http://127.0.0.1:",
				"/.well-known/oauth-protected-resource → 200 in ", "[auth]: protected resource metadata (well-known URI 2 of 2): resource http://127.0.0.1:",
				"/.well-known/oauth-authorization-server/as → 200 in ", "> Accept: application/json", "authorization: resource http://127.0.0.1:"}},
		{name: "unauthorized, metadata not JSON", fixture: []string{"--fault", "http-unauthorized", "--http-auth", "prm-not-json"}, sonde: echo, code: cmdutil.ExitHTTP,
			stderr: []string{"sonde: MCP_HTTP: initialize 1: HTTP 401: ", "; authorization: no protected resource metadata, scope fixture:tools; problems: protected resource metadata: GET http://127.0.0.1:",
				`/.well-known/oauth-protected-resource/mcp: not a JSON object (Content-Type "text/html; charset=utf-8"): an HTML page titled "sonde fixture"`}},
		{name: "unauthorized, no S256", fixture: []string{"--fault", "http-unauthorized", "--http-auth", "no-s256"}, sonde: echo, code: cmdutil.ExitHTTP,
			stderr: []string{"(no S256 in code_challenge_methods_supported: clients must refuse, dynamic registration at ", "problems: the authorization server supports PKCE methods plain, not S256: an MCP client must refuse to proceed"}},
		{name: "insufficient scope", fixture: []string{"--fault", "http-unauthorized", "--http-auth", "insufficient-scope"}, sonde: append(echo, "--header", "Authorization: Bearer sonde-test-token"), code: cmdutil.ExitHTTP,
			stderr: []string{"sonde: MCP_HTTP: tools/call 2: HTTP 403: ", `error="insufficient_scope"`, "; authorization: error insufficient_scope, resource http://127.0.0.1:", ", scope fixture:tools fixture:admin; pass credentials"}},
		{name: "authorized", fixture: []string{"--fault", "http-unauthorized", "--http-token", "tok-123"}, sonde: append(echo, "--header", "Authorization: Bearer tok-123"), stdout: "hi"},
		{name: "oauth, no S256", fixture: []string{"--fault", "http-unauthorized", "--http-auth", "no-s256"}, sonde: append(echo, "--oauth", "--oauth-browser", "fetch"), code: cmdutil.ExitHTTP,
			stderr: []string{"sonde: MCP_HTTP: initialize 1: HTTP 401: ", "; OAuth pkce: the authorization server metadata lacks S256 in code_challenge_methods_supported: refusing to proceed"}},
		{name: "oauth, no registration", fixture: []string{"--fault", "http-unauthorized", "--http-auth", "no-registration"}, sonde: append(echo, "--oauth", "--oauth-browser", "fetch"), code: cmdutil.ExitHTTP,
			stderr: []string{"; OAuth registration: the authorization server offers no dynamic registration (no registration_endpoint): register a client there and pass --oauth-client-id"}},
		{name: "oauth, given client id", fixture: []string{"--fault", "http-unauthorized", "--http-auth", "no-registration"}, sonde: append(echo, "--oauth", "--oauth-browser", "fetch", "--oauth-client-id", "my-client"), stdout: "hi"},
		{name: "oauth, step-up", fixture: []string{"--fault", "http-unauthorized", "--http-auth", "insufficient-scope"}, sonde: append(echo, "--oauth", "--oauth-browser", "fetch"), stdout: "hi"},
		{name: "oauth, URL printed, nobody comes", fixture: []string{"--fault", "http-unauthorized"}, sonde: append(echo, "--oauth", "--oauth-timeout", "500ms"), code: cmdutil.ExitHTTP,
			stderr: []string{"sonde: open this URL to authorize sonde (waiting up to 500ms for the redirect):\nhttp://127.0.0.1:", "/as/authorize?client_id=fixture-client-", "code_challenge_method=S256",
				"; OAuth authorization: no authorization response came back to http://127.0.0.1:"}},
		{name: "session expiry", fixture: []string{"--fault", "http-session-expiry", "--session-requests", "0"}, sonde: echo, code: cmdutil.ExitExpired,
			stderr: []string{"sonde: MCP_SESSION_EXPIRED: tools/call 2: HTTP 404 for session ", "re-initialize (ctrl+r in the UI, or --reconnect)"}},
		// Every session of this fixture expires at once: --reconnect starts
		// one new session, retries once, and reports the second expiry.
		{name: "session expiry with --reconnect", fixture: []string{"--fault", "http-session-expiry", "--session-requests", "0"}, sonde: append(echo, "--reconnect"), code: cmdutil.ExitExpired,
			stderr: []string{"sonde: MCP_SESSION_EXPIRED: tools/call 2: HTTP 404 for session", "--reconnect: starting a new session\nsonde: MCP_SESSION_EXPIRED: tools/call 2: HTTP 404 for session "}},
		{name: "expiry as 400", fixture: []string{"--fault", "http-expiry-400", "--session-requests", "0"}, sonde: echo, code: cmdutil.ExitRemote,
			stderr: []string{"sonde: MCP_ERROR: server error -32000: ", "(HTTP 400)"}},
		{name: "mislabeled json", fixture: []string{"--fault", "http-mislabeled-json"}, sonde: echo, code: cmdutil.ExitProtocol,
			stderr: []string{"sonde: MCP_PROTOCOL: tools/call 2: the application/json answer is not its response: "}},
		{name: "mislabeled sse", fixture: []string{"--fault", "http-mislabeled-sse"}, sonde: echo, code: cmdutil.ExitHTTP,
			stderr: []string{"sonde: MCP_HTTP: tools/call 2: the server closed the response stream before the response, and it sent no event id to resume from"}},
		{name: "unterminated event", fixture: []string{"--fault", "http-unterminated-event"}, sonde: append(echo, "--trace"), code: cmdutil.ExitHTTP,
			stderr: []string{"stream ended inside an SSE event", "not dispatched", "sonde: MCP_HTTP: tools/call 2: "}},
		{name: "endless event", fixture: []string{"--fault", "http-endless-event"}, sonde: append(echo, "--max-line-bytes", "1MiB"), code: cmdutil.ExitProtocol,
			stderr: []string{"sonde: MCP_PROTOCOL: tools/call 2: SSE event exceeds 1048576 bytes (--max-line-bytes); the stream was dropped"}},
		// A cap smaller than the kept prefix of an oversized body (256 bytes).
		{name: "json answer over the cap", fixture: []string{"--http-json"}, sonde: append(echo, "--max-line-bytes", "200"), code: cmdutil.ExitProtocol,
			stderr: []string{"sonde: MCP_PROTOCOL: initialize 1: JSON answer exceeds 200 bytes (--max-line-bytes)"}},
		{name: "slow headers time out", fixture: []string{"--fault", "http-slow-headers", "--late-ms", "8000"}, sonde: append(echo, "--timeout", clitest.SlowTimeout), code: cmdutil.ExitTimeout,
			stderr: []string{"sonde: MCP_TIMEOUT: "}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := clitest.FixtureHTTP(t, tc.fixture...)
			url := base + "/mcp"
			if strings.Contains(strings.Join(tc.sonde, " "), "--transport sse") {
				url = base + "/sse"
			}
			r := clitest.RunSonde(t, "", append(append([]string{}, tc.sonde...), "--url", url)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, tc.stdout) {
				t.Errorf("stdout %q lacks %q", r.Stdout, tc.stdout)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(r.Stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
				}
			}
		})
	}
}

// --oauth --oauth-browser fetch against the fixture's authorization
// server: the call succeeds, the trace shows the flow and the Authorization
// header redacted, and no token, code or secret appears anywhere.
func TestHTTPOAuth(t *testing.T) {
	base := clitest.FixtureHTTP(t, "--fault", "http-unauthorized")
	t.Setenv("SONDE_TEST_SECRET", "s3cr3t-value")
	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"hi"}`, "--url", base+"/mcp", "--oauth", "--oauth-browser", "fetch", "--trace")
	if r.Code != 0 || !strings.Contains(r.Stdout, "hi") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"POST http://127.0.0.1:", "/as/register", "registration: ok", "token: ok", "authorized: sending initialize 1 again with the access token", "> Authorization: Bearer «redacted»"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	for _, secret := range []string{"fixture-access-", "fixture-refresh-", "fixture-code-"} {
		if strings.Contains(r.Stderr+r.Stdout, secret) {
			t.Errorf("output shows %s…:\n%s", secret, r.Stderr)
		}
	}
	// A capture of the same: no token in it.
	capFile := t.TempDir() + "/oauth.capture"
	r = clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"hi"}`, "--url", base+"/mcp", "--oauth", "--oauth-browser", "fetch", "--record", capFile)
	b, err := os.ReadFile(capFile)
	if r.Code != 0 || err != nil || !strings.Contains(string(b), "> Authorization: «redacted»") {
		t.Fatalf("--record: exit %d, %v\n%s\n%s", r.Code, err, r.Stderr, b)
	}
	for _, secret := range []string{"fixture-access-", "fixture-refresh-", "fixture-code-"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the capture shows %s…", secret)
		}
	}
	// sonde check says which grant ran, with which client, and why.
	r = clitest.RunSonde(t, "", "check", "--url", base+"/mcp", "--oauth", "--oauth-browser", "fetch")
	if r.Code != 0 || !strings.Contains(r.Stdout, "  auth grant: authorization code with PKCE (the default grant: a user signs in in a browser); a client registered dynamically at http://127.0.0.1:") ||
		!strings.Contains(r.Stdout, "since the authorization server does not support client ID metadata documents") {
		t.Errorf("check: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	// Without --oauth: MCP_HTTP, exit 10, with the hint.
	r = clitest.RunSonde(t, "", "call", "echo", "--url", base+"/mcp")
	if r.Code != cmdutil.ExitHTTP || !strings.Contains(r.Stderr, "or authorize with --oauth") {
		t.Errorf("exit %d\nstderr: %s", r.Code, r.Stderr)
	}
	// Flag errors.
	for _, args := range [][]string{
		{"--oauth", "--oauth-browser", "open"},
		{"--oauth-client-id", "x"},
		{"--oauth", "--oauth-client-secret-env", "SONDE_TEST_SECRET"},
	} {
		r = clitest.RunSonde(t, "", append([]string{"call", "echo", "--url", base + "/mcp"}, args...)...)
		if r.Code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d, want usage\n%s", args, r.Code, r.Stderr)
		}
	}
	r = clitest.RunSonde(t, "", "call", "echo", "--oauth", "--", "true")
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "--oauth needs --url") {
		t.Errorf("--oauth without --url: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TLS is verified unless --insecure, which says so loudly. The fixture's
// handler is served over a real TLS listener on loopback with a
// self-signed certificate.
func TestHTTPTLS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil) // only for its self-signed certificate
	srv.StartTLS()
	cfg := srv.TLS.Clone()
	srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fixtures.ServeHTTP(ctx, tls.NewListener(ln, cfg), nil, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	url := "https://" + ln.Addr().String() + "/mcp"
	r := clitest.RunSonde(t, "", "tools", "--url", url)
	if r.Code != cmdutil.ExitHTTP || !strings.Contains(r.Stderr, "certificate") {
		t.Fatalf("unverified certificate accepted: exit %d\n%s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "tools", "--url", url, "--insecure")
	if r.Code != 0 || !strings.Contains(r.Stdout, "echo") || !strings.Contains(r.Stderr, "sonde: warning: --insecure: the server's TLS certificate is not verified") {
		t.Fatalf("--insecure: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
}
