package interactive_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// tapHost is a host stand-in: it runs `sonde tap --label LABEL -- sonde
// fixture` as a host runs a server, writes JSON-RPC lines to it and keeps
// everything the tap forwarded back.
type tapHost struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *clitest.SyncBuffer
	errb  clitest.SyncBuffer
	done  chan error
}

func startTapHost(t *testing.T, home, label string, fx *clitest.Fixture, flags ...string) *tapHost {
	t.Helper()
	h := &tapHost{t: t, out: &clitest.SyncBuffer{}, done: make(chan error, 1)}
	args := append(append([]string{"tap", "--label", label}, flags...), "--")
	h.cmd = exec.Command(os.Args[0], append(args, fx.Argv()...)...)
	h.cmd.Env = append(append(os.Environ(), clitest.ChildEnv()...), "SONDE_HOME="+home)
	h.cmd.Stdout, h.cmd.Stderr = h.out, &h.errb
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- h.cmd.Wait() }()
	t.Cleanup(func() {
		h.stdin.Close()
		select {
		case <-h.done:
		case <-time.After(tuiWait):
			h.cmd.Process.Kill()
			<-h.done
		}
	})
	return h
}

// send writes lines to the tap, as the host would.
func (h *tapHost) send(lines ...string) {
	h.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(h.stdin, l+"\n"); err != nil {
			h.t.Fatalf("writing to the tap: %v\n%s", err, h.errb.String())
		}
	}
}

// await waits until what the host got matches re.
func (h *tapHost) await(re string) {
	h.t.Helper()
	rx := regexp.MustCompile(re)
	for deadline := time.Now().Add(tuiWait); !rx.MatchString(h.out.String()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("the host did not get %s; it got:\n%s\ntap stderr: %s", re, h.out.String(), h.errb.String())
		}
	}
}

// end closes the host's side, as a host quitting does, and waits for the
// tap to exit.
func (h *tapHost) end() {
	h.t.Helper()
	h.stdin.Close()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("the tap: %v\n%s", err, h.errb.String())
		}
		h.done <- err // for the cleanup
	case <-time.After(tuiWait):
		h.t.Fatalf("the tap did not end after the host's EOF\n%s", h.errb.String())
	}
}

// TestTUIWatch: a host stand-in talks to the fixture through sonde tap;
// sonde watch in a terminal lists the session live, enter opens it in the
// panes (the host's handshake, tools and calls as they happen), a call
// made from the Tools pane goes into the session through the tap (marked
// injected) and its answer shows in sonde, never at the host, which goes on
// unharmed. q comes back to the list, which shows the session ended once
// the host quits; nothing is left running.
func TestTUIWatch(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	fx := clitest.NewFixture(t)
	h := startTapHost(t, home, "gh", fx)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stand-in","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	h.await(`"id":2,"result":\{"tools"`)

	tt := startTUI(t, 160, 40, []string{"watch"})
	tt.waitFor("the session list", `sonde watch · 1 session · 1 live`, `^› gh\s+live\s+`, `\s2\s+0\s+0\s+0\s+0\s+/`, `enter open`)
	tt.keys("Enter")
	tt.waitFor("the session in the panes", `sonde-fixture 0\.1\.0`, `tap · gh`, `│ live │`, `Tools 9`, `<- 2 +response +resolved id 2`)

	// The host's own call shows as it happens.
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"value":"from the host"}}}`)
	h.await(`"id":3,"result"`)
	tt.waitFor("the host's call", `-> 3 +(tools/)?call echo`, `<- 3 +response +resolved id 3`)

	// A call from the Tools pane: echo's form, its value, ctrl+s.
	tt.keys("3", "Enter")
	tt.waitFor("echo's form", `value\*`, `ctrl\+s call`)
	tt.keys("Down", "Down")
	tt.text("from sonde")
	tt.keys("C-s")
	tt.waitFor("the injected call's answer", `^│from sonde`, `│[ >]i[ \d.]+[µm]?s -> "sonde-\d+-1" +(tools/)?call echo`, `│[ >]i[ \d.]+[µm]?s <- "sonde-\d+-1" +response +resolved`)

	// The host goes on, and never saw sonde's answer.
	h.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	h.await(`"id":4,"result"`)
	if got := h.out.String(); strings.Contains(got, "from sonde") || regexp.MustCompile(`"sonde-\d+-`).MatchString(got) {
		t.Errorf("the host got sonde's answer:\n%s", got)
	}
	if n := strings.Count(h.out.String(), "\n"); n != 4 {
		t.Errorf("the host got %d lines, want its own 4 answers:\n%s", n, h.out.String())
	}
	tt.waitFor("the host's ping", `<- 4 +response +resolved id 4`)

	tt.keys("1", "q")
	tt.waitFor("the list again", `^› gh\s+live`, `\s4\s+0\s+0\s+0\s+0\s+/`)
	h.end()
	tt.waitFor("the session ended", `sonde watch · 1 session · 0 live`, `^› gh\s+ended`)
	// An ended session opens as a replay, where nothing can be sent.
	tt.keys("Enter")
	tt.waitFor("the replay", `sonde replay │ ⏸ paused`, `│ ?[ >]i[ \d.]+[µm]?s -> "sonde-\d+-1"`)
	tt.keys("1", "q")
	tt.waitFor("the list after the replay", `^› gh\s+ended`)
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Errorf("sonde watch exited with %d%s", code, tt.diag())
	}
	proctest.AssertGone(t, fx.PIDFile)
}

