package capfile_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/internal/proctest"
	"github.com/sonde-mcp/sonde/replay/serve"
)

// replayScript is a session of a few calls, spaced so the order of the
// server's lines does not depend on scheduling: a slow call answered after
// a fast one, an error, a list. Every gap between two lines of the server's
// that must not swap is 900 ms or more (the server's requests after the
// handshake, then at 1.1 s the fast answer, at 2 s the slow one, the error
// at 3 s, the list at 4 s): with gaps of 150 to 200 ms the replayed slow
// answer came after the error once under load.
const replayScript = `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"slow","delay_ms":1000}},"delay_ms":1000}
{"method":"tools/call","params":{"name":"echo","arguments":{"value":"fast"}},"delay_ms":100}
{"method":"tools/call","params":{"name":"fail","arguments":{"message":"boom"}},"delay_ms":1900}
{"method":"tools/list","delay_ms":1000}
`

// record runs sonde sub (with --record) against the fixture with
// fixtureArgs and returns the capture's path and the run.
func record(t *testing.T, stdin string, sub []string, fixtureArgs ...string) (string, clitest.Result) {
	t.Helper()
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "recorded.jsonl")
	r := clitest.RunSonde(t, stdin, f.Cmd(append(sub, "--record", path), fixtureArgs...)...)
	if !strings.Contains(r.Stderr, "sonde: capture "+path) {
		t.Fatalf("not recorded: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	return path, r
}

// mockCmd is sonde's command line sub, then "--" and `sonde replay --serve
// capture` (the test binary) as the server.
func mockCmd(sub []string, capturePath string, serveArgs ...string) []string {
	args := append([]string(nil), sub...)
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "--env", kv)
	}
	args = append(args, "--", os.Args[0], "replay", "--serve", capturePath)
	return append(args, serveArgs...)
}

// wireFrame is a frame as compared between two runs.
type wireFrame struct {
	kind, method, verdict, raw string
}

// framesOf returns a capture's frames in one direction, in order, and the
// pid of the server process it started.
func framesOf(t *testing.T, path, dir string) ([]wireFrame, int) {
	t.Helper()
	_, recs := capturetest.Records(t, path)
	var out []wireFrame
	pid := 0
	for _, rec := range recs {
		if rec.Type == capture.TypeProcess && rec.What == "start" {
			pid = rec.Pid
		}
		if rec.Type != capture.TypeFrame || rec.Dir != dir {
			continue
		}
		raw, err := rec.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, wireFrame{rec.Kind, rec.Method, rec.Verdict, string(raw)})
	}
	return out, pid
}

// withoutMS drops the timing of `sonde script` output lines.
func withoutMS(t *testing.T, stdout string) []string {
	t.Helper()
	var out []string
	for line := range strings.Lines(stdout) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("script output %q: %v", line, err)
		}
		delete(m, "ms")
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

// TestReplayServeReproducesSession: a session recorded against the fixture
// (noise before every response, server requests after initialized, flood
// notifications before each call's response, an out-of-order answer, an
// error) is run again by sonde's client against `sonde replay --serve` (a
// real subprocess): same results, same exit status, and the same frames in
// both directions, byte for byte, in the same order.
func TestReplayServeReproducesSession(t *testing.T) {
	orig, r0 := record(t, replayScript, []string{"script", "-"}, "--fault", "stdout-noise,server-ping,notification-flood", "--flood-count", "2")

	replayed := filepath.Join(t.TempDir(), "replayed.jsonl")
	r := clitest.RunSonde(t, replayScript, mockCmd([]string{"script", "-", "--record", replayed}, orig)...)
	if r.Code != cmdutil.ExitToolError || r0.Code != cmdutil.ExitToolError {
		t.Fatalf("exit %d (recorded run %d), want 1 (the fail line)\nstdout: %s\nstderr: %s", r.Code, r0.Code, r.Stdout, r.Stderr)
	}
	wantOut := withoutMS(t, r0.Stdout)
	if got := withoutMS(t, r.Stdout); strings.Join(got, "\n") != strings.Join(wantOut, "\n") {
		t.Errorf("results differ\n got: %q\nwant: %q", got, wantOut)
	}
	for _, dir := range []string{"in", "out"} {
		want, _ := framesOf(t, orig, dir)
		got, pid := framesOf(t, replayed, dir)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s frames differ\n got:\n%s\nwant:\n%s", dir, showFrames(got), showFrames(want))
		}
		if pid == 0 || proctest.Alive(pid) {
			t.Errorf("the mock server (pid %d) is still running", pid)
		}
	}
	// The flood, the noise and the server requests are all there.
	in, _ := framesOf(t, orig, "in")
	counts := map[string]int{}
	for _, f := range in {
		counts[f.kind+" "+f.verdict]++
		counts[f.kind]++
	}
	if counts["invalid malformed"] != 5 || counts["request"] != 2 || counts["notification notification"] != 6 {
		t.Errorf("recorded in-frames by kind and verdict: %v", counts)
	}
}

