package tap_test

import (
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
