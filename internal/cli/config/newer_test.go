package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/paths"
)

// TestConfigListNewerHosts: sonde config list reads the files of Gemini
// CLI (user and project), Codex, Zed, opencode, Goose and LM Studio where
// those hosts read them, and says for each file found which host reads it.
func TestConfigListNewerHosts(t *testing.T) {
	samples, err := filepath.Abs(filepath.Join("..", "..", "..", "hostconfig", "testdata", "newer"))
	if err != nil {
		t.Fatal(err)
	}
	home, project := clitest.TempHostHome(t)
	files := map[string]struct{ sample, host, scope string }{
		filepath.Join(home, ".gemini", "settings.json"):        {"gemini-settings.json", paths.Gemini, "user"},
		filepath.Join(project, ".gemini", "settings.json"):     {"gemini-settings.json", paths.Gemini, "project"},
		filepath.Join(home, ".codex", "config.toml"):           {"codex-config.toml", paths.Codex, "user"},
		filepath.Join(home, ".config", "zed", "settings.json"): {"zed-settings.json", paths.Zed, "user"},
		filepath.Join(project, "opencode.jsonc"):               {"opencode.jsonc", paths.Opencode, "project"},
		filepath.Join(home, ".config", "goose", "config.yaml"): {"goose-config.yaml", paths.Goose, "user"},
		filepath.Join(home, ".lmstudio", "mcp.json"):           {"lmstudio-mcp.json", paths.LMStudio, "user"},
		filepath.Join(project, ".opencode", "opencode.json"):   {"", "", ""}, // not written: listed missing
	}
	for path, f := range files {
		if f.sample == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(samples, f.sample))
		if err != nil {
			t.Fatal(err)
		}
		clitest.WriteTestFile(t, path, string(b))
	}
	r := clitest.RunSonde(t, "", "config", "list", "--json")
	clitest.CheckRun(t, r, 0, "")
	var l struct {
		Servers []struct{ Name, Host, Scope string }
		Files   []struct {
			Path, Host, Scope, State string
			Servers                  int
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range l.Files {
		got[f.Path] = f.Host + " · " + f.Scope + " · " + f.State
	}
	for path, f := range files {
		want := f.host + " · " + f.scope + " · read"
		if f.sample == "" {
			want = paths.Opencode + " · project · missing"
		}
		if got[path] != want {
			t.Errorf("%s: %q, want %q", path, got[path], want)
		}
	}
	hosts := map[string]int{}
	for _, s := range l.Servers {
		hosts[s.Host]++
	}
	want := map[string]int{paths.Gemini: 6, paths.Codex: 3, paths.Zed: 2, paths.Opencode: 2, paths.Goose: 2, paths.LMStudio: 2}
	for h, n := range want {
		if hosts[h] != n {
			t.Errorf("%s: %d servers, want %d (%v)", h, hosts[h], n, hosts)
		}
	}
	// The text form names the host of each file too.
	r = clitest.RunSonde(t, "", "config", "list")
	clitest.CheckRun(t, r, 0, "")
	for path, f := range files {
		if f.sample != "" && !strings.Contains(r.Stdout, path) {
			t.Errorf("config list does not list %s:\n%s", path, r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, "Codex · user") || !strings.Contains(r.Stdout, "Goose · user") || !strings.Contains(r.Stdout, "Gemini CLI · project") {
		t.Errorf("config list:\n%s", r.Stdout)
	}
}

// TestNewerHostServers: a server of Codex's config.toml starts with
// --server NAME, and one of Goose's config.yaml with --all, like the
// others (sonde tools lists the fixture's tools).
func TestNewerHostServers(t *testing.T) {
	fx := clitest.NewFixture(t)
	home, _ := clitest.TempHostHome(t)
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var env, yenv, args, yargs []string
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, quote(k)+" = "+quote(v))
		yenv = append(yenv, "      "+k+": "+quote(v))
	}
	for _, a := range fx.Argv()[1:] {
		args = append(args, quote(a))
		yargs = append(yargs, "    - "+quote(a))
	}
	codex := "# the fixture\n[mcp_servers.fx]\ncommand = " + quote(fx.Argv()[0]) + "\nargs = [" + strings.Join(args, ", ") + "]\nenv = { " + strings.Join(env, ", ") + " }\n"
	clitest.WriteTestFile(t, filepath.Join(home, ".codex", "config.toml"), codex)
	r := clitest.RunSonde(t, "", "tools", "--server", "fx")
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "echo") {
		t.Errorf("tools --server fx (Codex):\n%s", r.Stdout)
	}

	goose := "extensions:\n  gx:\n    type: stdio\n    cmd: " + quote(fx.Argv()[0]) + "\n    args:\n" + strings.Join(yargs, "\n") + "\n    envs:\n" + strings.Join(yenv, "\n") + "\n    enabled: true\n"
	clitest.WriteTestFile(t, filepath.Join(home, ".config", "goose", "config.yaml"), goose)
	r = clitest.RunSonde(t, "", "tools", "--all", "--json")
	clitest.CheckRun(t, r, 0, "")
	// Both servers answered: each tool is listed under both names.
	if !strings.Contains(r.Stdout, `"echo":["fx","gx"]`) {
		t.Errorf("tools --all (Codex and Goose):\n%.3000s", r.Stdout)
	}
}
