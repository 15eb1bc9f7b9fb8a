package tap_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// httpTap is `sonde tap --listen` run as a re-executed test binary.
type httpTap struct {
	url    string // what the host is pointed at
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	done   chan error
}

func (h *httpTap) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stderr.Write(p)
}

func (h *httpTap) errText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stderr.String()
}

// startHTTPTap starts `sonde tap --listen 127.0.0.1:0 --target target
// args...` and waits for its URL. Cleanup stops it with SIGTERM.
func startHTTPTap(t testing.TB, target string, args ...string) *httpTap {
	t.Helper()
	h := &httpTap{done: make(chan error, 1)}
	h.cmd = exec.Command(os.Args[0], append([]string{"tap", "--listen", "127.0.0.1:0", "--target", target}, args...)...)
	h.cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	h.cmd.Stderr = h
	stdout, _ := h.cmd.StdoutPipe()
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- h.cmd.Wait() }()
	t.Cleanup(func() { h.stop(t) })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go io.Copy(io.Discard, stdout)
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("sonde tap --listen: %q %v\n%s", line, err, h.errText())
	}
	h.url = u
	return h
}

// stop sends SIGTERM and waits for the tap to end (it exits 0).
func (h *httpTap) stop(t testing.TB) {
	t.Helper()
	if h.cmd.ProcessState != nil {
		return
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-h.done:
		if err != nil {
			t.Errorf("sonde tap --listen after SIGTERM: %v\n%s", err, h.errText())
		}
	case <-time.After(15 * time.Second):
		h.cmd.Process.Kill()
		<-h.done
		t.Errorf("sonde tap --listen did not stop on SIGTERM\n%s", h.errText())
	}
}

// outcome is what a client saw of a session: comparable direct and
// through the tap.
type outcome struct {
	Server   string
	Tools    []string
	Echo     string
	Progress int // progress notifications for the progress call
	Done     string
	Fail     string // the fail tool's error code
}

