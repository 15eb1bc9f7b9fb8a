package tap_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/tap"
)

// TestFollowSession: the watch UI's source over a real tap's recording
// gives the host's events as they are recorded (the host's call resolved,
// as the observer judged it), injects a call through the session's socket
// (its answer comes to the source, its frames carry the tap's id, the host
// never sees it), and ends when the tap ends; then nothing can be injected.
func TestFollowSession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	h := liveTap(t, home, "followed")
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "followed-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	src, err := tap.FollowSession(files[0], h.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if why := src.NoInject(); why != "" {
		t.Fatalf("a live session refuses injection: %s", why)
	}
	h.write(initialized, echoCall(2, "from the host", 0))
	waitEvent(t, src, func(ev client.Event) bool {
		f := ev.Frame
		return f != nil && f.Verdict == client.VerdictResolved && strings.Contains(string(f.Raw), "from the host")
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := src.Inject(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]string{"value": "from sonde"}})
	if err != nil || !strings.Contains(string(res), "from sonde") {
		t.Fatalf("inject: %s %v", res, err)
	}
	waitEvent(t, src, func(ev client.Event) bool {
		f := ev.Frame
		return f != nil && f.Dir == client.In && client.Injected(f.Msg.ID) && f.Verdict == client.VerdictResolved
	})
	h.write(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	h.await(`"id":3`, 1)
	if strings.Contains(h.stdoutText(), "from sonde") {
		t.Errorf("the host got sonde's answer:\n%s", h.stdoutText())
	}

	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, _, ok := src.Next(4096); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the source did not end with the tap")
		}
	}
	if why := src.NoInject(); !strings.Contains(why, "ended") {
		t.Errorf("NoInject after the end: %q", why)
	}
	if _, err := src.Inject(ctx, "ping", nil); err == nil {
		t.Error("a request was injected into an ended session")
	}
}

// waitEvent reads the source until an event passes ok.
func waitEvent(t *testing.T, src interface {
	Next(int) ([]client.Event, uint64, bool)
}, ok func(client.Event) bool) {
	t.Helper()
	done := make(chan bool, 1)
	go func() {
		for {
			evs, _, more := src.Next(4096)
			for _, ev := range evs {
				if ok(ev) {
					done <- true
					return
				}
			}
			if !more {
				done <- false
				return
			}
		}
	}()
	select {
	case found := <-done:
		if !found {
			t.Fatal("the recording ended without the event")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the event did not come")
	}
}

// A source closed while it waits for more of a live recording stops at
// once (nothing left running: the package's goleak check).
func TestFollowSessionClose(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	h := liveTap(t, home, "closed")
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "closed-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	src, err := tap.FollowSession(files[0], h.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	src.Next(4096) // what is there so far
	closed := make(chan struct{})
	go func() { src.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	h.stdin.Close()
	h.wait()
}