func showFrames(fs []wireFrame) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s %s %.100s\n", f.kind, f.method, f.verdict, f.raw)
	}
	return b.String()
}

// TestReplayServeMatching: a request nothing recorded matches gets -32010
// naming the method, the nearest recorded request and what the capture has
// (MCP_ERROR, exit 3); a call of the same tool with other arguments gets
// the error naming the argument that differs, also under --strict (#33),
// and the recorded answer (the looser match) only with --loose, unless
// --repeat fail and the answer was played.
func TestReplayServeMatching(t *testing.T) {
	orig, _ := record(t, "", []string{"call", "echo", "--args", `{"value":"hi"}`})
	r := clitest.RunSonde(t, "", mockCmd([]string{"call", "nope"}, orig)...)
	clitest.CheckRun(t, r, cmdutil.ExitRemote, `sonde: MCP_ERROR: server error -32010: sonde replay: the capture has no recorded request matching tools/call "nope"; nearest: tools/call "echo" (recorded id 2); recorded: initialize ×1, tools/call echo ×1`+"\n")
	for _, extra := range [][]string{nil, {"--strict"}} {
		r = clitest.RunSonde(t, "", mockCmd([]string{"call", "echo", "--args", `{"value":"other"}`}, orig, extra...)...)
		clitest.CheckRun(t, r, cmdutil.ExitRemote, `sonde: MCP_ERROR: server error -32010: sonde replay: the capture has no recorded request matching tools/call "echo"; nearest: tools/call "echo" (recorded id 2), which differs at arguments.value; recorded: initialize ×1, tools/call echo ×1`+"\n")
	}
	r = clitest.RunSonde(t, "", mockCmd([]string{"call", "echo", "--args", `{"value":"other"}`}, orig, "--loose")...)
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	if r.Stdout != "hi\n" {
		t.Errorf("--loose: stdout %q, want the recorded answer hi", r.Stdout)
	}
	if r := clitest.RunSonde(t, "", "replay", "--serve", orig, "--loose", "--strict"); r.Code != cmdutil.ExitUsage {
		t.Errorf("--loose --strict: %d %s", r.Code, r.Stderr)
	}
	// --repeat fail: the recorded answer is played once; then a call with
	// other arguments is refused, naming the argument that differs.
	const twice = `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"hi"}}}
{"method":"tools/call","params":{"name":"echo","arguments":{"value":"other"}}}
`
	r = clitest.RunSonde(t, twice, mockCmd([]string{"script", "-"}, orig, "--repeat", "fail", "--loose")...)
	if r.Code != cmdutil.ExitToolError || !strings.Contains(r.Stdout, `"result":{"content":[{"type":"text","text":"hi"}]`) ||
		!strings.Contains(r.Stdout, `nearest: tools/call \"echo\" (recorded id 2), which differs at arguments.value; recorded: initialize ×1, tools/call echo ×1`) {
		t.Errorf("--repeat fail: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestReplayServeStringIDs drives `sonde replay --serve` directly with
// string ids: the recorded answer comes back with the caller's id (and the
// progress notifications with the caller's progressToken), every other byte
// as recorded; the noise lines come at their points; a line that is not
// JSON gets -32700 with id null; stdin EOF ends it with status 0.
func TestReplayServeStringIDs(t *testing.T) {
	orig, _ := record(t, "", []string{"call", "progress", "--args", `{"steps":2,"interval_ms":30}`}, "--fault", "stdout-noise")
	in, _ := framesOf(t, orig, "in")

	cmd := exec.Command(os.Args[0], "replay", "--serve", orig, "--speed", "4")
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr clitest.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if proctest.Alive(cmd.Process.Pid) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Errorf("the mock server was still running")
		}
	}()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stdout ended\nstderr: %s", stderr.String())
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("no line from the mock server\nstderr: %s", stderr.String())
		}
		return ""
	}
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	rewrite := func(raw, id, token string) string {
		b := []byte(raw)
		if id != "" {
			b, _ = serve.RewriteID(b, []byte(id))
		}
		if token != "" {
			b, _ = serve.RewriteToken(b, []byte(token))
		}
		return string(b)
	}

	send(`{"jsonrpc":"2.0","id":"init-A","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	// The recorded in-frames: noise, initialize response, then the call's
	// two progress notifications, noise, response.
	if len(in) != 6 {
		t.Fatalf("recorded in-frames: %v", in)
	}
	for _, want := range []string{in[0].raw, rewrite(in[1].raw, `"init-A"`, "")} {
		if got := next(); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":"call-B","method":"tools/call","params":{"name":"progress","arguments":{"steps":2,"interval_ms":30},"_meta":{"progressToken":"tok-B"}}}`)
	for _, want := range []string{
		rewrite(in[2].raw, "", `"tok-B"`), rewrite(in[3].raw, "", `"tok-B"`), in[4].raw, rewrite(in[5].raw, `"call-B"`, ""),
	} {
		if got := next(); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	if !strings.Contains(in[2].raw, `"progressToken":2`) || !strings.Contains(in[5].raw, `"id":2`) {
		t.Errorf("recorded frames: %v", in)
	}
	send(`this is not json`)
	if got, want := next(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"sonde replay: parse error: the line is not JSON"}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v\nstderr: %s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10s after stdin EOF")
	}
	if l, ok := <-lines; ok {
		t.Errorf("unexpected line %q", l)
	}
	for _, want := range []string{`initialize id "init-A": recorded id 1 (loose match)`, `tools/call id "call-B": recorded id 2 (exact match)`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// againstScript is the session re-driven: two echo calls, an error, a list.
const againstScript = `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"slow","delay_ms":50}}}
{"method":"tools/call","params":{"name":"echo","arguments":{"value":"fast"}},"delay_ms":20}
{"method":"tools/call","params":{"name":"fail","arguments":{"message":"boom"}}}
{"method":"tools/list"}
`

// TestReplayAgainst re-drives a recorded fixture session against live
// fixtures: unchanged, it is equal (exit 0); with echo's answer changed
// (--echo-prefix) the diff names each changed field (exit 1); --ignore
// takes those fields out; a server that no longer answers is reported as
// timeouts; a server that cannot start is MCP_SPAWN.
func TestReplayAgainst(t *testing.T) {
	orig, _ := record(t, againstScript, []string{"script", "-"})
	against := func(t *testing.T, flags []string, fixtureArgs ...string) clitest.Result {
		t.Helper()
		f := clitest.NewFixture(t)
		return clitest.RunSonde(t, "", f.Cmd(append([]string{"replay", "--against", orig}, flags...), fixtureArgs...)...)
	}
	t.Run("unchanged", func(t *testing.T) {
		r := against(t, nil)
		clitest.CheckRun(t, r, cmdutil.ExitOK, "")
		want := `#1 tools/call echo (recorded id 2, now id 2): equal
#2 tools/call echo (recorded id 3, now id 3): equal
#3 tools/call fail (recorded id 4, now id 4): equal
#4 tools/list (recorded id 5, now id 5): equal
4 requests: 4 equal, 0 different
`
		if r.Stdout != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", r.Stdout, want)
		}
	})
	t.Run("changed", func(t *testing.T) {
		r := against(t, nil, "--echo-prefix", "v2:")
		clitest.CheckRun(t, r, cmdutil.ExitToolError, "sonde: replay: 2 of 4 requests answered differently\n")
		want := `#1 tools/call echo (recorded id 2, now id 2): different
    result.content[0].text: "slow" → "v2:slow"
    result.structuredContent.value: "slow" → "v2:slow"
#2 tools/call echo (recorded id 3, now id 3): different
    result.content[0].text: "fast" → "v2:fast"
    result.structuredContent.value: "fast" → "v2:fast"
#3 tools/call fail (recorded id 4, now id 4): equal
#4 tools/list (recorded id 5, now id 5): equal
4 requests: 2 equal, 2 different
`
		if r.Stdout != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", r.Stdout, want)
		}
	})
	t.Run("json", func(t *testing.T) {
		r := against(t, []string{"--json", "--no-pacing"}, "--echo-prefix", "v2:")
		clitest.CheckRun(t, r, cmdutil.ExitToolError, "sonde: replay: 2 of 4 requests answered differently\n")
		var rep struct {
			Equal    bool
			Requests []struct {
				Status string
				Diffs  []struct {
					Path          string
					Recorded, Now json.RawMessage
				}
			}
		}
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, r.Stdout)
		}
		if rep.Equal || len(rep.Requests) != 4 || rep.Requests[1].Status != "different" || len(rep.Requests[1].Diffs) != 2 ||
			rep.Requests[1].Diffs[0].Path != "result.content[0].text" || string(rep.Requests[1].Diffs[0].Now) != `"v2:fast"` {
			t.Errorf("report: %+v", rep)
		}
	})
	t.Run("ignored", func(t *testing.T) {
		r := against(t, []string{"--ignore", "result.content[*].text", "--ignore", "..value"}, "--echo-prefix", "v2:")
		clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	})
	t.Run("timeouts", func(t *testing.T) {
		r := against(t, []string{"--timeout", clitest.SlowTimeout}, "--fault", "never-respond")
		clitest.CheckRun(t, r, cmdutil.ExitToolError, "sonde: replay: 3 of 4 requests answered differently\n")
		for _, want := range []string{
			"#1 tools/call echo (recorded id 2, now id 2): different: was a result, now a timeout (MCP_TIMEOUT)\n",
			`#3 tools/call fail (recorded id 4, now id 4): different: was error -32001 "boom", now a timeout (MCP_TIMEOUT)` + "\n",
			"#4 tools/list (recorded id 5, now id 5): equal\n",
		} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
			}
		}
	})
	t.Run("http", func(t *testing.T) {
		base := clitest.FixtureHTTP(t, "--echo-prefix", "v2:")
		r := clitest.RunSonde(t, "", "replay", "--against", orig, "--url", base+"/mcp")
		clitest.CheckRun(t, r, cmdutil.ExitToolError, "sonde: replay: 2 of 4 requests answered differently\n")
		if !strings.Contains(r.Stdout, `    result.content[0].text: "fast" → "v2:fast"`+"\n") {
			t.Errorf("stdout:\n%s", r.Stdout)
		}
	})
	t.Run("protocol version", func(t *testing.T) {
		old, _ := record(t, againstScript, []string{"script", "-", "--protocol-version", "2025-06-18"})
		again := filepath.Join(t.TempDir(), "again.jsonl")
		clitest.NewFixture(t).RunChecked("", []string{"replay", "--against", old, "--record", again}, nil, cmdutil.ExitOK, "sonde: capture "+again+": ...")
		out, _ := framesOf(t, again, "out")
		if len(out) == 0 || out[0].method != "initialize" || !strings.Contains(out[0].raw, `"protocolVersion":"2025-06-18"`) {
			t.Errorf("initialize: %v", out)
		}
	})
	t.Run("spawn", func(t *testing.T) {
		r := clitest.RunSonde(t, "", "replay", "--against", orig, "--", filepath.Join(t.TempDir(), "no-such-server"))
		if r.Code != cmdutil.ExitSpawn || !strings.HasPrefix(r.Stderr, "sonde: MCP_SPAWN: ") {
			t.Errorf("exit %d, stderr %q", r.Code, r.Stderr)
		}
	})
}

