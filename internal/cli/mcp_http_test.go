package cli_test

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// startMCPHTTP runs sonde mcp --listen 127.0.0.1:0 and returns its URL
// and token (read from its stderr) and the process.
func startMCPHTTP(t *testing.T, allow [][]string, extra ...string) (url, token string, cmd *exec.Cmd) {
	t.Helper()
	cmd = mcpCommand(allow, append([]string{"--listen", "127.0.0.1:0"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	urlRE, tokenRE := regexp.MustCompile(`listening on (http://\S+/mcp)$`), regexp.MustCompile(`^token: ([0-9a-f]{48})$`)
	for (url == "" || token == "") && sc.Scan() {
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
		if m := tokenRE.FindStringSubmatch(sc.Text()); m != nil {
			token = m[1]
		}
	}
	if url == "" || token == "" {
		t.Fatalf("sonde mcp --listen printed no URL and token")
	}
	go io.Copy(io.Discard, stderr)
	return url, token, cmd
}

// bearer adds the token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPHTTP: sonde mcp --listen over a real loopback socket: 401
// without the token, 403 for a foreign Origin or Host, the Go SDK's
// Streamable HTTP client through the whole session, and after SIGTERM
// no process left (the fixture's pids, NewFixture's cleanup).
func TestMCPHTTP(t *testing.T) {
	fx := clitest.NewFixture(t)
	plain, silent := fx.Argv(), fx.Argv("--fault", "never-respond")
	url, token, cmd := startMCPHTTP(t, [][]string{plain, silent})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		name   string
		header map[string]string
		host   string
		want   int
	}{
		{"no token", nil, "", http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 48)}, "", http.StatusUnauthorized},
		{"foreign origin", map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}, "", http.StatusForbidden},
		{"rebinding host", map[string]string{"Authorization": "Bearer " + token}, "evil.example", http.StatusForbidden},
		{"token", map[string]string{"Authorization": "Bearer " + token}, "", http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	for _, pv := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(pv, func(t *testing.T) {
			cs := sdkClient(t, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, pv)
			checkSession(t, cs, plain, silent)
		})
	}
	// a session left running, then SIGTERM: sonde mcp ends, and so does it
	cs := sdkClient(t, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, "")
	startSession(t, cs, plain)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(mcpBound):
		t.Fatal("sonde mcp did not end after SIGTERM")
	}
}

// TestMCPStdioSIGTERM: sonde mcp on stdio with a session running ends its
// server on SIGTERM, one that ignores SIGTERM and stdin's end too (sonde
// kills it): no process left.
func TestMCPStdioSIGTERM(t *testing.T) {
	fx := clitest.NewFixture(t)
	stubborn := fx.Argv("--fault", "ignore-sigterm")
	cmd := mcpCommand([][]string{stubborn})
	cs := sdkClient(t, &sdk.CommandTransport{Command: cmd}, "")
	startSession(t, cs, stubborn)
	fx.AssertStarted(1)
	cmd.Process.Signal(syscall.SIGTERM)
	proctest.AssertGone(t, fx.PIDFile)
}
