package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

const (
	hostInit        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`
	hostInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func hostEcho(id int, value string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"value":%q}}}`, id, value)
}

// tappedHost is a host running the fixture through a real `sonde tap`
// (the test binary re-executed as sonde), recording in home's sessions
// folder as sonde wrap sets it up.
type tappedHost struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []string
	got   chan struct{}
	done  chan struct{}
}

func startTappedHost(t *testing.T, home, label string) *tappedHost {
	t.Helper()
	fx := clitest.NewFixture(t)
	h := &tappedHost{t: t, got: make(chan struct{}, 1), done: make(chan struct{})}
	argv := append([]string{os.Args[0], "tap", "--label", label, "--"}, fx.Argv()...)
	h.cmd = exec.Command(argv[0], argv[1:]...)
	h.cmd.Env = append(append(os.Environ(), clitest.ChildEnv()...), "SONDE_HOME="+home)
	h.cmd.Stderr = os.Stderr
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			h.mu.Lock()
			h.lines = append(h.lines, sc.Text())
			h.mu.Unlock()
			select {
			case h.got <- struct{}{}:
			default:
			}
		}
		h.cmd.Wait()
	}()
	t.Cleanup(func() { h.stop() })
	h.write(hostInit)
	h.await(`"serverInfo"`)
	h.write(hostInitialized)
	return h
}

func (h *tappedHost) write(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.stdin, line+"\n"); err != nil {
		h.t.Fatalf("host: %v", err)
	}
}

// await waits for a line of the host's stdout holding want.
func (h *tappedHost) await(want string) string {
	h.t.Helper()
	deadline := time.After(clitest.RunBound)
	for {
		h.mu.Lock()
		for _, l := range h.lines {
			if strings.Contains(l, want) {
				h.mu.Unlock()
				return l
			}
		}
		h.mu.Unlock()
		select {
		case <-h.got:
		case <-h.done:
			h.t.Fatalf("the host's tap ended before %q", want)
		case <-deadline:
			h.t.Fatalf("no %q on the host's stdout", want)
		}
	}
}

func (h *tappedHost) text() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.lines, "\n")
}

// stop ends the host's session (stdin closed) and waits for the tap.
func (h *tappedHost) stop() {
	h.stdin.Close()
	select {
	case <-h.done:
	case <-time.After(clitest.RunBound):
		h.cmd.Process.Kill()
		<-h.done
		h.t.Errorf("sonde tap did not end")
	}
}

// TestAgentTappedSession: with a host's session running through a real
// sonde tap, sessions_list shows it live (the fields of sonde sessions
// --json), session_open attaches it as a session of sonde mcp's, its
// recording is a resource whose subscriber is told as it grows with the
// host's own calls, capture_lint reads it by either id, and an unknown or
// ended session is a tool error saying what to do.
func TestAgentTappedSession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	h := startTappedHost(t, home, "driven")
	a := startAgent(t, nil)
	tappedID := checkTappedListed(t, a)

	var open mcpserver.OpenResult
	text := a.ok("session_open", map[string]any{"id": "driven"}, &open)
	if open.Session == "" || open.Tapped.ID != tappedID || open.Resource != "sonde://sessions/"+open.Session {
		t.Fatalf("session_open: %+v (%s)", open, text)
	}
	var again mcpserver.OpenResult
	if a.ok("session_open", map[string]any{"id": tappedID}, &again); again.Session != open.Session {
		t.Errorf("opened twice: %s then %s", open.Session, again.Session)
	}
	var list mcpserver.SessionsList
	a.ok("sessions_list", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != open.Session || list.Sessions[0].Kind != "tapped" || list.Sessions[0].Resource != open.Resource {
		t.Errorf("sessions_list after session_open: %+v", list.Sessions)
	}
	checkTappedResource(t, a, h, open)
	var lint mcpserver.LintResult
	for _, ref := range []string{open.Session, tappedID, "driven"} {
		if a.ok("capture_lint", map[string]any{"path": ref}, &lint); lint.Total != 0 || !strings.HasSuffix(lint.Capture, tappedID+".jsonl") {
			t.Errorf("capture_lint %s: %+v", ref, lint)
		}
	}
	a.refused("session_open", map[string]any{"id": "nobody"}, `"nobody"`, "sessions_list")
	checkInjected(t, a, h, open)

	h.stop()
	if strings.Contains(h.text(), `"id":"sonde-`) {
		t.Errorf("the host saw a line of sonde's:\n%s", h.text())
	}
	a.refused("session_open", map[string]any{"id": tappedID}, "not live", "capture_lint")
}

