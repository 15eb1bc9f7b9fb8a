package tap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/tap"
	"github.com/sonde-mcp/sonde/ui"
)

// TestFollowSession: the watch UI's source over a real tap's recording
// gives the host's events as they are recorded (the host's call resolved,
// as the observer judged it), injects a call through the session's socket
// (its answer comes to the source, its frames carry the tap's id, the host
// never sees it), and ends when the tap ends; then nothing can be injected.
func TestFollowSession(t *testing.T) {
	h, src := followedTap(t)
	defer src.Close()
	if why := src.NoInject(); why != "" {
		t.Fatalf("a live session refuses injection: %s", why)
	}
	h.write(initialized, echoCall(2, "from the host", 0))
	waitEvent(t, src, func(ev client.Event) bool {
		f := ev.Frame
		return f != nil && f.Verdict == client.VerdictResolved && strings.Contains(string(f.Raw), "from the host")
	}, false)

	injectEcho(t, src, "from sonde")
	h.write(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	h.await(`"id":3`, 1)
	if strings.Contains(h.stdoutText(), "from sonde") {
		t.Errorf("the host got sonde's answer:\n%s", h.stdoutText())
	}

	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	waitEnd(t, src)
	if why := src.NoInject(); !strings.Contains(why, "ended") {
		t.Errorf("NoInject after the end: %q", why)
	}
	if _, _, err := src.Inject(context.Background(), "ping", nil); err == nil {
		t.Error("a request was injected into an ended session")
	}
}

// followedTap starts a host through a live tap (handshake begun) in a
// sessions folder of its own, and the watch UI's source over its recording.
func followedTap(t *testing.T) (*host, interface {
	ui.Watched
	Close()
}) {
	t.Helper()
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
	return h, src
}

// injectEcho calls echo with value through the source: the answer comes
// back to it, and the recording has the answer's frame, resolved, under
// the tap's id for it.
func injectEcho(t *testing.T, src ui.Watched, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, res, err := src.Inject(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]string{"value": value}})
	if err != nil || !strings.Contains(string(res), value) || !client.Injected(id) {
		t.Fatalf("inject: id %v, %s %v", id, res, err)
	}
	waitEvent(t, src, func(ev client.Event) bool {
		f := ev.Frame
		return f != nil && f.Dir == client.In && f.Msg.ID == id && f.Verdict == client.VerdictResolved
	}, false)
}

// waitEnd reads the source until it ends (its tap is gone).
func waitEnd(t *testing.T, src ui.Watched) {
	t.Helper()
	waitEvent(t, src, func(client.Event) bool { return false }, true)
}

// waitEvent reads the source until an event passes ok or, with toEnd,
// until it ends (its tap gone).
func waitEvent(t *testing.T, src ui.Watched, ok func(client.Event) bool, toEnd bool) {
	t.Helper()
	found := make(chan bool, 1)
	var read, missed atomic.Uint64 // what the timeout reports
	go func() {
		for {
			evs, m, more := src.Next(4096)
			read.Add(uint64(len(evs)))
			missed.Store(m)
			for _, ev := range evs {
				if ok(ev) {
					found <- true
					return
				}
			}
			if !more {
				found <- false
				return
			}
		}
	}()
	select {
	case got := <-found:
		switch {
		case toEnd && got:
			t.Fatal("an event passed where the end was waited for")
		case !toEnd && !got:
			t.Fatal("the recording ended without the event")
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("waited 20s in vain (for the end: %v; %d events read meanwhile, %d missed)", toEnd, read.Load(), missed.Load())
	}
}

// A source closed while it waits for more of a live recording stops at
// once (nothing left running: the package's goleak check).
func TestFollowSessionClose(t *testing.T) {
	h, src := followedTap(t)
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

// The watch list's cache reads of a growing recording only what was added,
// a line still being written once it is whole, and gives the counts a
// whole read gives at every step.
func TestWatchListGrowing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "grow-20261201-100000-1.jsonl")
	header := `{"type":"header","format":"sonde-capture","version":"1.0","sonde":"test","start":"2026-12-01T10:00:00Z","transport":"stdio","command":["srv"]}` + "\n"
	req := func(id int) string {
		return fmt.Sprintf(`{"type":"request","seq":%d,"t":%d,"dir":"out","id":%d,"method":"ping","state":"sent"}`+"\n", id, id, id)
	}
	late := `{"type":"frame","seq":99,"t":99,"dir":"in","id":1,"kind":"response","raw":"{}","verdict":"late"}` + "\n"
	steps := []string{header, req(1) + req(2), late + req(3)[:20], req(3)[20:], req(4) + `{"type":"end","t":100}` + "\n"}
	cache := map[string]tap.Tapped{}
	var text string
	for i, add := range steps {
		text += add
		clitest.WriteTestFile(t, path, text)
		// A later modification time even on a coarse clock.
		mt := time.Date(2026, 12, 1, 10, 0, i, 0, time.UTC)
		if err := os.Chtimes(path, mt, mt); err != nil {
			t.Fatal(err)
		}
		cached, err1 := tap.ListSessionsCached(dir, cache)
		whole, err2 := tap.ListSessionsCached(dir, nil)
		if err1 != nil || err2 != nil || len(cached) != 1 || len(whole) != 1 {
			t.Fatalf("step %d: %v %v", i, err1, err2)
		}
		c, w := cached[0], whole[0]
		if c.Calls != w.Calls || c.Late != w.Late || c.CleanEnd != w.CleanEnd || c.Problem != w.Problem {
			t.Errorf("step %d: cached %+v, whole %+v", i, c, w)
		}
	}
	if s := cache[path]; s.Calls != 4 || s.Late != 1 || !s.CleanEnd {
		t.Errorf("at the end: %+v", s)
	}

	// What was read is not read again: a change to an old line (of the
	// same size) does not reach the cached counts when the file grows.
	path = filepath.Join(dir, "more-20261201-100000-1.jsonl")
	text = header + req(1) + req(2)
	clitest.WriteTestFile(t, path, text)
	cache = map[string]tap.Tapped{}
	if _, err := tap.ListSessionsCached(dir, cache); err != nil {
		t.Fatal(err)
	}
	text = strings.Replace(text, `"state":"sent"`, `"state":"sant"`, 1) + req(3)
	clitest.WriteTestFile(t, path, text)
	mt := time.Now().Add(time.Hour)
	os.Chtimes(path, mt, mt)
	tap.ListSessionsCached(dir, cache)
	whole, _ := tap.ListSessionsCached(dir, nil)
	var w tap.Tapped
	for _, s := range whole {
		if s.File == path {
			w = s
		}
	}
	if c := cache[path]; c.Calls != 3 || w.Calls != 2 {
		t.Errorf("cached %d calls (want 3: read on from where it was), whole %d (want 2)", c.Calls, w.Calls)
	}
}