// driveHTTP runs a session as a host would: the handshake, tools/list, echo,
// a progress call (SSE-streamed, with its notifications), a failing call.
func driveHTTP(t *testing.T, url string, mode transport.HTTPMode) outcome {
	t.Helper()
	c := client.New(client.Options{Timeout: 20 * time.Second})
	sub := c.Subscribe(4096)
	var progress int
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		for ev := range sub.C {
			if ev.Kind == client.EvRequest && ev.Req.State == client.StateProgress {
				progress++
			}
		}
	}()
	if err := c.Connect(client.HTTP(transport.HTTPConfig{URL: url, Mode: mode})); err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	ctx := context.Background()
	var o outcome
	res, err := c.Initialize(ctx)
	if err != nil {
		t.Fatalf("initialize through %s: %v", url, err)
	}
	o.Server = res.ServerInfo.Name
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		o.Tools = append(o.Tools, tl.Name)
	}
	text := func(r *mcp.CallToolResult) string {
		b, _ := json.Marshal(r.Content)
		return string(b)
	}
	r, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"through"}`), client.CallOptions{Tool: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	o.Echo = text(r)
	r, _, err = c.CallTool(ctx, "progress", json.RawMessage(`{"steps":3}`), client.CallOptions{Tool: "progress", ProgressToken: true})
	if err != nil {
		t.Fatal(err)
	}
	o.Done = text(r)
	_, _, err = c.CallTool(ctx, "fail", json.RawMessage(`{}`), client.CallOptions{Tool: "fail"})
	if err != nil {
		o.Fail = err.Error()
	}
	c.Close()
	<-counted
	o.Progress = progress
	return o
}

// TestListenSameAsDirect: sonde's own client, against the fixture's HTTP
// mode, gets the same answers through `sonde tap --listen` as directly,
// over Streamable HTTP (an SSE-streamed call with progress among them)
// and over the legacy HTTP+SSE transport; the tap stops on SIGTERM and
// its recording reads back (transport http, frames of both sides with
// their verdicts and HTTP stream labels), and lint and stats read it.
func TestListenSameAsDirect(t *testing.T) {
	base := clitest.FixtureHTTP(t)
	for _, tc := range []struct {
		name, path string
		mode       transport.HTTPMode
		stream     string // a stream label the server's frames carry
	}{
		{"streamable", "/mcp", transport.ModeStreamable, "POST "},
		{"legacy SSE", "/sse", transport.ModeSSE, "SSE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct := driveHTTP(t, base+tc.path, tc.mode)
			if direct.Progress == 0 || len(direct.Tools) == 0 || direct.Fail == "" {
				t.Fatalf("direct session is not what this test expects: %+v", direct)
			}
			rec := filepath.Join(t.TempDir(), "s.jsonl")
			tap := startHTTPTap(t, base+tc.path, "--record", rec)
			if !strings.HasSuffix(tap.url, tc.path) {
				t.Errorf("tap URL %s, want the target's path %s", tap.url, tc.path)
			}
			through := driveHTTP(t, tap.url, tc.mode)
			if g, w := mustJSON(through), mustJSON(direct); g != w {
				t.Errorf("through the tap:\n%s\ndirect:\n%s", g, w)
			}
			tap.stop(t)

			h, recs := capturetest.Records(t, rec)
			if h.Transport != "http" || h.URL != base+tc.path {
				t.Errorf("header %+v, want transport http, url %s", h, base+tc.path)
			}
			count := map[string]int{}
			var exchanges int
			for _, rec := range recs {
				switch rec.Type {
				case capture.TypeFrame:
					count[rec.Dir+" "+rec.Verdict]++
					if rec.Dir == "in" && strings.HasPrefix(rec.Stream, tc.stream) {
						count["in on "+tc.stream]++
					}
					if rec.Stream == "" {
						t.Errorf("frame without a stream label: %+v", rec)
					}
				case capture.TypeHTTP:
					if rec.HTTP != nil && rec.HTTP.Status != 0 {
						exchanges++
					}
				}
			}
			// initialize, tools/list, echo, progress, fail; the handshake's
			// initialized notification.
			for k, n := range map[string]int{"out sent": 6, "in resolved": 4, "in error": 1, "in progress": 3} {
				if count[k] < n {
					t.Errorf("%s: %d frames, want %d (all: %v)", k, count[k], n, count)
				}
			}
			if count["in on "+tc.stream] == 0 {
				t.Errorf("no frame from the server on a %q stream: %v", tc.stream, count)
			}
			if exchanges < 5 {
				t.Errorf("%d HTTP exchanges recorded, want at least 5", exchanges)
			}
			for _, sub := range [][]string{{"lint", rec}, {"stats", rec}} {
				res := clitest.RunSonde(t, "", sub...)
				if res.Code != 0 {
					t.Errorf("sonde %s: exit %d\n%s%s", sub[0], res.Code, res.Stdout, res.Stderr)
				}
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestListenEverythingSSE: a legacy HTTP+SSE session with server-everything
// (its sse mode) through the tap gets the same tools and echo as directly.
func TestListenEverythingSSE(t *testing.T) {
	base := peertest.EverythingHTTP(t, "sse")
	session := func(url string) string {
		c := client.New(client.Options{Timeout: 20 * time.Second})
		if err := c.Connect(client.HTTP(transport.HTTPConfig{URL: url, Mode: transport.ModeSSE})); err != nil {
			t.Fatalf("connect %s: %v", url, err)
		}
		defer c.Close()
		ctx := context.Background()
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatalf("initialize through %s: %v", url, err)
		}
		tools, err := c.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		r, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message":"through"}`), client.CallOptions{Tool: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		return mustJSON(names) + mustJSON(r.Content)
	}
	direct := session(base + "/sse")
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	tap := startHTTPTap(t, base+"/sse", "--record", rec)
	if through := session(tap.url); through != direct {
		t.Errorf("through the tap:\n%s\ndirect:\n%s", through, direct)
	}
	tap.stop(t)
	var sse int
	for _, r := range readCapture(t, rec) {
		if r.Type == capture.TypeFrame && r.Dir == "in" && r.Stream == "SSE" {
			sse++
		}
	}
	if sse < 3 {
		t.Errorf("%d frames from the server on the SSE stream, want 3 (initialize, tools/list, echo)", sse)
	}
}

