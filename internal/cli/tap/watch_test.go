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
	"github.com/sonde-mcp/sonde/internal/otlptest"
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
	// sonde inject and sonde faults find the session the same way, and say
	// who they are (#33: inject said "sonde watch").
	for _, args := range [][]string{{"inject", "ping"}, {"faults"}} {
		r := clitest.RunSonde(t, "", args...)
		clitest.CheckRun(t, r, 2, "sonde: sonde "+args[0]+": no live session in "+filepath.Join(home, "sessions")+" (sonde sessions lists them; a host runs sonde tap once sonde wrap set it up)\n")
	}

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

// TestWatchOTLP: sonde watch --otlp-endpoint sends the spans of the session
// it follows, from the recording, as the tap would have: the host's echo
// call as a tools/call span with its recorded outcome.
func TestWatchOTLP(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	col := otlptest.Start(t)
	h := liveTap(t, home, "exported")
	h.write(initialized, echoCall(2, "to the collector", 0))
	h.await(`"id":2`, 1)
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "exported-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	r := clitest.RunSonde(t, "", "watch", files[0], "--otlp-endpoint", col.URL)
	clitest.CheckRun(t, r, 0, "")
	sp := col.Span("tools/call echo")
	if sp == nil {
		t.Fatalf("no tools/call echo span among %d", len(col.Spans()))
	}
	if got := otlptest.Attr(sp, "jsonrpc.request.id"); got != "2" {
		t.Errorf("jsonrpc.request.id %q", got)
	}
}
