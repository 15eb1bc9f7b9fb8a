package connect_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// envSecretConfig writes a Cursor user config (in a new home) whose server
// "tok" is the fixture with an argument that takes a secret from the
// environment (${env:SONDE_TEST_TOKEN}, set here): its pid file's name, so
// the test can tell the server got the real value without the value
// reaching sonde's output. It returns the fixture, with PIDFile the file
// the server writes.
func envSecretConfig(t *testing.T, token string) *clitest.Fixture {
	t.Helper()
	home, _ := clitest.TempHostHome(t)
	t.Setenv("SONDE_TEST_TOKEN", token)
	f := clitest.NewFixture(t)
	dir := filepath.Dir(f.PIDFile)
	f.PIDFile = filepath.Join(dir, "pids-"+token)
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"tok": map[string]any{
			"command": os.Args[0],
			"args":    []string{"fixture", "--pid-file", filepath.Join(dir, "pids-${env:SONDE_TEST_TOKEN}")},
			"env":     env,
		},
	}})
	clitest.WriteTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), string(b))
	return f
}

// TestConfigEnvSecrets: a value an ${env:…} reference brings into a
// server's command line is redacted wherever sonde records or prints the
// command line (the capture's header and start record, --trace), and the
// server still gets the real value.
func TestConfigEnvSecrets(t *testing.T) {
	const token = "tok-3f9a1c7e5b"
	f := envSecretConfig(t, token)
	capFile := filepath.Join(t.TempDir(), "s.capture")
	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"v"}`, "--server", "tok", "--record", capFile, "--trace")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	f.AssertStarted(1) // the pid file named with the real value
	if strings.TrimSpace(r.Stdout) != "v" {
		t.Errorf("stdout %q", r.Stdout)
	}
	if strings.Contains(r.Stdout+r.Stderr, token) {
		t.Errorf("the output shows the secret:\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "pids-«redacted»") {
		t.Errorf("the trace's start line does not show the argument redacted:\n%s", r.Stderr)
	}
	b, err := os.ReadFile(capFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), token) || !strings.Contains(string(b), "pids-«redacted»") {
		t.Errorf("the capture holds the secret (or no redacted argument):\n%s", b)
	}
}

// TestConfigEnvSecretsSpawnFailure: a secret in the command itself stays
// out of the error that says the command cannot start, and out of every
// file sonde writes in the home (the failure report, the servers' state).
func TestConfigEnvSecretsSpawnFailure(t *testing.T) {
	const token = "tok-8e2d4a6b0c"
	home, _ := clitest.TempHostHome(t)
	t.Setenv("SONDE_TEST_TOKEN", token)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"gone": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-${env:SONDE_TEST_TOKEN}"), "args": []string{"--key=${env:SONDE_TEST_TOKEN}"}},
		"web":  map[string]any{"url": "http://" + closedAddr(t) + "/mcp?key=${env:SONDE_TEST_TOKEN}"},
	}})
	clitest.WriteTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), string(b))
	for _, args := range [][]string{
		{"call", "echo", "--server", "gone", "--trace"},
		{"tools", "--server", "gone", "--trace"},
		{"doctor", "--server", "gone"},
		{"call", "echo", "--server", "web", "--trace"},
		{"tools", "--server", "web"},
		{"doctor", "--server", "web"},
		{"call", "echo", "--server", "web", "--json"}, // {"ok":false,"error":{"message":…}} on stdout
		{"tools", "--server", "gone", "--json"},
		{"tools", "--server", "web", "--json"},
	} {
		r := clitest.RunSonde(t, "", args...)
		if r.Code == 0 {
			t.Errorf("%q: exit 0", args)
		}
		shown := "no-such-«redacted»"
		if slices.Contains(args, "web") {
			shown = "" // the URL is not in every message
		}
		if strings.Contains(r.Stdout+r.Stderr, token) || !strings.Contains(r.Stdout+r.Stderr, shown) {
			t.Errorf("%q: the output shows the secret (or not the command redacted):\nstdout:\n%s\nstderr:\n%s", args, r.Stdout, r.Stderr)
		}
	}
	for _, args := range [][]string{{"config", "list"}, {"config", "list", "--json"}} {
		r := clitest.RunSonde(t, "", args...)
		if r.Code != 0 || strings.Contains(r.Stdout+r.Stderr, token) || !strings.Contains(r.Stdout, "gone") {
			t.Errorf("%q: exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	err := filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), token) {
			t.Errorf("%s holds the secret:\n%s", path, b)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
