package tap_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestReplayServeBreaksInspector: the official Inspector's CLI as the
// host of `sonde replay --serve --break` (a capture of server-everything
// it made through the tap): the mock's held echo answer shows in
// `sonde breaks --json` (the session replay-NAME in the sessions folder),
// and edited through `sonde breaks edit` it reaches the Inspector edited;
// the mock's recording has the steps.
func TestReplayServeBreaksInspector(t *testing.T) {
	everything := peertest.Everything(t)
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	env := []string{"-e", "SONDE_HOME=" + home}
	for _, kv := range clitest.ChildEnv() {
		env = append(env, "-e", kv)
	}
	call := []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=recorded"}
	rec := filepath.Join(t.TempDir(), "inspector.jsonl")
	args := append(append(append([]string{}, env...), call...), "--", os.Args[0], "tap", "--record", rec, "--", everything)
	if out, stderr, ok := peertest.Run(t, peertest.Inspector(t, args...)); !ok || !strings.Contains(out, "recorded") {
		t.Fatalf("recording through the tap: %v %s\n%s", ok, out, stderr)
	}

	type result struct {
		out, stderr string
		ok          bool
	}
	done := make(chan result, 1)
	args = append(append(append([]string{}, env...), call...), "--", os.Args[0], "replay", "--serve", rec, "--break", "dir:in kind:response tool:echo", "--break-timeout", "0")
	go func() {
		out, stderr, ok := peertest.Run(t, peertest.Inspector(t, args...))
		done <- result{out, stderr, ok}
	}()
	h := waitBreaks(t, "replay-inspector", 1)[0]
	var msg map[string]any
	json.Unmarshal(h.Frame, &msg)
	if !strings.Contains(string(h.Frame), "recorded") {
		t.Fatalf("held %s", h.Frame)
	}
	msg["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "edited in the mock"}}}
	edit, _ := json.Marshal(msg)
	if _, err := sondeBreaks(t, string(edit), "--session", "replay-inspector", "edit", h.Handle, "--json", "-"); err != nil {
		t.Fatalf("sonde breaks edit: %v", err)
	}
	r := <-done
	if !r.ok || !strings.Contains(r.out, "edited in the mock") || strings.Contains(r.out, "recorded") {
		t.Fatalf("the Inspector got (ok %v) %s\n%s", r.ok, r.out, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "replay-inspector-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("the mock's recordings: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	for _, want := range []string{"breakpoint 1: dir:in kind:response tool:echo", `"edited"`, "edited in the mock"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the mock's recording lacks %s:\n%s", want, b)
		}
	}
}
