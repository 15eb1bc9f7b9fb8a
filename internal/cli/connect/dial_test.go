package connect_test

import (
	"net"
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
