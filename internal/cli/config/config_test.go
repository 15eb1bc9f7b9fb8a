package config_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// unsetenv unsets name for the rest of the test.
func unsetenv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "")
	os.Unsetenv(name)
}

func testdataDir(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(peertest.Root(), "hostconfig", "testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigList lists the sample files of every host from a home and a
// project folder: the table, the files, the problems (a broken file, unset
// variables), exit 0; --json the same; --config one file.
func TestConfigList(t *testing.T) {
	home, project := testdataDir(t, "home"), testdataDir(t, "project")
	clitest.HostHome(t, home, project)
	t.Setenv("USER", "ada")
	for _, k := range []string{"SENTRY_TOKEN", "SENTRY_URL", "CONTEXT7_API_KEY", "FIGMA_TOKEN"} {
		unsetenv(t, k)
	}
	t.Setenv("FIGMA_TOKEN", "x")

	r := clitest.RunSonde(t, "", "config", "list")
	clitest.CheckRun(t, r, 0, "")
	for _, want := range []string{
		"NAME           HOST            SCOPE    TRANSPORT        COMMAND / URL\n",
		"filesystem     Claude Desktop  user     stdio            npx -y @modelcontextprotocol/server-filesystem /home/ada/Desktop /home/ada/Downloads\n",
		"linear         Claude Code     user     sse              https://mcp.linear.app/sse\n",
		"db             VS Code         project  stdio            ${workspaceFolder}/bin/db-server --region ${input:region} --home ${userHome}\n",
		"puppeteer      Windsurf        user     stdio            npx -y @modelcontextprotocol/server-puppeteer  (disabled in Windsurf)\n",
		"legacy-events  Cline           user     sse              https://events.example.com/sse\n",
		"Files:\n",
		"  " + filepath.Join(project, ".cursor", "mcp.json") + "  ",
		"Problems (3):\n",
		"  " + filepath.Join(project, ".cursor", "mcp.json") + ": not valid JSON: line 5, column 7: invalid character '\"' after object key:value pair\n",
		"  " + filepath.Join(project, ".mcp.json") + `: server "sentry": unresolved reference: headers.Authorization: ${SENTRY_TOKEN}: environment variable SENTRY_TOKEN is not set and has no default (${SENTRY_TOKEN:-default})` + "\n",
		"  " + filepath.Join(home, ".cursor", "mcp.json") + `: server "context7": unresolved reference: headers.CONTEXT7_API_KEY: ${env:CONTEXT7_API_KEY}: environment variable CONTEXT7_API_KEY is not set` + "\n",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("config list lacks %q:\n%s", want, r.Stdout)
		}
	}
	// Secrets are never printed: the env value of github, the header of figma.
	for _, secret := range []string{"ghp_not_a_real_token", "not-a-real-key"} {
		if strings.Contains(r.Stdout, secret) {
			t.Errorf("config list prints the secret %q", secret)
		}
	}

	r = clitest.RunSonde(t, "", "config", "list", "--json")
	clitest.CheckRun(t, r, 0, "")
	var l struct {
		Servers []struct {
			Name, Host, Scope, Transport, Command, URL string
			Env, Headers                               []string
		}
		Files    []struct{ Path, State string }
		Problems []struct{ File, Server, Message string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.Stdout)
	}
	if len(l.Servers) != 17 || len(l.Files) != 23 || len(l.Problems) != 3 { // 9 files, and 14 of the newer hosts (missing)
		t.Errorf("--json: %d servers, %d files, %d problems; want 17, 23, 3", len(l.Servers), len(l.Files), len(l.Problems))
	}
	if s := l.Servers[1]; s.Name != "github" || strings.Join(s.Env, ",") != "GITHUB_PERSONAL_ACCESS_TOKEN" {
		t.Errorf("--json server 1: %+v", s)
	}
	if strings.Contains(r.Stdout, "ghp_not_a_real_token") {
		t.Error("--json prints an env value")
	}

	// One file; a missing one is a problem, not a failure.
	r = clitest.RunSonde(t, "", "config", "list", "--config", filepath.Join(project, ".vscode", "mcp.json"))
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "db      VS Code  project  stdio") || strings.Contains(r.Stdout, "filesystem") {
		t.Errorf("--config .vscode/mcp.json:\n%s", r.Stdout)
	}
	r = clitest.RunSonde(t, "", "config", "list", "--config", "nope.json")
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "No servers found.") || !strings.Contains(r.Stdout, "nope.json: cannot read: no such file or directory") {
		t.Errorf("--config nope.json:\n%s", r.Stdout)
	}
}