// TestFollowHTTPSession: the watch UI's source over a host's session
// through sonde tap --listen (its own recording): the host's exchanges come
// as events, a call injected through the session's socket is answered to
// sonde and marked, the host's client sees nothing of it, and the source
// ends when the tap stops.
func TestFollowHTTPSession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	proxy, c, path := httpHostSession(t, home)
	src, err := tap.FollowSession(path, proxy.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	waitEvent(t, src, func(ev client.Event) bool {
		f := ev.Frame
		return f != nil && f.Verdict == client.VerdictResolved && strings.Contains(string(f.Raw), `"serverInfo"`)
	}, false)
	injectEcho(t, src, "over http")
	hostUntouched(t, c, "the host")
	c.Close()
	proxy.stop(t)
	waitEnd(t, src)
}

// FuzzWatchListGrowing: whatever a recording holds and wherever a read
// falls while it is written, the watch list's counts after reading on from
// where it was equal those of reading the whole file.
func FuzzWatchListGrowing(f *testing.F) {
	header := `{"type":"header","format":"sonde-capture","version":"1.0","sonde":"test","start":"2026-12-01T10:00:00Z","transport":"stdio","command":["srv"]}` + "\n"
	f.Add([]byte(`{"type":"request","dir":"out","id":1,"state":"sent"}`+"\n"+`{"type":"frame","raw":"{}","verdict":"late"}`+"\n"+`{"type":"end"}`+"\n"), uint16(30))
	f.Add([]byte(`{"type":"note","note":"sonde tap: session \"x\", tap pid 1, host pid 2 (h)"}`+"\n"+`{"type":"request","dir":"out","id":"sonde-1-1","state":"error"}`), uint16(5))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		dir := t.TempDir()
		path := filepath.Join(dir, "fz-20261201-100000-1.jsonl")
		at := int(cut) % (len(data) + 1)
		cache := map[string]tap.Tapped{}
		for i, text := range []string{header + string(data[:at]), header + string(data)} {
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			mt := time.Date(2026, 12, 1, 10, 0, i, 0, time.UTC)
			os.Chtimes(path, mt, mt)
			if _, err := tap.ListSessionsCached(dir, cache); err != nil {
				t.Fatal(err)
			}
		}
		whole, err := tap.ListSessionsCached(dir, nil)
		if err != nil || len(whole) != 1 {
			t.Fatalf("%v %v", whole, err)
		}
		c, w := cache[path], whole[0]
		if c.Calls != w.Calls || c.Errors != w.Errors || c.Late != w.Late || c.Unknown != w.Unknown || c.Duplicate != w.Duplicate ||
			c.CleanEnd != w.CleanEnd || c.HostPID != w.HostPID || c.HostName != w.HostName || c.Label != w.Label || c.Problem != w.Problem {
			t.Errorf("read on: %+v\nwhole:   %+v", c, w)
		}
	})
}
