package tap_test

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestListenOrigin: `sonde tap --listen` in front of the fixture refuses
// (403) a request from a web page of another origin, and one with Origin
// null, before it reaches the server (the recording has no exchange of
// them, and stderr says why); the page --allow-origin names, a loopback
// page and a host that sends no Origin are forwarded.
func TestListenOrigin(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--record", rec, "--allow-origin", "https://inspector.example")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	// The fixture refuses a page of another origin itself (403): what
	// the tap forwarded is told by the recording.
	for origin, want := range map[string]int{
		"http://evil.example":       http.StatusForbidden,
		"null":                      http.StatusForbidden,
		"https://inspector.example": http.StatusForbidden,
		"http://localhost:6274":     http.StatusOK,
		"":                          http.StatusOK,
	} {
		req, _ := http.NewRequest(http.MethodPost, tap.url, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %q: %d, want %d", origin, resp.StatusCode, want)
		}
	}
	tap.stop(t)
	posts, allowed := 0, false
	for _, r := range readCapture(t, rec) {
		if r.Type == capture.TypeHTTP && r.HTTP.Method == http.MethodPost {
			posts++
			for _, h := range r.HTTP.Header {
				if strings.Contains(h, "evil.example") || strings.Contains(h, "Origin: null") {
					t.Errorf("a refused request reached the server: %q", r.HTTP.Header)
				}
				allowed = allowed || h == "> Origin: https://inspector.example"
			}
		}
	}
	if posts != 3 || !allowed {
		t.Errorf("%d POST exchanges recorded (the allowed origin's among them: %v), want the 3 forwarded", posts, allowed)
	}
	if !strings.Contains(tap.errText(), `refused a request with Origin "null"`) {
		t.Errorf("stderr does not say what was refused:\n%s", tap.errText())
	}
}

// TestListenAllowOriginUsage: an --allow-origin that is not an origin,
// and "null" (which every sandboxed page sends), are usage errors.
func TestListenAllowOriginUsage(t *testing.T) {
	for _, origin := range []string{"null", "evil.example", "https://inspector.example/path", "ftp://x", "*"} {
		res := clitest.RunSonde(t, "", "tap", "--listen", "127.0.0.1:0", "--target", "http://127.0.0.1:1/mcp", "--no-record", "--allow-origin", origin)
		if res.Code != 2 || !strings.Contains(res.Stderr, "--allow-origin") {
			t.Errorf("--allow-origin %q: exit %d, want 2 (usage)\n%s", origin, res.Code, res.Stderr)
		}
	}
}