// TestListenNotLoopback: a --listen address that is not loopback is a
// usage error without --allow-remote; so is --listen without --target,
// and a command after --listen.
func TestListenNotLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"tap", "--listen", "0.0.0.0:0", "--target", "http://127.0.0.1:1/mcp", "--no-record"},
		{"tap", "--listen", ":0", "--target", "http://127.0.0.1:1/mcp", "--no-record"},
		{"tap", "--listen", "127.0.0.1:0", "--no-record"},
		{"tap", "--listen", "127.0.0.1:0", "--target", "ftp://x/", "--no-record"},
		{"tap", "--listen", "127.0.0.1:0", "--target", "http://127.0.0.1:1/mcp", "--", "server"},
	} {
		res := clitest.RunSonde(t, "", args...)
		if res.Code != 2 {
			t.Errorf("sonde %s: exit %d, want 2 (usage)\n%s", strings.Join(args, " "), res.Code, res.Stderr)
		}
	}
	if res := clitest.RunSonde(t, "", "tap", "--listen", "0.0.0.0:0"); !strings.Contains(res.Stderr, "--allow-remote") && !strings.Contains(res.Stderr, "--target") {
		t.Errorf("stderr does not say what to do: %s", res.Stderr)
	}
}

// TestListenManyCalls: 500 calls in a row through the tap all get their
// answer (a request body read to its end after the answer's headers were
// written once broke the upstream connection mid-answer, about 1 call in
// 150, before the proxy asked for full duplex).
func TestListenManyCalls(t *testing.T) {
	base := clitest.FixtureHTTP(t)
	tap := startHTTPTap(t, base+"/mcp", "--no-record")
	c := client.New(client.Options{Timeout: 20 * time.Second})
	if err := c.Connect(client.HTTP(transport.HTTPConfig{URL: tap.url, Mode: transport.ModeStreamable})); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		start := time.Now()
		if _, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"x"}`), client.CallOptions{Tool: "echo"}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if d := time.Since(start); d > 900*time.Millisecond {
			t.Fatalf("call %d took %v: its stream was resumed", i, d)
		}
	}
}

// TestListenRedacts: what the host sends in Authorization, and the value
// of a variable of the tap's environment named like a secret, are not in
// the recording, though both went through.
func TestListenRedacts(t *testing.T) {
	base := clitest.FixtureHTTP(t)
	t.Setenv("SONDE_TEST_API_TOKEN", "tok-from-env-4711")
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	tap := startHTTPTap(t, base+"/mcp", "--record", rec)
	c := client.New(client.Options{Timeout: 20 * time.Second})
	hdr := http.Header{"Authorization": {"Bearer hdr-secret-0815"}}
	if err := c.Connect(client.HTTP(transport.HTTPConfig{URL: tap.url, Mode: transport.ModeStreamable, Header: hdr})); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	r, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"tok-from-env-4711"}`), client.CallOptions{Tool: "echo"})
	if err != nil || !strings.Contains(mustJSON(r.Content), "tok-from-env-4711") {
		t.Fatalf("echo through the tap: %v %v", r, err)
	}
	c.Close()
	tap.stop(t)
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hdr-secret-0815", "tok-from-env-4711"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the recording holds %q", secret)
		}
	}
	if !strings.Contains(string(b), "Authorization: «redacted»") {
		t.Errorf("the recording does not show the redacted Authorization header")
	}
}

