package tap_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestListenSessionBounds: `sonde tap --listen` before the fixture, with
// --max-sessions 2: a third session closes the recording of the one idle
// the longest; with --session-idle 300ms, a session nothing went by in is
// closed. Each is said in its recording, in the tap's own and on stderr,
// none silently.
func TestListenSessionBounds(t *testing.T) {
	for _, tc := range []struct {
		flag, value, why string
		sessions, closed int
	}{
		{"--max-sessions", "2", "sessions were open (--max-sessions)", 3, 1},
		{"--session-idle", "300ms", "(--session-idle)", 2, 2},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("SONDE_HOME", home)
			tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--label", "few", tc.flag, tc.value)
			hc := &http.Client{Timeout: 30 * time.Second}
			for n := range tc.sessions {
				if err := openSession(hc, tap.url, n); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			for strings.Count(tap.errText(), tc.why) < tc.closed && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if got := strings.Count(tap.errText(), tc.why); got != tc.closed {
				t.Fatalf("stderr says %d sessions closed (%s), want %d:\n%s", got, tc.why, tc.closed, tap.errText())
			}
			tap.stop(t)
			first, _ := filepath.Glob(filepath.Join(home, "sessions", "few-1-*.jsonl"))
			if len(first) != 1 || !strings.Contains(notes(t, first[0]), tc.why) {
				t.Fatalf("the first session's recording %v does not say it was closed", first)
			}
			main, _ := filepath.Glob(filepath.Join(home, "sessions", "few-2026*.jsonl"))
			if len(main) != 1 || strings.Count(notes(t, main[0]), "ended; its recording") < tc.closed {
				t.Errorf("the tap's own recording does not say the sessions' ends:\n%s", notes(t, main[0]))
			}
		})
	}
}

// openSession runs a host's start of session n on url: initialize, its
// notifications/initialized and one echo call, in the session the answer
// named; it never ends the session.
func openSession(hc *http.Client, url string, n int) error {
	post := func(sid, body string) (string, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			return "", fmt.Errorf("session %d: HTTP %d: %s", n, resp.StatusCode, b)
		}
		return resp.Header.Get("Mcp-Session-Id"), nil
	}
	sid, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`)
	if err != nil {
		return err
	}
	if sid == "" {
		return fmt.Errorf("session %d: the server gave no Mcp-Session-Id", n)
	}
	if _, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}
	_, err = post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"value":"s%d"}}}`, n))
	return err
}
