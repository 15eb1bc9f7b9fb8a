package tap_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// TestTapMillionFrames: a session of 1,000,000 frames (the handshake and
// 499,999 echo calls, up to 64 in flight, from a host stand-in that reads
// every answer) through `sonde tap`, recorded whole into a file, with the
// tap's peak RSS (VmHWM) under 50 MiB. It takes about a minute on two
// busy cores: not with -short, and not under the race detector (make
// test's run), whose shadow memory is not the tap's; run it with
// `go test -run TestTapMillionFrames -v ./internal/cli/tap/`.
func TestTapMillionFrames(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory is not the tap's")
	}
	if testing.Short() {
		t.Skip("a long session")
	}
	const calls, window = 499999, 64
	fx := clitest.NewFixture(t)
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	cmd, stdin, stdout, stderr := pipedTap(t, append([]string{"--record", rec, "--"}, fx.Argv()...)...)
	start := time.Now()
	// Each answer read lets one more call go: window calls in flight.
	credit := make(chan struct{}, window)
	answers := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		n := 0
		for sc.Scan() {
			n++
			select {
			case credit <- struct{}{}:
			default:
			}
		}
		answers <- n
	}()
	w := bufio.NewWriter(stdin)
	fmt.Fprintln(w, initLine)
	w.Flush()
	<-credit // the initialize answer
	fmt.Fprintln(w, initialized)
	for range window {
		credit <- struct{}{}
	}
	for i := range calls {
		<-credit
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"value":"v%d"}}}`+"\n", i+2, i)
		if len(credit) == 0 {
			w.Flush()
		}
	}
	w.Flush()
	// Wait for every answer before reading the tap's peak.
	for range window {
		<-credit
	}
	peak := vmHWM(t, cmd.Process.Pid)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sonde tap: %v\n%s", err, stderr.String())
	}
	if n := <-answers; n != calls+1 {
		t.Fatalf("%d answers, want %d", n, calls+1)
	}
	frames, missed := countFrames(t, rec)
	t.Logf("%d frames forwarded in %v; %d recorded, %d events missed; the tap's peak RSS %.1f MiB",
		2*calls+2+1, time.Since(start).Round(time.Second), frames, missed, float64(peak)/(1<<20))
	if frames+int(missed) < 2*calls+3 || frames < (2*calls+3)*9/10 {
		t.Errorf("%d frames recorded and %d missed, want %d frames", frames, missed, 2*calls+3)
	}
	if peak > 50<<20 {
		t.Errorf("the tap's peak RSS %.1f MiB, want under 50 MiB", float64(peak)/(1<<20))
	}
}

// countFrames reads the capture at path a line at a time (not whole: it
// is large) and returns its frames and the events its missed records
// count.
func countFrames(t *testing.T, path string) (frames int, missed uint64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadSlice('\n')
		switch {
		case bytes.Contains(line, []byte(`"type":"frame"`)):
			frames++
		case bytes.Contains(line, []byte(`"type":"missed"`)):
			var m struct{ Count uint64 }
			if json.Unmarshal(line, &m) != nil {
				t.Fatalf("a missed record: %s", line)
			}
			missed += m.Count
		}
		if err == io.EOF {
			return frames, missed
		}
		if err != nil && err != bufio.ErrBufferFull {
			t.Fatal(err)
		}
	}
}

// vmHWM is the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 { return procStatusKB(t, pid, "VmHWM") << 10 }

// vmRSS is the resident set size of process pid, in bytes.
func vmRSS(t *testing.T, pid int) int64 { return procStatusKB(t, pid, "VmRSS") << 10 }

// procStatusKB is the field of /proc/PID/status given in kB (VmHWM, VmRSS).
func procStatusKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
