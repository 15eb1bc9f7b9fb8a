package connect_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// inputsConfig writes a VS Code file whose servers are the fixture, with
// inputs of every kind in their command lines: a text input without a
// default (the pid file), a pickString with a default (the echo prefix),
// a password with a default and a "command" input sonde cannot ask for.
func inputsConfig(t *testing.T, project string) string {
	t.Helper()
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	fx := func(prefix string) map[string]any {
		return map[string]any{
			"command": os.Args[0],
			"args":    []string{"fixture", "--pid-file", "${input:pids}", "--echo-prefix", prefix},
			"env":     env,
		}
	}
	b, _ := json.MarshalIndent(map[string]any{
		"inputs": []map[string]any{
			{"type": "promptString", "id": "pids", "description": "Pid file"},
			{"type": "pickString", "id": "prefix", "description": "Echo prefix",
				"options": []any{map[string]string{"label": "Loud", "value": "LOUD-"}, "quiet-"}, "default": "quiet-"},
			{"type": "promptString", "id": "secret", "description": "Secret", "password": true, "default": "default-secret-value"},
			{"type": "command", "id": "branch", "command": "git.checkout"},
		},
		"servers": map[string]any{
			"fx":      fx("${input:prefix}"),
			"leaky":   fx("${input:secret}"),
			"branchy": fx("${input:branch}"),
		},
	}, "", "\t")
	file := filepath.Join(project, ".vscode", "mcp.json")
	clitest.WriteTestFile(t, file, string(b))
	return file
}

// TestConfigInputFlag: --input gives inputs without a terminal; a
// pickString takes its default when sonde cannot ask, and a given value
// must be one of its options; a "command" input needs --input.
func TestConfigInputFlag(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	f := clitest.NewFixture(t)
	file := inputsConfig(t, project)
	echo := []string{"call", "echo", "--args", `{"value":"v"}`, "--config", file, "--input", "pids=" + f.PIDFile}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"the pickString's default", []string{"--server", "fx"}, "quiet-v"},
		{"a pickString option", []string{"--server", "fx", "--input", "prefix=LOUD-"}, "LOUD-v"},
		{"the later value wins", []string{"--server", "fx", "--input", "prefix=quiet-", "--input", "prefix=LOUD-"}, "LOUD-v"},
		{"a command input given", []string{"--server", "branchy", "--input", "branch=BR-"}, "BR-v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.RunSonde(t, "", append(echo, tc.args...)...)
			clitest.CheckRun(t, r, 0, "")
			if strings.TrimSpace(r.Stdout) != tc.want {
				t.Errorf("stdout %q, want %q", r.Stdout, tc.want)
			}
		})
	}
	f.AssertStarted(4)
}