// TestTUIWatchFaults: a host's session through sonde tap with a drop rule:
// sonde watch shows the host's call the rule kept its answer from as
// "dropped by fault rule 1"; F lists the rule (on, what it did), space
// turns it off, and the host's next call is answered; the recording notes
// the change.
func TestTUIWatchFaults(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	fx := clitest.NewFixture(t)
	h := startTapHost(t, home, "chaos", fx, "--fault", "drop:to-host,tool=echo")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stand-in","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"value":"lost"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	h.await(`"id":3,"result"`)
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "chaos-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	tt := startTUI(t, 160, 40, []string{"watch", strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")})
	tt.waitFor("the dropped answer", `tap · chaos`, `dropped by fault rule 1`)
	tt.keys("F")
	tt.waitFor("the rules", `fault rules · sonde tap --fault`, `› 1\s+on\s+1\s+1\s+drop:to-host,tool=echo`)
	tt.keys("Space")
	tt.waitFor("the rule off", `› 1\s+off\s+1\s+1\s+drop:to-host,tool=echo`)
	tt.keys("Escape")
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"value":"through"}}}`)
	h.await(`"id":4,"result"`)
	tt.waitFor("the answer in the panes", `<- 4 +response +resolved id 4`)
	tt.quit()
	h.end()
	if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), "fault rule 1: drop:to-host,tool=echo turned off by a watcher") {
		t.Errorf("the recording does not note the change")
	}
	proctest.AssertGone(t, fx.PIDFile)
}

// TestTUIPickerLiveSession: sonde with no arguments lists sonde tap's live
// sessions above the configured servers; a session cannot be marked with
// them; enter on it opens sonde watch's inspector on that session, live.
func TestTUIPickerLiveSession(t *testing.T) {
	home, _ := clitest.TempHostHome(t)
	clitest.WriteTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"other": {"command": "other-server", "args": ["--port", "9"]}}}`)
	state := t.TempDir()
	t.Setenv("SONDE_HOME", state)
	fx := clitest.NewFixture(t)
	h := startTapHost(t, state, "gh", fx)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stand-in","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.await(`"id":1,"result"`)

	tt := startTUI(t, 140, 30, nil)
	tt.waitFor("the picker with the session first", `sonde · pick a server · 1 found in \d+ files? · 1 live tapped session above them`,
		`^› gh\s+tapped · live\s+/\S+ fixture`, `^  other\s+Cursor · user\s+other-server --port 9`, `live session gh-\d{8}-\d{6}-\d+`)
	tt.keys("Space")
	tt.waitFor("nothing marked", `^› gh\s+tapped`, `!●`)
	tt.keys("Enter")
	tt.waitFor("the watch inspector", `tap · gh`, `│ live │`, `sonde-fixture 0\.1\.0`, `<- 1 +response +resolved id 1`)
	tt.quit()
	h.end()
	proctest.AssertGone(t, fx.PIDFile)
}

// TestTUIWatchSession: sonde watch ID in a terminal opens that session at
// once, live; q ends sonde watch.
func TestTUIWatchSession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	fx := clitest.NewFixture(t)
	h := startTapHost(t, home, "direct", fx)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stand-in","version":"1"}}}`)
	h.await(`"id":1,"result"`)
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "direct-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	tt := startTUI(t, 140, 30, []string{"watch", id})
	tt.waitFor("the session", `tap · direct`, `│ live │`, `<- 1 +response +resolved id 1`)
	tt.quit()
	h.end()
	proctest.AssertGone(t, fx.PIDFile)
}

// TestTUIWatchBreaks: a host's two echo calls through sonde tap --break;
// sonde watch shows both answers held, the second is forwarded first (f on
// h2, then on h1), and the host gets them in that order; each matched by
// its id.
func TestTUIWatchBreaks(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	fx := clitest.NewFixture(t)
	h := startTapHost(t, home, "brk", fx, "--break", "dir:in kind:response tool:echo", "--break-timeout", "0")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stand-in","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.await(`"id":1,"result"`)
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "brk-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	tt := startTUI(t, 120, 36, []string{"watch", strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")})
	tt.waitFor("the session", `tap · brk`, `sonde-fixture 0\.1\.0`)
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"value":"three"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"value":"four"}}}`)
	// The fixture may answer either first: the handles follow the order held.
	s := tt.waitFor("both answers held", `held frames · 2`, `h1\s+<-\s+response\s+[34]\s+held\s+tools/call echo`, `h2\s+<-\s+response\s+[34]\s+held\s+tools/call echo`, `⏸ 2 held`)
	if submatch(t, s, `(h\d)\s+<-\s+response\s+4\s`) == "h2" {
		tt.keys("Down")
	}
	tt.keys("f") // the answer to 4, the later call, first
	h.await(`"id":4,"result"`)
	if strings.Contains(h.out.String(), `"id":3,"result"`) {
		t.Fatalf("the host got 3 with 4:\n%s", h.out.String())
	}
	tt.waitFor("one left", `held frames · 1`, `›\s*h\d\s+<-\s+response\s+3\s`)
	tt.keys("f")
	h.await(`"id":3,"result"`)
	out := h.out.String()
	if i3, i4 := strings.Index(out, `"id":3,"result"`), strings.Index(out, `"id":4,"result"`); i4 > i3 || !strings.Contains(out[i4:], "four") || !strings.Contains(out[i3:], "three") {
		t.Errorf("the host got, in this order:\n%s", out)
	}
	tt.waitFor("nothing held", "!held frames", "!⏸")
	tt.keys("1", "q")
	if code := tt.waitExit(); code != 0 {
		t.Errorf("sonde watch exited with %d%s", code, tt.diag())
	}
	h.end()
	proctest.AssertGone(t, fx.PIDFile)
}
