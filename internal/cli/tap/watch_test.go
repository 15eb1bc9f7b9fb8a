package tap_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestWatchLive: sonde watch follows the newest live session while the
// host drives it (a call shows as it is answered), and ends when the tap
// ends; --json of the ended session reads back as a capture with every
// record; with no live session it is a usage error.
func TestWatchLive(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	r := clitest.RunSonde(t, "", "watch")
	clitest.CheckRun(t, r, 2, "sonde: sonde watch: no live session in "+filepath.Join(home, "sessions")+" (sonde sessions lists them; a host runs sonde tap once sonde wrap set it up)\n")

	h := liveTap(t, home, "watched")

	watch := exec.Command(os.Args[0], "watch")
	watch.Env = append(os.Environ(), clitest.ChildEnv()...)
	out := clitest.WatchBuffer(`(?m)tools/call echo +resolved`)
	var stderr clitest.SyncBuffer
	watch.Stdout, watch.Stderr = out, &stderr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	t.Cleanup(func() {
		if watch.ProcessState == nil {
			watch.Process.Kill()
			<-done
		}
	})
	h.write(initialized, echoCall(2, "seen live", 0))
	select {
	case <-out.Hit():
	case <-time.After(20 * time.Second):
		t.Fatalf("the call did not show in sonde watch:\n%s\nstderr: %s", out.String(), stderr.String())
	}
	if !strings.HasPrefix(out.String(), "watching watched-") {
		t.Errorf("first line: %q", out.String())
	}
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sonde watch: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("sonde watch did not end with the recording")
	}
	if !strings.HasSuffix(out.String(), "the recording ended\n") {
		t.Errorf("output does not end with the recording's end:\n%s", out.String())
	}

	files, _ := filepath.Glob(filepath.Join(home, "sessions", "watched-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	r = clitest.RunSonde(t, "", "watch", id, "--json")
	clitest.CheckRun(t, r, 0, "")
	copyPath := filepath.Join(t.TempDir(), "copy.jsonl")
	clitest.WriteTestFile(t, copyPath, r.Stdout)
	_, want := capturetest.Records(t, files[0])
	_, got := capturetest.Records(t, copyPath)
	if len(got) != len(want) || len(want) < 5 {
		t.Errorf("--json gave %d records, the file has %d", len(got), len(want))
	}
}
