package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestConfigListApprovals: config list marks each .mcp.json server with
// Claude Code's approval, from the user's and the project's settings
// files (text and --json); other servers have no mark.
func TestConfigListApprovals(t *testing.T) {
	home, project := testdataDir(t, "approvals/home"), testdataDir(t, "approvals/project")
	clitest.HostHome(t, home, project)

	r := clitest.RunSonde(t, "", "config", "list")
	clitest.CheckRun(t, r, 0, "")
	want := "NAME    HOST         SCOPE    TRANSPORT        COMMAND / URL\n" +
		"docs    Claude Code  project  stdio            docs-server  (enabled in Claude Code)\n" +
		"search  Claude Code  project  stdio            search-server  (disabled in Claude Code)\n" +
		"db      Claude Code  project  stdio            db-server  (disabled in Claude Code)\n" +
		"shell   Claude Code  project  stdio            shell-server  (enabled in Claude Code)\n" +
		"fresh   Claude Code  project  streamable-http  https://fresh.example.com/mcp  (not yet approved in Claude Code)\n" +
		"\nFiles:\n"
	if !strings.HasPrefix(r.Stdout, want) || strings.Contains(r.Stdout, "Problems") {
		t.Errorf("config list:\n%s\nwant it to start with:\n%s", r.Stdout, want)
	}

	r = clitest.RunSonde(t, "", "config", "list", "--json")
	clitest.CheckRun(t, r, 0, "")
	var l struct {
		Servers []struct{ Name, Approval string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.Stdout)
	}
	var got []string
	for _, s := range l.Servers {
		got = append(got, s.Name+":"+s.Approval)
	}
	if strings.Join(got, " ") != "docs:enabled search:disabled db:disabled shell:enabled fresh:pending" {
		t.Errorf("--json approvals: %q", got)
	}

	// A server of another host (here a file of unknown origin) has no
	// approval.
	other := filepath.Join(t.TempDir(), "servers.json")
	clitest.WriteTestFile(t, other, `{"mcpServers": {"c": {"command": "c-server"}}}`)
	r = clitest.RunSonde(t, "", "config", "list", "--json", "--config", other)
	if strings.Contains(r.Stdout, `"approval"`) || !strings.Contains(r.Stdout, `"name":"c"`) {
		t.Errorf("a Cursor server with an approval:\n%s", r.Stdout)
	}
}

// TestConfigListApprovalProblems: settings files that are not valid JSON
// or have keys of the wrong type are problems with the file and the
// reason; the .mcp.json file is still read, its server listed as not yet
// approved.
func TestConfigListApprovalProblems(t *testing.T) {
	project := testdataDir(t, "approvals/broken")
	clitest.HostHome(t, t.TempDir(), project)
	r := clitest.RunSonde(t, "", "config", "list", "--config", filepath.Join(project, ".mcp.json"))
	clitest.CheckRun(t, r, 0, "")
	for _, want := range []string{
		"x     Claude Code  project  stdio      x-server  (not yet approved in Claude Code)\n",
		"  " + filepath.Join(project, ".mcp.json") + "  Claude Code · project  1 server\n",
		"Problems (2):\n",
		"  " + filepath.Join(project, ".claude", "settings.json") + ": not valid JSON: line 3, column 1: invalid character '}' looking for beginning of object key string\n",
		"  " + filepath.Join(project, ".claude", "settings.local.json") + `: wrong shape: "enabledMcpjsonServers" is a string, want an array of strings; "disabledMcpjsonServers" is an array, want an array of strings; "enableAllProjectMcpServers" is a string, want a boolean (the file is not used, as Claude Code ignores it)` + "\n",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("config list lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// TestConfigServerDisabledInClaudeCode: --server starts a .mcp.json
// server that Claude Code's settings disable: sonde is a debugger.
func TestConfigServerDisabledInClaudeCode(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	f := clitest.NewFixture(t)
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fx": map[string]any{
		"command": os.Args[0], "args": []string{"fixture", "--pid-file", f.PIDFile}, "env": env,
	}}})
	clitest.WriteTestFile(t, filepath.Join(project, ".mcp.json"), string(b))
	clitest.WriteTestFile(t, filepath.Join(project, ".claude", "settings.local.json"), `{"disabledMcpjsonServers": ["fx"]}`)

	r := clitest.RunSonde(t, "", "config", "list")
	if !strings.Contains(r.Stdout, "(disabled in Claude Code)") {
		t.Errorf("config list:\n%s", r.Stdout)
	}
	echoVia(t, "fx", "anyway", "anyway")
	f.AssertStarted(1)
}

// TestConfigProjectServerDoesNotShadowUnapproved: a checkout's .mcp.json
// server named like the user's own (in ~/.claude.json) is not started in
// its place while Claude Code has not approved it: --server refuses with a
// usage error naming both files, and neither server starts. Once approved,
// the project's server is the one Claude Code uses, and sonde too.
func TestConfigProjectServerDoesNotShadowUnapproved(t *testing.T) {
	home, project := clitest.TempHostHome(t)
	mine, theirs := clitest.NewFixture(t), clitest.NewFixture(t)
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	entry := func(f *clitest.Fixture, prefix string) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"github": map[string]any{
			"command": os.Args[0], "args": []string{"fixture", "--pid-file", f.PIDFile, "--echo-prefix", prefix}, "env": env,
		}}})
		return string(b)
	}
	clitest.WriteTestFile(t, filepath.Join(home, ".claude.json"), entry(mine, "mine:"))
	clitest.WriteTestFile(t, filepath.Join(project, ".mcp.json"), entry(theirs, "theirs:"))

	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"x"}`, "--server", "github")
	want := `sonde: ambiguous server name "github": the project's server in ` + filepath.Join(project, ".mcp.json") +
		` (not yet approved in Claude Code) would shadow yours in ` + filepath.Join(home, ".claude.json") +
		`; approve it in Claude Code, or choose one with --config FILE` + "\n"
	clitest.CheckRun(t, r, 2, want)
	mine.AssertStarted(0)
	theirs.AssertStarted(0)

	clitest.WriteTestFile(t, filepath.Join(project, ".claude", "settings.local.json"), `{"enabledMcpjsonServers": ["github"]}`)
	echoVia(t, "github", "x", "theirs:x") // the project's server's answer
}
