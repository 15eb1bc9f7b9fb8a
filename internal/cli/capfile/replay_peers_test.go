package capfile_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// everythingScript is the session recorded against server-everything for
// the clients nobody here wrote: a list, a call, a resource, a prompt.
const everythingScript = `{"method":"tools/list"}
{"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}
{"method":"resources/read","params":{"uri":"demo://resource/static/document/architecture.md"}}
{"method":"prompts/get","params":{"name":"simple-prompt"}}
`

// recordEverything records everythingScript against server-everything and
// returns the capture and the recorded results by method.
func recordEverything(t *testing.T) (string, map[string]json.RawMessage) {
	t.Helper()
	bin := peertest.Everything(t)
	path := filepath.Join(t.TempDir(), "everything.jsonl")
	r := clitest.RunSonde(t, everythingScript, "script", "-", "--timeout", "20s", "--record", path, "--", bin)
	if r.Code != 0 || !strings.Contains(r.Stderr, "sonde: capture "+path) {
		t.Fatalf("not recorded: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := map[string]json.RawMessage{}
	for line := range strings.Lines(r.Stdout) {
		var l struct {
			Method string
			Result json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil || len(l.Result) == 0 {
			t.Fatalf("script line %q: %v", line, err)
		}
		results[l.Method] = l.Result
	}
	return path, results
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// member returns the member key of a JSON object (nil when absent).
func member(raw json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	return m[key]
}

// runInspector runs the Inspector's CLI with args against `sonde replay
// --serve capture serveArgs...` (the test binary as sonde) and returns its
// stdout, its stderr and whether it succeeded.
func runInspector(t *testing.T, capture string, serveArgs []string, args ...string) (string, string, bool) {
	t.Helper()
	var cli []string
	for _, kv := range clitest.ChildEnv() {
		cli = append(cli, "-e", kv)
	}
	// The server command goes after "--": the Inspector takes the options
	// after it (--strict too) as its own. A URL is the mock over HTTP; it
	// goes first (--tool-arg takes every argument after it).
	if strings.HasPrefix(capture, "http://") {
		cmd := peertest.Inspector(t, append([]string{capture}, args...)...)
		return peertest.Run(t, cmd)
	}
	cli = append(append(cli, args...), "--", os.Args[0], "replay", "--serve", capture)
	return peertest.Run(t, peertest.Inspector(t, append(cli, serveArgs...)...))
}

// TestReplayServeInspector: the official Inspector's CLI (as a user runs
// it, with its logging/setLevel after the handshake) against the mock
// serving a capture of server-everything gets the recorded answers of
// tools/list, tools/call, resources/read and prompts/get, over stdio, over
// Streamable HTTP and over HTTP+SSE (--listen); a prompt the
// capture does not have is refused with the nearest recorded one named;
// --strict refuses the Inspector's logging/setLevel, and the Inspector
// gives up (what the issue saw).
func TestReplayServeInspector(t *testing.T) {
	peertest.Inspector(t) // skip early when it is not installed
	capture, want := recordEverything(t)
	for _, tc := range []struct {
		method string
		args   []string
	}{
		{"tools/list", nil},
		{"tools/call", []string{"--tool-name", "echo", "--tool-arg", "message=hi"}},
		{"resources/read", []string{"--uri", "demo://resource/static/document/architecture.md"}},
		{"prompts/get", []string{"--prompt-name", "simple-prompt"}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			out, errOut, ok := runInspector(t, capture, nil, append([]string{"--method", tc.method}, tc.args...)...)
			if !ok || !sameJSON([]byte(out), want[tc.method]) {
				t.Errorf("ok %v\nstdout: %s\nwant: %s\nstderr: %s", ok, out, want[tc.method], errOut)
			}
			if !strings.Contains(errOut, "sonde replay: logging/setLevel id 1: not recorded, answered {} (the recorded server declared logging) (synthesized)") {
				t.Errorf("stderr: %s", errOut)
			}
		})
	}
	t.Run("http", func(t *testing.T) {
		base := listenMock(t, capture)
		for _, url := range []string{base + "/mcp", base + "/sse"} {
			out, errOut, ok := runInspector(t, url, nil, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi")
			if !ok || !sameJSON([]byte(out), want["tools/call"]) {
				t.Errorf("%s: ok %v\nstdout: %s\nstderr: %s", url, ok, out, errOut)
			}
			out, errOut, ok = runInspector(t, url, nil, "--method", "prompts/get", "--prompt-name", "simple-prompt")
			if !ok || !sameJSON([]byte(out), want["prompts/get"]) {
				t.Errorf("%s: ok %v\nstdout: %s\nstderr: %s", url, ok, out, errOut)
			}
		}
	})
	t.Run("unmatched", func(t *testing.T) {
		out, errOut, ok := runInspector(t, capture, nil, "--method", "prompts/get", "--prompt-name", "simple-prompts")
		if ok || !strings.Contains(out+errOut, `the capture has no recorded request matching prompts/get \"simple-prompts\"; nearest: prompts/get \"simple-prompt\" (recorded id 5)`) &&
			!strings.Contains(out+errOut, `the capture has no recorded request matching prompts/get "simple-prompts"; nearest: prompts/get "simple-prompt" (recorded id 5)`) {
			t.Errorf("ok %v\nstdout: %s\nstderr: %s", ok, out, errOut)
		}
	})
	t.Run("strict", func(t *testing.T) {
		out, errOut, ok := runInspector(t, capture, []string{"--strict"}, "--method", "tools/list")
		if ok || !strings.Contains(errOut, "logging/setLevel id 1: no match: answered -32010") ||
			!strings.Contains(out+errOut, `{"error":{"code":"error","message":"sonde replay: the capture has no recorded request matching logging/setLevel;`) {
			t.Errorf("ok %v\nstdout: %s\nstderr: %s", ok, out, errOut)
		}
	})
}

// TestReplayServeGoSDK: the official Go SDK's client (interop/gosdk-client)
// against the mock serving a capture of server-everything, over stdio and
// over Streamable HTTP (--listen), gets the recorded tool list, call,
// resource and prompt.
func TestReplayServeGoSDK(t *testing.T) {
	client := peertest.GoSDKClient(t)
	capture, want := recordEverything(t)
	flags := []string{"-tool", "echo", "-args", `{"message":"hi"}`, "-read", "demo://resource/static/document/architecture.md", "-prompt", "simple-prompt", "-terminate", "2s"}
	check := func(t *testing.T, args ...string) {
		t.Helper()
		cmd := exec.Command(client, append(append([]string(nil), flags...), args...)...)
		cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
		}
		var got struct {
			Tools            []string
			Result           json.RawMessage
			Resource, Prompt json.RawMessage
		}
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("%v: %s", err, stdout.String())
		}
		var list struct{ Tools []struct{ Name string } }
		json.Unmarshal(want["tools/list"], &list)
		// The SDK decodes and re-encodes the results (adding its zero
		// values): their substance is compared.
		if len(got.Tools) != len(list.Tools) || len(got.Tools) < 5 || !sameJSON(member(got.Result, "content"), member(want["tools/call"], "content")) ||
			!sameJSON(member(got.Resource, "contents"), member(want["resources/read"], "contents")) ||
			!sameJSON(member(got.Prompt, "messages"), member(want["prompts/get"], "messages")) {
			t.Errorf("got %s\nwant tools %s\ncall %s\nresource %s\nprompt %s\nstderr: %s", stdout.String(), want["tools/list"], want["tools/call"], want["resources/read"], want["prompts/get"], stderr.String())
		}
	}
	t.Run("stdio", func(t *testing.T) {
		check(t, "--", os.Args[0], "replay", "--serve", capture)
	})
	t.Run("http", func(t *testing.T) {
		check(t, "-url", listenMock(t, capture)+"/mcp")
	})
}

// listenMock runs `sonde replay --serve capture --listen` (the test binary
// as sonde) on a free loopback port and returns its base URL once it
// listens; it is stopped when the test ends.
func listenMock(t *testing.T, capture string, serveArgs ...string) string {
	t.Helper()
	addr := peertest.FreeAddr(t)
	cmd := exec.Command(os.Args[0], append([]string{"replay", "--serve", capture, "--listen", addr}, serveArgs...)...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	var stderr clitest.SyncBuffer
	cmd.Stderr = &stderr
	t.Cleanup(func() {
		if strings.Contains(stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("the mock raced")
		}
		if t.Failed() {
			t.Logf("the mock's stderr:\n%s", stderr.String())
		}
	})
	return peertest.Serve(t, cmd, addr, "the mock", &stderr)
}
