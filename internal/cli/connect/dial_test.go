package connect_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// The headless commands work over both HTTP transports, chosen explicitly
// or detected (auto falls back to legacy SSE on the SSE endpoint).
func TestHTTPEverything(t *testing.T) {
	streamable := peertest.EverythingHTTP(t, "streamableHttp")
	sse := peertest.EverythingHTTP(t, "sse")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"streamable", []string{"--url", streamable + "/mcp", "--transport", "streamable"}},
		{"auto streamable", []string{"--url", streamable + "/mcp"}},
		{"sse", []string{"--url", sse + "/sse", "--transport", "sse"}},
		{"auto sse", []string{"--url", sse + "/sse"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.RunSonde(t, "", append([]string{"call", "get-sum", "--args", `{"a":2,"b":40}`}, tc.args...)...)
			if r.Code != 0 || !strings.Contains(r.Stdout, "42") {
				t.Fatalf("call: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
			}
			r = clitest.RunSonde(t, "", append([]string{"tools"}, tc.args...)...)
			if r.Code != 0 || !strings.Contains(r.Stdout, "trigger-long-running-operation") {
				t.Fatalf("tools: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
			}
			r = clitest.RunSonde(t, "", append([]string{"check", "--json"}, tc.args...)...)
			if r.Code != 0 {
				t.Fatalf("check: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
			}
		})
	}
	t.Run("trace shows the exchanges with secrets redacted", func(t *testing.T) {
		t.Setenv("SONDE_TEST_TOKEN", "s3cret-token")
		r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"message":"hi"}`, "--url", streamable+"/mcp", "--trace",
			"--header", "X-Api-Key: k3y-value", "--bearer-token-env", "SONDE_TEST_TOKEN")
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		for _, want := range []string{"POST " + streamable + "/mcp → 200", "< Mcp-Session-Id:", "> MCP-Protocol-Version: 2025-11-25",
			"> Authorization: Bearer «redacted»", "> X-Api-Key: «redacted»", "priming event", "[POST 2", "DELETE"} {
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("trace lacks %q", want)
			}
		}
		for _, secret := range []string{"s3cret-token", "k3y-value"} {
			if strings.Contains(r.Stderr+r.Stdout, secret) {
				t.Errorf("secret %q shown", secret)
			}
		}
	})
}

func TestHTTPUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		line string
	}{
		{"command and url", []string{"tools", "--url", "http://127.0.0.1:1/mcp", "--", "srv"}, "sonde: give either --url or a server command after --, not both"},
		{"bad header", []string{"tools", "--url", "http://127.0.0.1:1/mcp", "--header", "NoColon"}, `sonde: --header "«redacted»": want 'Name: value'`},
		{"unset token", []string{"tools", "--url", "http://127.0.0.1:1/mcp", "--bearer-token-env", "SONDE_NO_SUCH_VAR"}, "sonde: --bearer-token-env SONDE_NO_SUCH_VAR: the variable is unset or empty"},
		{"bad transport", []string{"tools", "--url", "http://127.0.0.1:1/mcp", "--transport", "ws"}, `sonde: --transport "ws": want auto, streamable or sse`},
		{"header without url", []string{"tools", "--header", "A: b", "--", "srv"}, "sonde: --header, --bearer-token-env, --insecure and --reconnect need --url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clitest.CheckRun(t, clitest.RunSonde(t, "", tc.args...), cmdutil.ExitUsage, tc.line+"\n")
		})
	}
}

// The flags of the OAuth grants: what each needs, what excludes what, and
// private keys refused before anything is sent (the key never shown).
func TestOAuthGrantUsage(t *testing.T) {
	dir := t.TempDir()
	pub := filepath.Join(dir, "pub.pem")
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	short := filepath.Join(dir, "short.pem")
	shortPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)})
	pubDER, _ := x509.MarshalPKIXPublicKey(rsaKey.Public())
	if os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o600) != nil || os.WriteFile(short, shortPEM, 0o600) != nil {
		t.Fatal("writing the keys")
	}
	t.Setenv("SONDE_TEST_SECRET", "s3cret")
	t.Setenv("SONDE_TEST_EMPTY", "")
	empty := filepath.Join(dir, "empty")
	if os.WriteFile(empty, []byte("\nsecond line\n"), 0o600) != nil {
		t.Fatal("writing the empty secret")
	}
	url := []string{"tools", "--url", "http://127.0.0.1:1/mcp", "--oauth"}
	for _, tc := range []struct {
		name string
		args []string
		line string
	}{
		{"bad grant", []string{"--oauth-grant", "implicit"}, `sonde: --oauth-grant "implicit": want authorization-code, client-credentials or cross-app-access`},
		{"grant without oauth", []string{"tools", "--url", "http://127.0.0.1:1/mcp", "--oauth-grant", "client-credentials"}, "sonde: --oauth-client-id, --oauth-client-secret-env, --oauth-client-secret-file, --oauth-dpop, --oauth-grant, --oauth-private-key, --oauth-assertion-audience, --oauth-id-token-env, --oauth-id-token-file and --oauth-idp-* need --oauth"},
		{"machine grant without a client", []string{"--oauth-grant", "client-credentials"}, "sonde: --oauth-grant client-credentials needs a registered client: --oauth-client-id with --oauth-client-secret-env, --oauth-client-secret-file or --oauth-private-key"},
		{"machine grant without a secret", []string{"--oauth-grant", "client-credentials", "--oauth-client-id", "c"}, "sonde: --oauth-grant client-credentials needs a registered client: --oauth-client-id with --oauth-client-secret-env, --oauth-client-secret-file or --oauth-private-key"},
		{"key without client", []string{"--oauth-private-key", pub}, "sonde: --oauth-private-key needs --oauth-client-id"},
		{"key and secret", []string{"--oauth-client-id", "c", "--oauth-private-key", pub, "--oauth-client-secret-env", "SONDE_TEST_SECRET"}, "sonde: --oauth-private-key and --oauth-client-secret-env/-file exclude each other: private_key_jwt or a client secret"},
		{"public key", []string{"--oauth-client-id", "c", "--oauth-private-key", pub}, "sonde: --oauth-private-key " + pub + ": unusable private key: the PEM block is a public key, not a private key"},
		{"short RSA key", []string{"--oauth-client-id", "c", "--oauth-private-key", short}, "sonde: --oauth-private-key " + short + ": unusable private key: a 1024-bit RSA key (want 2048 bits or more)"},
		{"secret file and env", []string{"--oauth-client-id", "c", "--oauth-client-secret-file", pub, "--oauth-client-secret-env", "SONDE_TEST_SECRET"}, "sonde: --oauth-client-secret-file and --oauth-client-secret-env exclude each other"},
		{"secret file empty", []string{"--oauth-client-id", "c", "--oauth-client-secret-file", empty}, "sonde: --oauth-client-secret-file " + empty + ": the file's first line is empty"},
		{"secret file without client", []string{"--oauth-client-secret-file", pub}, "sonde: --oauth-client-secret-file needs --oauth-client-id"},
		{"bad dpop", []string{"--oauth-dpop", "sometimes"}, `sonde: --oauth-dpop "sometimes": want auto, always or never`},
		{"dpop without oauth", []string{"tools", "--url", "http://127.0.0.1:1/mcp", "--oauth-dpop", "always"}, "sonde: --oauth-client-id, --oauth-client-secret-env, --oauth-client-secret-file, --oauth-dpop, --oauth-grant, --oauth-private-key, --oauth-assertion-audience, --oauth-id-token-env, --oauth-id-token-file and --oauth-idp-* need --oauth"},
		{"bad audience", []string{"--oauth-assertion-audience", "resource"}, `sonde: --oauth-assertion-audience "resource": want issuer or token-endpoint`},
		{"audience without key", []string{"--oauth-assertion-audience", "token-endpoint"}, "sonde: --oauth-assertion-audience needs --oauth-private-key"},
		{"bad metadata URL", []string{"--oauth-client-id", "https://app.example.com/c.json#frag"}, "sonde: --oauth-client-id https://app.example.com/c.json#frag: a client metadata document's URL must not have a fragment"},
		{"id token without cross-app", []string{"--oauth-id-token-env", "SONDE_TEST_SECRET"}, "sonde: --oauth-id-token-env, --oauth-id-token-file and --oauth-idp-* need --oauth-grant cross-app-access"},
		{"cross-app without assertion", []string{"--oauth-grant", "cross-app-access", "--oauth-client-id", "c", "--oauth-client-secret-env", "SONDE_TEST_SECRET"}, "sonde: --oauth-grant cross-app-access needs the identity assertion: --oauth-id-token-env NAME or --oauth-id-token-file FILE"},
		{"cross-app, empty assertion", []string{"--oauth-grant", "cross-app-access", "--oauth-client-id", "c", "--oauth-client-secret-env", "SONDE_TEST_SECRET", "--oauth-id-token-env", "SONDE_TEST_EMPTY"}, "sonde: --oauth-id-token-env SONDE_TEST_EMPTY: the variable is unset or empty"},
		{"cross-app without IdP", []string{"--oauth-grant", "cross-app-access", "--oauth-client-id", "c", "--oauth-client-secret-env", "SONDE_TEST_SECRET", "--oauth-id-token-file", pub}, "sonde: --oauth-grant cross-app-access needs --oauth-idp-token-endpoint URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] != "tools" {
				args = append(slices.Clone(url), args...)
			}
			r := clitest.RunSonde(t, "", args...)
			clitest.CheckRun(t, r, cmdutil.ExitUsage, tc.line+"\n")
			if strings.Contains(r.Stderr, string(shortPEM[40:60])) {
				t.Error("the key is shown")
			}
		})
	}
}

// A server that is not there is MCP_HTTP (exit 10) with the reason.
func TestHTTPConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := clitest.RunSonde(t, "", "tools", "--url", "http://"+addr+"/mcp")
	if r.Code != cmdutil.ExitHTTP || !strings.Contains(r.Stderr, "sonde: MCP_HTTP: initialize 1: POST http://"+addr+"/mcp: ") || !strings.Contains(r.Stderr, "connection refused") {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
}
