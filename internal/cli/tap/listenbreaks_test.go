package tap_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// sondeBreaks runs `sonde breaks ARGS` (stdin: in) and returns its stdout,
// or an *exec.ExitError with its stderr.
func sondeBreaks(t *testing.T, in string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"breaks"}, args...)...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	cmd.Stdin = strings.NewReader(in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), &exec.ExitError{ProcessState: cmd.ProcessState, Stderr: []byte(stderr.String())}
	}
	return string(out), nil
}

// waitBreaks polls `sonde breaks --json` of session until n frames are held.
func waitBreaks(t *testing.T, session string, n int) []hold.Held {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := sondeBreaks(t, "", "--session", session, "--json")
		var held []hold.Held
		if err == nil {
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var h hold.Held
				if json.Unmarshal(sc.Bytes(), &h) == nil && h.Handle != "" {
					held = append(held, h)
				}
			}
		}
		if len(held) >= n {
			return held
		}
		if time.Now().After(deadline) {
			t.Fatalf("sonde breaks: %d held after 20 s, want %d (%v)\n%s", len(held), n, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestListenBreaksGoSDK: the Go SDK's Streamable HTTP client through
// `sonde tap --listen --break`: a held tools/call answer edited with
// `sonde breaks edit` reaches the client edited; a held request answered
// with `sonde breaks answer` gives it that answer (the tap answered the
// POST: the server never got it); two held answers released in reverse
// order are each matched to their call; and the recording has each step.
func TestListenBreaksGoSDK(t *testing.T) {
	peertest.GoSDKClient(t)
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--label", "bk", "--break", "dir:in kind:response tool:echo", "--break-timeout", "0")
	const session = "bk-20" // the tap's own socket, not an HTTP session's (bk-1-…)

	// Edit.
	got := gosdkRunURL(t, tap.url, 1, 1, "echo", `{"value":"orig"}`, func() {
		h := waitBreaks(t, session, 1)[0]
		var msg map[string]any
		json.Unmarshal(h.Frame, &msg)
		msg["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "edited through sonde breaks"}}}
		edit, _ := json.Marshal(msg)
		if _, err := sondeBreaks(t, string(edit), "--session", session, "edit", h.Handle, "--json", "-"); err != nil {
			t.Fatalf("sonde breaks edit: %v %s", err, err.(*exec.ExitError).Stderr)
		}
	})
	if !strings.Contains(string(got.Result), "edited through sonde breaks") {
		t.Fatalf("the Go SDK client got %s, want the edit", got.Result)
	}

	// Reverse order: both answers held, the second released first.
	got = gosdkRunURL(t, tap.url, 2, 2, "echo", `{"value":"two"}`, func() {
		l := waitBreaks(t, session, 2)
		if _, err := sondeBreaks(t, "", "--session", session, "release", l[1].Handle, l[0].Handle); err != nil {
			t.Fatalf("sonde breaks release: %v", err)
		}
	})
	if !strings.Contains(string(got.Result), "two") {
		t.Fatalf("the Go SDK client got %s", got.Result)
	}

	// Answer a held request: the tap answers the POST.
	if _, err := sondeBreaks(t, "", "--session", session, "add", "dir:out tool:add"); err != nil {
		t.Fatal(err)
	}
	got = gosdkRunURL(t, tap.url, 1, 1, "add", `{"a":1,"b":2}`, func() {
		h := waitBreaks(t, session, 1)[0]
		if h.Direction != "out" || h.Tool != "add" {
			t.Errorf("held %+v", h)
		}
		if _, err := sondeBreaks(t, "", "--session", session, "answer", h.Handle, "--result", `{"content":[{"type":"text","text":"42 from the tap"}]}`); err != nil {
			t.Fatalf("sonde breaks answer: %v", err)
		}
	})
	if !strings.Contains(string(got.Result), "42 from the tap") {
		t.Fatalf("the Go SDK client got %s", got.Result)
	}
	tap.stop(t)

	// The recordings: every step, by the socket; the answered POST is the
	// tap's own (the server never saw it).
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "bk-*.jsonl"))
	var all strings.Builder
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all.Write(b)
	}
	for _, want := range []string{`"edited"`, `"answered"`, `"released"`, "answered by sonde tap (breakpoint h4)"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the recordings lack %s", want)
		}
	}
}

// TestListenBreaksAutoContinue: with --break-timeout 1s and nobody deciding,
// the Go SDK client gets the original answer.
func TestListenBreaksAutoContinue(t *testing.T) {
	peertest.GoSDKClient(t)
	t.Setenv("SONDE_HOME", t.TempDir())
	tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--label", "ac", "--break", "dir:in tool:echo", "--break-timeout", "1s")
	got := gosdkRunURL(t, tap.url, 1, 1, "echo", `{"value":"orig"}`, func() {})
	if !strings.Contains(string(got.Result), "orig") {
		t.Fatalf("the Go SDK client got %s", got.Result)
	}
}