// checkTappedListed: sessions_list shows the one live tapped session with
// the fields of sonde sessions --json; it returns its id.
func checkTappedListed(t *testing.T, a *agent) string {
	t.Helper()
	var list mcpserver.SessionsList
	text := a.ok("sessions_list", nil, &list)
	if len(list.Tapped) != 1 || !list.Tapped[0].Live || list.Tapped[0].Label != "driven" || len(list.Sessions) != 0 {
		t.Fatalf("sessions_list: %+v", list)
	}
	if !strings.Contains(text, "1 tapped (1 live)") {
		t.Errorf("sessions_list's text: %q", text)
	}
	r := clitest.RunSonde(t, "", "sessions", "--json")
	cmd := asJSON(t, fromJSONArray(t, r.Stdout)[0]).(map[string]any)
	got := asJSON(t, list.Tapped[0]).(map[string]any)
	for _, k := range []string{"id", "file", "label", "command", "live", "tap_pid", "host_pid", "clean_end"} {
		if fmt.Sprint(got[k]) != fmt.Sprint(cmd[k]) {
			t.Errorf("sessions_list %s: %v, sonde sessions --json: %v", k, got[k], cmd[k])
		}
	}
	return list.Tapped[0].ID
}

// checkTappedResource: the opened session's recording is the one resource
// listed; its subscriber is told when the host's call grows it; it reads
// (by either URI) with that call in it; an unknown URI is an error.
func checkTappedResource(t *testing.T, a *agent, h *tappedHost, open mcpserver.OpenResult) {
	t.Helper()
	ctx := context.Background()
	res, err := a.cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != open.Resource || res.Resources[0].MIMEType != "application/jsonl" {
		t.Fatalf("resources/list: %+v %v", res, err)
	}
	if err := a.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: open.Resource}); err != nil {
		t.Fatal(err)
	}
	h.write(hostEcho(2, "the host's own call"))
	h.await(`"id":2`)
	select {
	case <-a.grew:
	case <-time.After(clitest.RunBound):
		t.Fatal("no notifications/resources/updated after the host's call")
	}
	a.mu.Lock()
	if a.updated[0] != open.Resource {
		t.Errorf("updated %v", a.updated)
	}
	a.mu.Unlock()
	read, err := a.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: open.Resource})
	if err != nil || len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, "the host's own call") || !strings.HasPrefix(read.Contents[0].Text, `{"type":"header"`) {
		t.Fatalf("resources/read: %+v %v", read, err)
	}
	if byTap, err := a.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "sonde://tapped/" + open.Tapped.ID}); err != nil || !strings.Contains(byTap.Contents[0].Text, "the host's own call") {
		t.Errorf("resources/read of the tapped recording: %+v %v", byTap, err)
	}
	if _, err := a.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "sonde://sessions/s99"}); err == nil {
		t.Error("resources/read of no session: no error")
	}
}

// checkInjected: session_call in the opened session injects, as sonde
// inject does (the answer comes to the agent, a server's error as the
// call's error), and session_frames shows the host's calls and the
// injected ones as the recording grows.
func checkInjected(t *testing.T, a *agent, h *tappedHost, open mcpserver.OpenResult) {
	t.Helper()
	var call struct {
		State, Text string
	}
	a.ok("session_call", map[string]any{"session": open.Session, "tool": "echo", "arguments": map[string]any{"value": "injected by the agent"}}, &call)
	if call.State != "resolved" || !strings.Contains(call.Text, "injected by the agent") {
		t.Errorf("session_call into the tapped session: %+v", call)
	}
	var failed struct {
		State string
		Error struct{ Code, Message string }
	}
	a.ok("session_call", map[string]any{"session": open.Session, "tool": "fail", "arguments": map[string]any{}}, &failed)
	if failed.State != "error" || failed.Error.Code != "MCP_ERROR" || !strings.Contains(failed.Error.Message, "fixture failure") {
		t.Errorf("a failing call injected: %+v", failed)
	}
	h.write(hostEcho(3, "the host goes on"))
	h.await(`"id":3`)
	var frames struct {
		Frames []map[string]any `json:"frames"`
	}
	for deadline := time.Now().Add(clitest.RunBound); ; time.Sleep(50 * time.Millisecond) {
		a.ok("session_frames", map[string]any{"session": open.Session}, &frames)
		text := fmt.Sprint(frames.Frames)
		if strings.Contains(text, "the host goes on") && strings.Contains(text, "injected by the agent") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session_frames of the tapped session lacks the host's call or the injected one: %v", frames.Frames)
		}
	}
}

func fromJSONArray(t *testing.T, s string) []any {
	t.Helper()
	var out []any
	if err := json.Unmarshal([]byte(s), &out); err != nil || len(out) == 0 {
		t.Fatalf("%v\n%s", err, s)
	}
	return out
}
