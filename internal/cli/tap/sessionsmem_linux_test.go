package tap_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestListenThousandSessionsMemory: 1,000 HTTP sessions that the hosts
// never end (each an initialize, its notifications/initialized and one
// call, 16 hosts at a time, never a DELETE), through one `sonde tap
// --listen` recording each into the sessions folder, against the
// fixture over loopback: the tap's peak RSS (VmHWM) stays under 150 MiB.
// Each session used to cost the tap about 2.6 MB (its observer's
// retired-id maps, made whole up front), 1,000 of them 2.6 GB.
func TestListenThousandSessionsMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory is not the tap's")
	}
	if testing.Short() {
		t.Skip("1,000 sessions")
	}
	const sessions, hosts = 1000, 16
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--label", "many")
	work := make(chan int)
	errs := make(chan error, sessions)
	var wg sync.WaitGroup
	for range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 60 * time.Second}
			for n := range work {
				errs <- openSession(hc, tap.url, n)
			}
		}()
	}
	for n := range sessions {
		work <- n
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("%v\n%s", err, tap.errText())
		}
	}
	// Every session has its recording (the tap's own is one more).
	deadline := time.Now().Add(60 * time.Second)
	var recs []string
	for {
		recs, _ = filepath.Glob(filepath.Join(home, "sessions", "many-*.jsonl"))
		if len(recs) >= sessions+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	peak, now := vmHWM(t, tap.cmd.Process.Pid), vmRSS(t, tap.cmd.Process.Pid)
	t.Logf("%d sessions open: the tap's RSS %.1f MiB, peak %.1f MiB; %d recordings", sessions, float64(now)/(1<<20), float64(peak)/(1<<20), len(recs))
	if len(recs) < sessions+1 {
		t.Errorf("%d recordings, want %d", len(recs), sessions+1)
	}
	if peak > 150<<20 {
		t.Errorf("the tap's peak RSS %.1f MiB with %d sessions open, want at most 150 MiB", float64(peak)/(1<<20), sessions)
	}
}

// vmRSS is the resident set size of process pid, in bytes.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
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
