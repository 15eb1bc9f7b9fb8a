package tap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/transport"
)

// TestInjectLive: sonde inject calls a tool in the session a host runs
// through sonde tap; the answer comes to sonde inject, the host never
// sees it, and the host's own calls go on; a session that ended takes no
// requests; a server's error is the command's error.
func TestInjectLive(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	h := liveTap(t, home, "driven")
	h.write(initialized)

	r := clitest.RunSonde(t, "", "inject", "tools/call", "--params", `{"name":"echo","arguments":{"value":"injected by sonde"}}`)
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, `"text": "injected by sonde"`) {
		t.Errorf("stdout:\n%s", r.Stdout)
	}
	r = clitest.RunSonde(t, "", "inject", "tools/call", "--params", `{"name":"fail","arguments":{}}`)
	if r.Code != 3 || !strings.Contains(r.Stderr, "MCP_ERROR") {
		t.Errorf("a failing call: exit %d\n%s", r.Code, r.Stderr)
	}
	h.write(echoCall(2, "the host's own", 0))
	h.await(`"id":2`, 1)
	if out := h.stdoutText(); strings.Contains(out, "injected by sonde") || strings.Contains(out, `"id":"sonde-`) {
		t.Errorf("the host saw an injected answer:\n%s", out)
	}
	if n := strings.Count(h.stdoutText(), "\n"); n != 2 {
		t.Errorf("the host got %d lines, want 2:\n%s", n, h.stdoutText())
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "driven-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	if n := strings.Count(notes(t, files[0]), "sonde inject: request "); n != 2 {
		t.Errorf("%d injected requests noted, want 2:\n%s", n, notes(t, files[0]))
	}
	if _, err := os.Stat(strings.TrimSuffix(files[0], ".jsonl") + ".sock"); !os.IsNotExist(err) {
		t.Errorf("the socket is left after the tap ended: %v", err)
	}
	r = clitest.RunSonde(t, "", "inject", "ping", "--session", id)
	if r.Code != 2 || !strings.Contains(r.Stderr, "takes no requests") {
		t.Errorf("an ended session: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestInjectHTTP: sonde inject into a session a host runs through the
// HTTP tap (its own recording, once the tap saw the session start): the
// answer comes to sonde inject, the host's client sees nothing of it and
// goes on.
func TestInjectHTTP(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	tap, c, _ := httpHostSession(t, home)
	r := clitest.RunSonde(t, "", "inject", "tools/call", "--params", `{"name":"echo","arguments":{"value":"injected over http"}}`)
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, `"text": "injected over http"`) {
		t.Errorf("stdout:\n%s", r.Stdout)
	}
	hostUntouched(t, c, "the host")
	c.Close()
	tap.stop(t)
	// The injected request is noted in the recording of the host's
	// session, not in the tap's own.
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "remote-1-*.jsonl"))
	if len(files) != 1 || !strings.Contains(notes(t, files[0]), "sonde inject: request ") {
		t.Fatalf("sessions %v: the injected request is not noted", files)
	}
}