// TestReplayUsage: every bad command line is a usage error (exit 2) with a
// message, before anything is started.
func TestReplayUsage(t *testing.T) {
	dir := t.TempDir()
	notCapture := filepath.Join(dir, "notes.txt")
	clitest.WriteTestFile(t, notCapture, "hello\n")
	missing := filepath.Join(dir, "missing.jsonl")
	sample := filepath.Join(peertest.Root(), "testdata", "captures", "out-of-order-late-crash.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no mode", []string{"replay"}, "sonde: replay needs a capture FILE, --serve FILE or --against FILE (see sonde replay --help)\n"},
		{"the UI", []string{"replay", "x.jsonl"}, "sonde: capture x.jsonl: no such file\n"},
		{"both", []string{"replay", "--serve", "a", "--against", "b"}, "sonde: give either --serve FILE or --against FILE, not both\n"},
		{"speed", []string{"replay", "--serve", "a", "--speed", "0"}, "sonde: --speed 0: want a positive factor (e.g. 2 for twice as fast), or --no-pacing\n"},
		{"missing", []string{"replay", "--serve", missing}, "sonde: --serve open " + missing + ": no such file or directory\n"},
		{"not a capture", []string{"replay", "--serve", notCapture}, "sonde: --serve " + notCapture + ": capture line 1: not a sonde capture: ..."},
		{"serve with a command", []string{"replay", "--serve", notCapture, "--", "x"}, "sonde: --serve takes no server command and no --url: it is the server\n"},
		{"serve with --record", []string{"replay", "--serve", notCapture, "--record", missing}, "sonde: --record, --trace and --ignore apply to --against, not to --serve\n"},
		{"bad repeat", []string{"replay", "--serve", notCapture, "--repeat", "again"}, `sonde: --repeat "again": want cycle, last or fail` + "\n"},
		{"remote listen", []string{"replay", "--serve", notCapture, "--listen", "0.0.0.0:3001"}, `sonde: --listen "0.0.0.0:3001" is not a loopback address: the mock would answer anyone who can reach it; add --allow-remote to mean it` + "\n"},
		{"listen without port", []string{"replay", "--serve", notCapture, "--listen", "localhost"}, `sonde: --listen "localhost": want HOST:PORT, e.g. 127.0.0.1:3001 (address localhost: missing port in address)` + "\n"},
		{"allow-remote alone", []string{"replay", "--serve", notCapture, "--allow-remote"}, "sonde: --allow-remote goes with --listen ADDR\n"},
		{"session out of range", []string{"replay", "--serve", sample, "--session", "2"}, "sonde: --session 2: " + sample + " holds 1 session(s) (1 to 1; 0 for all)\n"},
		{"against without a server", []string{"replay", "--against", notCapture}, "sonde: no server command: put it after --, e.g. sonde replay ... -- ./server --flag, or connect with --url URL\n"},
		{"bad ignore", []string{"replay", "--against", notCapture, "--ignore", "result[x]", "--", "x"}, `sonde: --ignore "result[x]": [x] is not an index (want [N] or [*])` + "\n"},
		{"against not a capture", []string{"replay", "--against", notCapture, "--", "x"}, "sonde: --against " + notCapture + ": capture line 1: not a sonde capture: ..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clitest.CheckRun(t, clitest.RunSonde(t, "", tc.args...), cmdutil.ExitUsage, tc.want)
		})
	}
}

