package interactive_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestTUIPicker runs sonde with no arguments in a terminal (tmux), with a
// home folder holding a Cursor file and a broken Claude Desktop file, and
// a project folder holding a VS Code file whose fixture entry needs two
// inputs: the picker lists both servers and the problem, the filter
// narrows the list, enter asks for the inputs (an empty answer takes the
// default; a password is not echoed), and the UI starts on the fixture.
// pickerSetup writes the host files of the picker tests into a new home
// and project folder (the working directory from now on) and returns the
// fixture the VS Code entry starts.
func pickerSetup(t *testing.T) *clitest.Fixture {
	t.Helper()
	home, project := clitest.TempHostHome(t)
	f := clitest.NewFixture(t)
	env := map[string]string{"SONDE_TEST_SECRET": "${input:secret}", "SONDE_TEST_REGION": "${input:region}"}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	b, _ := json.Marshal(map[string]any{
		"inputs": []map[string]any{
			{"type": "promptString", "id": "secret", "description": "Secret of the fixture", "password": true},
			{"type": "promptString", "id": "pids", "description": "Pid file", "default": f.PIDFile},
			{"type": "pickString", "id": "region", "description": "Region",
				"options": []any{"eu-west-1", map[string]string{"label": "US East", "value": "us-east-1"}}},
		},
		"servers": map[string]any{"fx": map[string]any{
			"type": "stdio", "command": os.Args[0], "args": []string{"fixture", "--pid-file", "${input:pids}"}, "env": env,
		}},
	})
	clitest.WriteTestFile(t, filepath.Join(project, ".vscode", "mcp.json"), string(b))
	clitest.WriteTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"other": {"command": "other-server", "args": ["--port", "9"]}}}`)
	clitest.WriteTestFile(t, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), `{"mcpServers": {`)

	return f
}

func TestTUIPicker(t *testing.T) {
	f := pickerSetup(t)
	// 110 columns: the fixture's command line (the test binary's path, in
	// a build folder) must fit its column whole.
	tt := startTUI(t, 110, 24, nil)
	tt.waitFor("the picker",
		`sonde · pick a server · 2 found in 3 files`,
		`^› other\s+Cursor · user\s+other-server --port 9`,
		`^  fx\s+VS Code · project\s+\S+ fixture --pid-file \$\{input:pids\}`,
		`^  from ~/\.cursor/mcp\.json\s*$`,
		`^Problems \(1\)`,
		`^! ~/\.config/Claude/claude_desktop_config\.json: not valid JSON: `,
		`enter start`)
	tt.keys("/")
	tt.text("fx")
	tt.waitFor("the filtered list", `^/ fx▏\s+1/2`, `^› fx\s+VS Code · project`, `!other-server`)
	tt.keys("Enter")
	// The args are resolved first: the pid file, whose default (taken by an
	// empty answer) is where the fixture must record its pid.
	tt.waitFor("the first input prompt", `^sonde: Pid file \[`)
	tt.keys("Enter")
	// The env, by name: the pickString, then the password.
	tt.waitFor("the choice", `^sonde: Region \(input region\):$`, `^  1\. eu-west-1$`, `^  2\. US East \(us-east-1\)$`, `^sonde: choose 1-2:\s*$`)
	tt.text("3")
	tt.keys("Enter")
	tt.waitFor("the choice asked again", `^sonde: "3" is not one of the choices: answer with a number from 1 to 2, or an option$`, `^sonde: choose 1-2:\s*$`)
	tt.text("2")
	tt.keys("Enter")
	tt.waitFor("the password prompt", `^sonde: Secret of the fixture \(input secret\):`)
	const secret = "hunter2-not-shown"
	tt.text(secret)
	tt.keys("Enter")
	s := tt.waitFor("the UI on the fixture", append([]string{`─ 1 Pending `, `── pid \d+ started: `}, handshake...)...)
	if strings.Contains(s, secret) {
		t.Errorf("the input's value is on the screen:\n%s", s)
	}
	tt.quit()
	checkPIDs(t, f, s, 1)
}

// TestTUIPickerQuit: esc in the picker quits with status 0 and starts
// nothing.
func TestTUIPickerQuit(t *testing.T) {
	home, _ := clitest.TempHostHome(t)
	clitest.WriteTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"other": {"command": "other-server"}}}`)
	tt := startTUI(t, 80, 20, nil)
	tt.waitFor("the picker", `pick a server · 1 found in 1 file`, `^› other\s+Cursor · user`)
	tt.keys("Escape")
	if code := tt.waitExit(); code != 0 {
		t.Errorf("exit status %d, want 0%s", code, tt.diag())
	}
}

// TestTUIPickerInterrupt: ctrl+c at an input's prompt ends sonde (with
// status 130: an interrupted run), and no server is started.
func TestTUIPickerInterrupt(t *testing.T) {
	f := pickerSetup(t)
	// 110 columns: the fixture's command line (the test binary's path, in
	// a build folder) must fit its column whole.
	tt := startTUI(t, 110, 24, nil)
	tt.waitFor("the picker", `^  fx\s+VS Code · project`)
	tt.keys("Down")
	tt.waitFor("fx selected", `^› fx\s+VS Code · project`)
	tt.keys("Enter")
	tt.waitFor("the first input prompt", `^sonde: Pid file \[`)
	tt.keys("C-c")
	// ctrl+c interrupts the pane's whole process group, /bin/sh included,
	// which dies without writing sonde's status: wait for the pane to close
	// and read sonde's last word on stderr.
	deadline := time.Now().Add(tuiWait)
	for {
		if _, err := tt.exec("has-session", "-t", tuiTarget); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sonde did not end after ctrl+c%s", tt.diag())
		}
		time.Sleep(40 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(tt.dir, "stderr"))
	if !strings.HasSuffix(string(b), `: input "pids" ("Pid file"): interrupted`+"\n") {
		t.Errorf("stderr after ctrl+c at the prompt: %q", b)
	}
	f.AssertStarted(0)
}

// TestTUIPickerApprovals: the picker marks each .mcp.json server with
// Claude Code's approval, and a malformed settings file is one more
// problem below the list: it does not stop the picker.
func TestTUIPickerApprovals(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	clitest.WriteTestFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"approved-one": {"command": "a-server"}, "new-one": {"command": "n-server"}}}`)
	clitest.WriteTestFile(t, filepath.Join(project, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["approved-one"]}`)
	clitest.WriteTestFile(t, filepath.Join(project, ".claude", "settings.local.json"), `{"disabledMcpjsonServers": [`)
	tt := startTUI(t, 100, 20, nil)
	tt.waitFor("the picker",
		`pick a server · 2 found in 1 file`,
		`^› approved-one\s+Claude Code · project\s+\(enabled\) a-server`,
		`^  new-one\s+Claude Code · project\s+\(not approved\) n-server`,
		`^  from \S+\.mcp\.json · enabled in Claude Code`,
		`^Problems \(1\)`,
		`^! \S+settings\.local\.json: not valid JSON: `)
	tt.keys("Escape")
	if code := tt.waitExit(); code != 0 {
		t.Errorf("exit status %d, want 0%s", code, tt.diag())
	}
}

// TestTUIPickerServerFails: a picked server that cannot be started (its
// "command" input is one sonde cannot ask for) brings the picker back
// with the reason first among its problems and the cursor on its row, and
// the others can be picked.
func TestTUIPickerServerFails(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	clitest.WriteTestFile(t, filepath.Join(project, ".vscode", "mcp.json"), `{
		"inputs": [{"type": "command", "id": "branch", "command": "git.checkout"}],
		"servers": {"alpha": {"command": "a-server"}, "branchy": {"command": "b-server", "args": ["${input:branch}"]}}
	}`)
	tt := startTUI(t, 110, 20, nil)
	tt.waitFor("the picker", `pick a server · 2 found in 1 file`, `^› alpha\s`, `^  branchy\s`)
	tt.keys("Down")
	tt.waitFor("branchy selected", `^› branchy\s`)
	tt.keys("Enter")
	// The cursor stays on the row that failed.
	tt.waitFor("the picker again", `pick a server · 2 found`, `^! cannot start branchy: .*branch`, `^› branchy\s`, `^  alpha\s`)
	tt.keys("Escape")
	if code := tt.waitExit(); code != 0 {
		t.Errorf("exit status %d, want 0%s", code, tt.diag())
	}
}