// fixtureConfig writes a VS Code .vscode/mcp.json in project whose server
// fx is the fixture (this test binary as sonde fixture), with the
// environment it needs coming from the entry's env and a reference.
func fixtureConfig(t *testing.T, f *clitest.Fixture, project string) string {
	t.Helper()
	t.Setenv("SONDE_TEST_PID_FILE", f.PIDFile)
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	entry := map[string]any{
		"type":    "stdio",
		"command": os.Args[0],
		"args":    []string{"fixture", "--pid-file", "${env:SONDE_TEST_PID_FILE}"},
		"env":     env,
	}
	b, _ := json.MarshalIndent(map[string]any{"servers": map[string]any{"fx": entry}}, "", "\t")
	file := filepath.Join(project, ".vscode", "mcp.json")
	clitest.WriteTestFile(t, file, "// the fixture\n"+string(b))
	return file
}

// TestConfigServer starts the fixture from a config entry: with --config
// FILE --server NAME, and with --server NAME alone (found in the project's
// files); the entry's env reaches the server (without it the test binary
// would not act as the fixture) and ${env:...} in args is resolved.
func TestConfigServer(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	f := clitest.NewFixture(t)
	file := fixtureConfig(t, f, project)

	r := clitest.RunSonde(t, "", "tools", "--config", file, "--server", "fx")
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "echo") || !strings.Contains(r.Stdout, "add") {
		t.Errorf("tools:\n%s", r.Stdout)
	}
	f.AssertStarted(1)

	echoVia(t, "fx", "from-config", "from-config")
	f.AssertStarted(2)
}

// TestConfigServerErrors: each wrong use is a usage error (exit 2) with a
// clear message, and starts nothing.
func TestConfigServerErrors(t *testing.T) {
	home, project := clitest.TempHostHome(t)
	f := clitest.NewFixture(t)
	vscode := fixtureConfig(t, f, project)
	claude := filepath.Join(home, ".claude.json")
	clitest.WriteTestFile(t, claude, `{"mcpServers": {"fx": {"command": "nothing"}, "needs-token": {"command": "x", "args": ["${TOKEN}"]}}}`)
	bad := filepath.Join(project, "bad.json")
	clitest.WriteTestFile(t, bad, `{"mcpServers": {"fx": {"command": 3}}}`)
	unsetenv(t, "TOKEN")
	inputs := filepath.Join(project, "inputs.json")
	clitest.WriteTestFile(t, inputs, `{"inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
		"servers": {"needs-input": {"command": "x", "env": {"KEY": "${input:key}"}}}}`)

	for _, tc := range []struct {
		name    string
		args    []string
		errLine string
	}{
		{"ambiguous", []string{"tools", "--server", "fx"},
			`sonde: ambiguous server name "fx": it is in Claude Code · user in ` + claude + `; VS Code · project in ` + vscode + `; choose one with --config FILE` + "\n"},
		{"not found", []string{"tools", "--server", "nope"},
			`sonde: no such server "nope"; the servers are: fx, needs-token` + "\n"},
		{"not found in a broken file", []string{"tools", "--config", bad, "--server", "fx"},
			`sonde: --config ` + bad + `: no such server "fx": no servers were found; ` + bad + `: server "fx": wrong shape: "command" is a number, want a string` + "\n"},
		{"missing file", []string{"tools", "--config", "missing.json", "--server", "fx"},
			`sonde: --config missing.json: no such server "fx": no servers were found; missing.json: cannot read: no such file or directory` + "\n"},
		{"no --server", []string{"tools", "--config", vscode},
			`sonde: --config ` + vscode + ` needs --server NAME; its servers are: fx` + "\n"},
		{"unset variable", []string{"tools", "--config", claude, "--server", "needs-token"},
			`sonde: ` + claude + `: server "needs-token": unresolved reference: args[0]: ${TOKEN}: environment variable TOKEN is not set and has no default (${TOKEN:-default})` + "\n"},
		{"an input without a terminal", []string{"tools", "--config", inputs, "--server", "needs-input"},
			`sonde: ` + inputs + `: server "needs-input": unresolved reference: env.KEY: ${input:key}: input "key" ("API key") needs a value and has no default, and sonde cannot ask: stdin is not a terminal; give its value with --input key=VALUE` + "\n"},
		{"with a command", []string{"tools", "--config", vscode, "--server", "fx", "--", "x"},
			"sonde: give either --server or a server command after --, not both\n"},
		{"with --url", []string{"tools", "--server", "fx", "--url", "http://127.0.0.1:1/mcp"},
			"sonde: give either --url or --server (with or without --config), not both\n"},
		{"root without a terminal", []string{"--config", vscode},
			`sonde: --config ` + vscode + ` needs --server NAME; its servers are: fx` + "\n"},
		{"demo", []string{"demo", "--server", "fx"},
			"sonde: demo runs its own fixture server: --config, --server and --input do not apply\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.RunSonde(t, "", tc.args...)
			clitest.CheckRun(t, r, 2, tc.errLine)
		})
	}
	f.AssertStarted(0)
}

