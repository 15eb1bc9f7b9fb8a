package tap_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestTapMemoryFlat: the tap's peak RSS does not grow with the session's
// length: a session of 100,000 notifications and one of 300,000, each
// recorded whole, both stay under 50 MiB, the longer within 8 MiB of the
// shorter (the tap process's VmHWM).
func TestTapMemoryFlat(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory is not the tap's")
	}
	if testing.Short() {
		t.Skip("a long session")
	}
	rss := map[int]int64{}
	for _, n := range []int{100000, 300000} {
		fx := clitest.NewFixture(t)
		rec := filepath.Join(t.TempDir(), "s.jsonl")
		h := startHost(t, nil, append([]string{os.Args[0], "tap", "--record", rec, "--"}, fx.Argv("--fault", "notification-flood", "--flood-count", strconv.Itoa(n))...)...)
		h.write(initLine)
		h.await(`"serverInfo"`, 1)
		h.write(initialized, echoCall(2, "end", 0))
		h.await(`{"value":"end"}`, 1)
		// The flood came before the answer: the tap's peak so far is its
		// peak (VmHWM: its own, not its server's).
		time.Sleep(200 * time.Millisecond) // let the recording catch up
		rss[n] = vmHWM(t, h.cmd.Process.Pid)
		h.stdin.Close()
		if code := h.wait(); code != 0 {
			t.Fatalf("exit %d\n%s", code, h.stderr())
		}
		var frames int
		var missed uint64
		for _, r := range readCapture(t, rec) {
			if r.Type == capture.TypeFrame {
				frames++
			}
			if r.Type == capture.TypeMissed {
				missed += r.Count
			}
		}
		t.Logf("%d notifications: peak RSS %.1f MiB, %d frames recorded, %d events missed", n, float64(rss[n])/(1<<20), frames, missed)
		// A missed record counts events the recording lost, or reads
		// observation lost (each may hold many lines): with none, every
		// frame is there.
		if missed == 0 && frames < n || frames < n/2 {
			t.Errorf("%d frames recorded and %d missed, want %d", frames, missed, n)
		}
	}
	if rss[300000] > 50<<20 || rss[100000] > 50<<20 || rss[300000] > rss[100000]+8<<20 {
		t.Errorf("peak RSS %v", rss)
	}
}

// vmHWM is the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