// TestConfigInputErrors: each is a usage error (exit 2) naming the file,
// the server, the input (with its description) and the flag, and starts
// nothing; a password input's value is never in the message.
func TestConfigInputErrors(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	f := clitest.NewFixture(t)
	file := inputsConfig(t, project)
	const secret = "hunter2-given-secret"
	for _, tc := range []struct {
		name    string
		args    []string
		errLine string
	}{
		{"no value and no terminal", []string{"--config", file, "--server", "fx", "--input", "secret=" + secret},
			`sonde: ` + file + `: server "fx": unresolved reference: args[2]: ${input:pids}: input "pids" ("Pid file") needs a value and has no default, and sonde cannot ask: stdin is not a terminal; give its value with --input pids=VALUE` + "\n"},
		{"not an option", []string{"--config", file, "--server", "fx", "--input", "pids=p", "--input", "prefix=loud"},
			`sonde: ` + file + `: server "fx": input "prefix" ("Echo prefix"): --input prefix: "loud" is not one of its options ("LOUD-", "quiet-")` + "\n"},
		{"an unknown id", []string{"--config", file, "--server", "fx", "--input", "pid=p"},
			`sonde: ` + file + `: server "fx": --input pid: the file has no input "pid" (its inputs: pids, prefix, secret, branch)` + "\n"},
		{"a command input", []string{"--server", "branchy", "--input", "pids=p"},
			`sonde: ` + file + `: server "branchy": unresolved reference: args[4]: ${input:branch}: input "branch" has type "command", which runs a VS Code command: sonde cannot ask for it; give its value with --input branch=VALUE` + "\n"},
		{"not ID=VALUE", []string{"--server", "fx", "--input", secret},
			`sonde: --input: want ID=VALUE, e.g. --input region=eu-west-1 (the id of an entry of the file's "inputs")` + "\n"},
		{"an empty id", []string{"--server", "fx", "--input", "=" + secret},
			`sonde: --input: want ID=VALUE, e.g. --input region=eu-west-1 (the id of an entry of the file's "inputs")` + "\n"},
		{"with a command", []string{"--input", "pids=p", "--", "server"},
			"sonde: --input gives values to the inputs of a config file's server: use it with --server NAME (or the picker), not with a command or --url\n"},
		{"with --url", []string{"--input", "pids=p", "--url", "http://127.0.0.1:1/mcp"},
			"sonde: --input gives values to the inputs of a config file's server: use it with --server NAME (or the picker), not with a command or --url\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.RunSonde(t, "", append([]string{"tools"}, tc.args...)...)
			clitest.CheckRun(t, r, 2, tc.errLine)
			if strings.Contains(r.Stdout+r.Stderr, secret) {
				t.Errorf("the password is printed:\n%s%s", r.Stdout, r.Stderr)
			}
		})
	}
	t.Run("the UI with a command", func(t *testing.T) {
		r := clitest.RunSonde(t, "", "--input", "pids=p", "--", "server")
		clitest.CheckRun(t, r, 2, "sonde: --input gives values to the inputs of a config file's server: use it with --server NAME (or the picker), not with a command or --url\n")
	})
	f.AssertStarted(0)
}

// TestConfigInputSecrets: a password input's value, given or defaulted,
// is redacted from a capture (the command line in its header, and the
// frames that carry it) and never shown by config list.
func TestConfigInputSecrets(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	f := clitest.NewFixture(t)
	file := inputsConfig(t, project)
	for _, tc := range []struct {
		name, secret string
		args         []string
	}{
		{"given", "hunter2-given-secret", []string{"--input", "secret=hunter2-given-secret"}},
		{"default", "default-secret-value", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			capFile := filepath.Join(t.TempDir(), "s.capture")
			args := append([]string{"call", "echo", "--args", `{"value":"v"}`, "--server", "leaky", "--input", "pids=" + f.PIDFile, "--record", capFile, "--trace"}, tc.args...)
			r := clitest.RunSonde(t, "", args...)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			// The command line the trace shows hides it too (the frames
			// carry it, as the server echoes it back).
			started := 0
			for _, line := range strings.Split(r.Stderr, "\n") {
				if strings.Contains(line, "started") {
					started++
					if strings.Contains(line, tc.secret) || !strings.Contains(line, "--echo-prefix «redacted»") {
						t.Errorf("the trace shows the command line with the password input's value: %s", line)
					}
				}
			}
			if started != 1 {
				t.Errorf("%d start lines in the trace:\n%s", started, r.Stderr)
			}
			if strings.TrimSpace(r.Stdout) != tc.secret+"v" {
				t.Fatalf("the server did not get the secret: %q", r.Stdout)
			}
			b, err := os.ReadFile(capFile)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), tc.secret) || !strings.Contains(string(b), "«redacted»") {
				t.Errorf("the capture holds the password input's value:\n%s", b)
			}
		})
	}
	f.AssertStarted(2)
	for _, args := range [][]string{{"config", "list"}, {"config", "list", "--json"}, {"config", "list", "--config", file}} {
		r := clitest.RunSonde(t, "", args...)
		clitest.CheckRun(t, r, 0, "")
		if strings.Contains(r.Stdout, "default-secret-value") || !strings.Contains(r.Stdout, "leaky") {
			t.Errorf("%q:\n%s", args, r.Stdout)
		}
	}
}