// TestConfigURLServer: a URL entry becomes --url with the entry's
// transport and headers (resolved from the environment), sent on every
// request to a real HTTP server; --header for the same name wins.
func TestConfigURLServer(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization")+" "+r.Header.Get("X-Team"))
		mu.Unlock()
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"config-http","version":"1"}}`
		case "tools/list":
			// The team header echoed back: a capture must redact it in the
			// frames too.
			result = `{"tools":[{"name":"remote-tool","description":"for ` + r.Header.Get("X-Team") + `","inputSchema":{"type":"object"}}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	}))
	defer srv.Close()
	t.Setenv("SONDE_TEST_TOKEN", "tok-123")
	file := filepath.Join(project, ".mcp.json")
	clitest.WriteTestFile(t, file, `{"mcpServers": {"remote": {"type": "http", "url": "`+srv.URL+`/mcp",
		"headers": {"Authorization": "Bearer ${SONDE_TEST_TOKEN}", "X-Team": "${TEAM:-core}"}}}}`)
	unsetenv(t, "TEAM")

	r := clitest.RunSonde(t, "", "tools", "--server", "remote")
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "remote-tool") {
		t.Errorf("tools over HTTP:\n%s", r.Stdout)
	}
	mu.Lock()
	got := append([]string(nil), auth...)
	auth = nil
	mu.Unlock()
	if len(got) == 0 {
		t.Fatal("the HTTP server got no request")
	}
	for _, a := range got {
		if a != "Bearer tok-123 core" {
			t.Errorf("request headers %q, want the entry's resolved headers", a)
		}
	}
	if strings.Contains(r.Stdout+r.Stderr, "tok-123") {
		t.Errorf("the token is printed:\n%s%s", r.Stdout, r.Stderr)
	}

	// A capture has the entry's header values redacted, as --header's.
	capFile := filepath.Join(t.TempDir(), "remote.capture")
	r = clitest.RunSonde(t, "", "tools", "--server", "remote", "--record", capFile)
	if r.Code != 0 {
		t.Fatalf("--record: exit %d\n%s", r.Code, r.Stderr)
	}
	if b, err := os.ReadFile(capFile); err != nil || strings.Contains(string(b), "tok-123") || strings.Contains(string(b), "core") || !strings.Contains(string(b), "for «redacted»") {
		t.Errorf("the capture does not redact the entry's headers (%v):\n%s", err, b)
	}

	// --trace shows the exchanges, with the entry's header values redacted.
	r = clitest.RunSonde(t, "", "tools", "--server", "remote", "--trace")
	if r.Code != 0 {
		t.Fatalf("--trace: exit %d\n%s", r.Code, r.Stderr)
	}
	if strings.Contains(r.Stderr, "tok-123") || strings.Contains(r.Stderr, "core") || !strings.Contains(r.Stderr, "Authorization: Bearer «redacted»") {
		t.Errorf("--trace does not redact the entry's headers:\n%s", r.Stderr)
	}
	mu.Lock()
	auth = nil
	mu.Unlock()

	r = clitest.RunSonde(t, "", "tools", "--server", "remote", "--header", "X-Team: ops")
	clitest.CheckRun(t, r, 0, "")
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auth {
		if a != "Bearer tok-123 ops" {
			t.Errorf("with --header X-Team: %q", a)
		}
	}
}

// TestConfigListEscapes: a name or command holding control characters
// cannot drive the terminal.
func TestConfigListEscapes(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	clitest.WriteTestFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"evil\u001b[2J": {"command": "x\u0007", "args": ["a\nb"]}}}`)
	r := clitest.RunSonde(t, "", "config", "list")
	clitest.CheckRun(t, r, 0, "")
	if strings.ContainsAny(r.Stdout, "\x1b\x07") || !strings.Contains(r.Stdout, `evil\x1b[2J`) || !strings.Contains(r.Stdout, `x\x07 a\nb`) {
		t.Errorf("not escaped:\n%q", r.Stdout)
	}
}

// TestConfigServerCompletion: the shell completion of --server lists the
// servers found, with their host and scope.
func TestConfigServerCompletion(t *testing.T) {
	project := testdataDir(t, "project")
	clitest.HostHome(t, testdataDir(t, "home"), project)
	r := clitest.RunSonde(t, "", "__complete", "tools", "--server", "")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, want := range []string{"filesystem\tClaude Desktop · user\n", "db\tVS Code · project\n", ":4\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("completion lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = clitest.RunSonde(t, "", "__complete", "--config", filepath.Join(project, ".mcp.json"), "--server", "")
	if r.Stdout != "playwright\tClaude Code · project\nsentry\tClaude Code · project\n:4\n" {
		t.Errorf("completion from --config:\n%q", r.Stdout)
	}
}

// echoVia calls echo with value on the config's server named server
// (--server) and fails unless it succeeds and prints want.
func echoVia(t *testing.T, server, value, want string) {
	t.Helper()
	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"`+value+`"}`, "--server", server)
	clitest.CheckRun(t, r, 0, "")
	if got := strings.TrimSpace(r.Stdout); got != want {
		t.Errorf("call echo %q via --server %s printed %q, want %q", value, server, got, want)
	}
}