// liveTap starts a host running the fixture through sonde tap --label
// label, recording in home's sessions folder, and does the handshake's
// first half (initialize answered).
func liveTap(t *testing.T, home, label string) *host {
	t.Helper()
	fx := clitest.NewFixture(t)
	h := startHost(t, []string{"SONDE_HOME=" + home}, append([]string{os.Args[0], "tap", "--label", label, "--"}, fx.Argv()...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	return h
}

// httpHostSession starts sonde tap --listen (label remote, recording in
// home's sessions folder) in front of the fixture over HTTP, and a host's
// client through it past its handshake; it waits for the recording of the
// host's session and its socket (made once the tap observed the answer
// that named the session) and returns the recording's path. The client is
// closed when the test ends.
func httpHostSession(t *testing.T, home string) (*httpTap, *client.Client, string) {
	t.Helper()
	tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--label", "remote")
	c := hostThrough(t, tap, transport.ModeStreamable)
	return tap, c, strings.TrimSuffix(waitSocket(t, home, "remote-1", tap), ".sock") + ".jsonl"
}

// hostThrough is a host's client through tap in mode, past its
// handshake; it is closed when the test ends.
func hostThrough(t *testing.T, tap *httpTap, mode transport.HTTPMode) *client.Client {
	t.Helper()
	c := client.New(client.Options{Timeout: 10 * time.Second})
	t.Cleanup(func() { c.Close() })
	if err := c.Connect(client.HTTP(transport.HTTPConfig{URL: tap.url, Mode: mode})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestInjectHTTPIntoItsSession: with two hosts through one HTTP tap,
// sonde inject into the recording of the first host's session goes into
// that session (its Mcp-Session-Id), not into the session of the latest
// POST (the second host's): only the first session's recording has the
// injected request, answered, and neither host sees anything of it.
func TestInjectHTTPIntoItsSession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--label", "two")
	hosts := [2]*client.Client{hostThrough(t, tap, transport.ModeStreamable), hostThrough(t, tap, transport.ModeStreamable)}
	first := waitSocket(t, home, "two-1", tap)
	waitSocket(t, home, "two-2", tap)
	r := clitest.RunSonde(t, "", "inject", "tools/call", "--session", filepath.Base(strings.TrimSuffix(first, ".sock")), "--params", `{"name":"echo","arguments":{"value":"into the first"}}`)
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, `"text": "into the first"`) {
		t.Errorf("stdout:\n%s", r.Stdout)
	}
	for i, c := range hosts {
		hostUntouched(t, c, fmt.Sprintf("host %d", i+1))
		c.Close()
	}
	tap.stop(t)
	for n, want := range map[string]bool{"1": true, "2": false} {
		files, _ := filepath.Glob(filepath.Join(home, "sessions", "two-"+n+"-*.jsonl"))
		if len(files) != 1 {
			t.Fatalf("session %s: recordings %v", n, files)
		}
		injected := false
		for _, rec := range readCapture(t, files[0]) {
			if rec.Type == capture.TypeFrame && rec.Dir == "out" && strings.Contains(rec.Raw, "into the first") {
				injected = true
			}
		}
		if injected != want {
			t.Errorf("session %s: the injected request in its recording: %v, want %v\n%s", n, injected, want, notes(t, files[0]))
		}
	}
}

// TestInjectHTTPLegacyRefused: a legacy HTTP+SSE session through the tap
// takes no injected request (its answer would come on the host's own
// stream): sonde inject says so as a usage error (exit 2), and the host
// sees nothing.
func TestInjectHTTPLegacyRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	tap := startHTTPTap(t, peertest.EverythingHTTP(t, "sse")+"/sse", "--label", "old")
	c := hostThrough(t, tap, transport.ModeSSE)
	sock := waitSocket(t, home, "old-1", tap)
	for _, session := range []string{filepath.Base(strings.TrimSuffix(sock, ".sock")), ""} {
		args := []string{"inject", "ping"}
		if session != "" {
			args = append(args, "--session", session)
		}
		r := clitest.RunSonde(t, "", args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "a legacy HTTP+SSE session takes no injected requests") {
			t.Errorf("session %q: exit %d, stderr:\n%s", session, r.Code, r.Stderr)
		}
	}
	hostUntouched(t, c, "the host")
}

// hostUntouched checks, after a request was injected into its session,
// that the host named who still has its calls answered and saw nothing
// of the injected one (no unknown, malformed or duplicate answer).
func hostUntouched(t *testing.T, c *client.Client, who string) {
	t.Helper()
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatalf("%s's call after: %v", who, err)
	}
	if s := c.Stats(); s.Unknown+s.Malformed+s.Duplicate != 0 {
		t.Errorf("%s saw something: %+v", who, s)
	}
}

// waitSocket waits for the injection socket of the recording named
// prefix-… in home's sessions folder, and returns its path.
func waitSocket(t *testing.T, home, prefix string, tap *httpTap) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if socks, _ := filepath.Glob(filepath.Join(home, "sessions", prefix+"-*.sock")); len(socks) == 1 {
			return socks[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no socket for %s\n%s", prefix, tap.errText())
		}
	}
}