// TestReplayServeEverything: a session with the reference server
// (server-everything, installed by make peers) served back by the mock:
// sonde's client gets the same results and the same frames from the
// server's side, in the same order. Script lines do not wait for answers,
// so each waits a second before it is sent: the answer before it (and the
// server's notifications after the handshake) arrive long before it, in
// both runs. (With 100 ms, and no wait before tools/list, the replayed
// tools/list answer came after the echo's once under load.)
func TestReplayServeEverything(t *testing.T) {
	bin := peertest.Everything(t)
	const script = `{"method":"tools/list","delay_ms":1000}
{"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}},"delay_ms":1000}
{"method":"tools/call","params":{"name":"no-such-tool","arguments":{}},"delay_ms":1000}
`
	dir := t.TempDir()
	orig := filepath.Join(dir, "everything.jsonl")
	r0 := clitest.RunSonde(t, script, "script", "-", "--timeout", "20s", "--record", orig, "--", bin)
	if !strings.Contains(r0.Stderr, "sonde: capture "+orig) {
		t.Fatalf("not recorded: exit %d\n%s", r0.Code, r0.Stderr)
	}
	replayed := filepath.Join(dir, "replayed.jsonl")
	r := clitest.RunSonde(t, script, mockCmd([]string{"script", "-", "--record", replayed}, orig)...)
	if r.Code != r0.Code {
		t.Errorf("exit %d, recorded run %d\nstderr: %s", r.Code, r0.Code, r.Stderr)
	}
	if got, want := withoutMS(t, r.Stdout), withoutMS(t, r0.Stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results differ\n got: %q\nwant: %q", got, want)
	}
	want, _ := framesOf(t, orig, "in")
	got, pid := framesOf(t, replayed, "in")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("in frames differ\n got:\n%s\nwant:\n%s", showFrames(got), showFrames(want))
	}
	if len(want) < 4 || pid == 0 || proctest.Alive(pid) {
		t.Errorf("%d frames; mock pid %d alive", len(want), pid)
	}
}

// TestReplayServeCrash: the sample capture ends with the server crashing
// in the middle of a call; served back, the mock crashes at the same point
// with the same status and stderr, and the client reports MCP_PROCESS_EXIT.
func TestReplayServeCrash(t *testing.T) {
	sample := filepath.Join(peertest.Root(), "testdata", "captures", "out-of-order-late-crash.jsonl")
	r := clitest.RunSonde(t, "", mockCmd([]string{"call", "crash"}, sample)...)
	if r.Code != cmdutil.ExitExited || !strings.HasPrefix(r.Stderr, "sonde: MCP_PROCESS_EXIT: ") ||
		!strings.Contains(r.Stderr, "exit-mid-call") || !strings.Contains(r.Stderr, "the recorded server exited here with status 3") {
		t.Errorf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}
