package tap_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestFaultDuplicateMemoryBounded: the largest duplicate count a rule may
// ask for (n=1000) on a 256 KiB answer, through a real sonde tap in front
// of the fixture: the host gets the answer and its 1,000 copies (256 MB
// in all), and the tap's peak RSS (VmHWM) stays under 100 MiB, since the
// copies are written one after another, never built in memory at once
// (before, the tap built all of them, and a copy of that for observation,
// in one buffer: 600 MB here, 2.8 GB for n=1000000000). One more copy
// (n=1001) is refused before anything starts.
func TestFaultDuplicateMemoryBounded(t *testing.T) {
	const copies, size = 1000, 256 << 10
	limit := int64(100 << 20)
	if raceEnabled {
		limit = 250 << 20 // the race detector's shadow of the heap
	}
	fx := clitest.NewFixture(t)
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	cmd, stdin, stdout, stderr := pipedTap(t, append([]string{"--record", rec, "--fault", fmt.Sprintf("duplicate:to-host,tool=big,n=%d", copies), "--"}, fx.Argv()...)...)
	// The host reads everything, counting lines and bytes (not keeping
	// them), and says when the last copy has come.
	type count struct{ lines, bytes int64 }
	all := make(chan count, 1)
	got := make(chan struct{})
	go func() {
		var c count
		buf := make([]byte, 64<<10)
		closed := false
		for {
			n, err := stdout.Read(buf)
			c.lines += int64(bytes.Count(buf[:n], []byte("\n")))
			c.bytes += int64(n)
			if !closed && c.lines >= copies+2 {
				close(got)
				closed = true
			}
			if err != nil {
				all <- c
				return
			}
		}
	}()
	io.WriteString(stdin, initLine+"\n"+initialized+"\n"+fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"bytes":%d}}}`, size)+"\n")
	select {
	case <-got:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		c := <-all
		cmd.Wait()
		t.Fatalf("after 3 minutes the host had %d lines (%d bytes), want %d; the tap's stderr:\n%s", c.lines, c.bytes, copies+2, stderr.String())
	}
	peak := vmHWM(t, cmd.Process.Pid)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sonde tap: %v\n%s", err, stderr.String())
	}
	c := <-all
	t.Logf("the host got %d lines, %.1f MB; the tap's peak RSS %.1f MiB", c.lines, float64(c.bytes)/1e6, float64(peak)/(1<<20))
	if c.lines != copies+2 || c.bytes < copies*size {
		t.Errorf("the host got %d lines (%d bytes), want %d lines of over %d bytes", c.lines, c.bytes, copies+2, copies*size)
	}
	if peak > limit {
		t.Errorf("the tap's peak RSS %.1f MiB, want under %d MiB", float64(peak)/(1<<20), limit>>20)
	}
	if n := notes(t, rec); !strings.Contains(n, fmt.Sprintf("to-host %d more time(s)", copies)) {
		t.Errorf("no note of the copies:\n%s", n)
	}

	// One over the limit is a usage error naming the rule, the value and
	// the limit.
	over := exec.Command(os.Args[0], append([]string{"tap", "--no-record", "--fault", "duplicate:to-host,n=1001", "--"}, fx.Argv()...)...)
	over.Env = append(os.Environ(), clitest.ChildEnv()...)
	out, err := over.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), `duplicate:to-host,n=1001`) || !strings.Contains(string(out), "1000") {
		t.Errorf("n=1001: %v\n%s", err, out)
	}
}