// twoHosts connects two hosts to url in mode and has each call tool with
// args n times, both at once (so their ids are the same at the same time);
// the first is closed (its session ends), then the test waits until the
// recording of session LABEL-1 is closed.
func twoHosts(t *testing.T, tap *httpTap, home, label string, mode transport.HTTPMode, tool, args string, n int) {
	t.Helper()
	ctx := context.Background()
	var hosts [2]*client.Client
	for i := range hosts {
		c := client.New(client.Options{Timeout: 20 * time.Second})
		if err := c.Connect(client.HTTP(transport.HTTPConfig{URL: tap.url, Mode: mode})); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		hosts[i] = c
	}
	var wg sync.WaitGroup
	for _, c := range hosts {
		wg.Go(func() {
			for range n {
				if _, _, err := c.CallTool(ctx, tool, json.RawMessage(args), client.CallOptions{Tool: tool}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// The first host ends its session: its recording is closed while the
	// tap goes on.
	hosts[0].Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(home, "sessions", label+"-1-*.jsonl"))
		if len(files) == 1 {
			if b, _ := os.ReadFile(files[0]); strings.Contains(string(b), `"type":"end"`) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first session's recording %v was not closed when the session ended\n%s", files, tap.errText())
		}
	}
	hosts[1].Close()
	tap.stop(t)
}

// sessionRecording reads the recording of session LABEL-N: the verdicts
// of the server's frames and the methods of the HTTP exchanges.
func sessionRecording(t *testing.T, home, label, n string) (verdicts map[string]int, exchanges map[string]bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, "sessions", label+"-"+n+"-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session %s: recordings %v", n, files)
	}
	verdicts, exchanges = map[string]int{}, map[string]bool{}
	for _, r := range readCapture(t, files[0]) {
		if r.Type == capture.TypeFrame && r.Dir == "in" {
			verdicts[r.Verdict]++
		}
		if r.Type == capture.TypeHTTP && r.HTTP.Method != "" {
			exchanges[r.HTTP.Method] = true
		}
	}
	return verdicts, exchanges
}

// TestListenOneRecordingPerSession: two hosts' sessions through one
// `sonde tap --listen`, recording into the sessions folder, whose calls
// use the same ids at the same time, are two recordings (LABEL-1 and
// LABEL-2, each from its initialize to its last answer, every answer
// resolved, none unknown or duplicate) beside the tap's own (LABEL: what
// belongs to no session, and where each session is recorded); a session
// the host ends (DELETE) has its recording closed at once.
func TestListenOneRecordingPerSession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--label", "two")
	twoHosts(t, tap, home, "two", transport.ModeStreamable, "echo", `{"value":"x"}`, 5)
	main, _ := filepath.Glob(filepath.Join(home, "sessions", "two-2026*.jsonl"))
	if len(main) != 1 || strings.Count(notes(t, main[0]), "is recorded in") != 2 {
		t.Fatalf("the tap's own recording %v does not name the two sessions'\n%s", main, notes(t, main[0]))
	}
	for _, n := range []string{"1", "2"} {
		// initialize, 5 calls, and whatever else the client asked: all
		// resolved.
		if verdicts, _ := sessionRecording(t, home, "two", n); verdicts["resolved"] < 6 || len(verdicts) != 1 {
			t.Errorf("session %s: the server's frames' verdicts %v", n, verdicts)
		}
	}
}

// TestListenLegacySessionsSplit: two hosts' legacy HTTP+SSE sessions with
// server-everything (sse mode) through one `sonde tap --listen` are two
// recordings, each with its SSE stream and the POSTs to the endpoint its
// endpoint event named (every answer resolved: the ids of the two do not
// mix); a session whose stream ends (the host closes) has its recording
// closed at once.
func TestListenLegacySessionsSplit(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	tap := startHTTPTap(t, peertest.EverythingHTTP(t, "sse")+"/sse", "--label", "old")
	twoHosts(t, tap, home, "old", transport.ModeSSE, "echo", `{"message":"x"}`, 3)
	main, _ := filepath.Glob(filepath.Join(home, "sessions", "old-2026*.jsonl"))
	if len(main) != 1 || strings.Count(notes(t, main[0]), "(legacy endpoint /message?") != 4 {
		t.Fatalf("the tap's own recording %v does not name the two sessions' start and end\n%s", main, notes(t, main[0]))
	}
	for _, n := range []string{"1", "2"} {
		// initialize, 3 calls: all resolved (none unknown: the other
		// session's answers are not here), besides the server's
		// notifications, on the session's own stream.
		verdicts, exchanges := sessionRecording(t, home, "old", n)
		others := 0
		for v, k := range verdicts {
			if v != "resolved" && v != "notification" {
				others += k
			}
		}
		if verdicts["resolved"] < 4 || others != 0 || !exchanges["GET"] || !exchanges["POST"] {
			t.Errorf("session %s: the server's frames' verdicts %v, exchanges %v", n, verdicts, exchanges)
		}
	}
}