// gosdkRunURL runs the Go SDK client against url while during runs, and
// returns its report.
func gosdkRunURL(t *testing.T, url string, n, c int, tool, args string, during func()) gosdkReport {
	t.Helper()
	bin := peertest.GoSDKClient(t)
	cmd := exec.Command(bin, "-url", url, "-n", itoa(n), "-c", itoa(c), "-tool", tool, "-args", args)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	during()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("gosdk-client: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("gosdk-client did not end\n%s", stderr.String())
	}
	var r gosdkReport
	if err := json.Unmarshal([]byte(stdout.String()), &r); err != nil {
		t.Fatalf("gosdk-client: %v: %s", err, stdout.String())
	}
	return r
}

// TestListenBreaksLegacyInspector: the Inspector's CLI as a legacy
// HTTP+SSE host (--transport sse) of server-everything through
// `sonde tap --listen --break`: the echo answer, held on the session's
// event stream, is released by `sonde breaks release` and reaches the
// Inspector as it came; one edited reaches it edited.
func TestListenBreaksLegacyInspector(t *testing.T) {
	target := peertest.EverythingHTTP(t, "sse")
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	tap := startHTTPTap(t, target+"/sse", "--label", "lg", "--break", "dir:in kind:response tool:echo", "--break-timeout", "0")
	const session = "lg-20"
	run := func(message string, decide func(h hold.Held)) string {
		t.Helper()
		type result struct {
			out, stderr string
			ok          bool
		}
		done := make(chan result, 1)
		go func() {
			out, stderr, ok := peertest.Run(t, peertest.Inspector(t, tap.url, "--transport", "sse", "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message="+message))
			done <- result{out, stderr, ok}
		}()
		decide(waitBreaks(t, session, 1)[0])
		r := <-done
		if !r.ok {
			t.Fatalf("the Inspector: %s\n%s\n%s", r.out, r.stderr, tap.errText())
		}
		return r.out
	}
	out := run("held on the stream", func(h hold.Held) {
		if _, err := sondeBreaks(t, "", "--session", session, "release", h.Handle); err != nil {
			t.Fatalf("sonde breaks release: %v", err)
		}
	})
	if !strings.Contains(out, "held on the stream") {
		t.Fatalf("released: %s", out)
	}
	out = run("orig", func(h hold.Held) {
		var msg map[string]any
		json.Unmarshal(h.Frame, &msg)
		msg["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "edited on the legacy stream"}}}
		edit, _ := json.Marshal(msg)
		if _, err := sondeBreaks(t, string(edit), "--session", session, "edit", h.Handle, "--json", "-"); err != nil {
			t.Fatalf("sonde breaks edit: %v", err)
		}
	})
	if !strings.Contains(out, "edited on the legacy stream") {
		t.Fatalf("edited: %s", out)
	}
}

// TestListenBreaksHostileAndDrop: through `sonde tap --listen --break`, an
// edit that is not JSON and one over the 8 MiB limit are refused by
// `sonde breaks edit` (exit status 2, the reason said) and the request
// stays held; dropped, the Go SDK client's call fails once the break
// timeout passed again (the tap answers 504: the server never got it),
// and nothing stays held.
func TestListenBreaksHostileAndDrop(t *testing.T) {
	bin := peertest.GoSDKClient(t)
	t.Setenv("SONDE_HOME", t.TempDir())
	tap := startHTTPTap(t, clitest.FixtureHTTP(t)+"/mcp", "--label", "dr", "--break", "dir:out tool:echo", "--break-timeout", "10s")
	const session = "dr-20"
	cmd := exec.Command(bin, "-url", tap.url, "-tool", "echo", "-args", `{"value":"x"}`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	h := waitBreaks(t, session, 1)[0]
	huge := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"` + strings.Repeat("x", hold.MaxEditBytes) + `"}}`
	for _, edit := range []string{`{"jsonrpc":`, huge} {
		_, err := sondeBreaks(t, edit, "--session", session, "edit", h.Handle, "--json", "-")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || len(ee.Stderr) == 0 {
			t.Fatalf("edit %.30q: %v, want exit status 2 with the reason", edit, err)
		}
	}
	if l := waitBreaks(t, session, 1); l[0].Handle != h.Handle {
		t.Fatalf("after refused edits: %+v", l)
	}
	if _, err := sondeBreaks(t, "", "--session", session, "drop", h.Handle); err != nil {
		t.Fatalf("sonde breaks drop: %v", err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(stderr.String(), "Gateway Timeout") {
			t.Fatalf("a dropped call: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the Go SDK client still waits for a dropped call")
	}
	if out, err := sondeBreaks(t, "", "--session", session, "--json"); err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("held after the drop: %v %s", err, out)
	}
}
