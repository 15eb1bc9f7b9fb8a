package tap_test

import (
	"net/http"
	"path/filepath"
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
