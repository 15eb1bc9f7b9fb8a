package hostconfig

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// answers is a Prompter that answers from a map and records what it was
// asked.
type answers struct {
	values map[string]string
	asked  []Input
}

func (a *answers) Prompt(in Input) (string, error) {
	a.asked = append(a.asked, in)
	v, ok := a.values[in.ID]
	if !ok {
		return "", errors.New("no answer")
	}
	return v, nil
}

// lookup is an environment.
func lookup(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// server reads one named server from a testdata file.
func server(t *testing.T, file, host string, scope paths.Scope, name string) Server {
	t.Helper()
	servers, problems := ReadFile(abs(t, file), host, scope, "/home/ada/blog")
	if len(problems) > 0 {
		t.Fatalf("%s: %q", file, problemLines(t, problems))
	}
	s, err := Find(servers, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestResolveVSCode: ${workspaceFolder}, ${userHome}, ${env:NAME} and
// ${input:ID} (asked once each, the password one flagged, an empty answer
// taking the default), and the envFile merged under the entry's own env.
func TestResolveVSCode(t *testing.T) {
	s := server(t, "project/.vscode/mcp.json", paths.VSCode, paths.Project, "db")
	ws := abs(t, "project")
	p := &answers{values: map[string]string{"db-password": "s3cret", "region": ""}}
	r, err := s.Resolve(Env{Lookup: lookup(map[string]string{"USER": "ada"}), Home: "/home/ada", Workspace: ws, Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(ws, "bin", "db-server"); r.Command != want {
		t.Errorf("command %q, want %q", r.Command, want)
	}
	if want := []string{"--region", "eu-west-1", "--home", "/home/ada"}; !reflect.DeepEqual(r.Args, want) {
		t.Errorf("args %q, want %q", r.Args, want)
	}
	wantEnv := map[string]string{
		"DB_PASSWORD": "s3cret", "DB_USER": "ada", "LOG_LEVEL": "debug",
		"DB_HOST": "localhost", "DB_PORT": "5432", "DB_NAME": "shop dev",
	}
	if !reflect.DeepEqual(r.Env, wantEnv) {
		t.Errorf("env %q, want %q", r.Env, wantEnv)
	}
	var asked []string
	for _, in := range p.asked {
		asked = append(asked, in.ID+":"+in.Description+":"+map[bool]string{true: "password", false: "text"}[in.Password])
	}
	if want := []string{"region:Cloud region:text", "db-password:Database password:password"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	// The entry itself is unchanged.
	if s.Env["DB_PASSWORD"] != "${input:db-password}" || s.Args[1] != "${input:region}" {
		t.Errorf("Resolve changed the original: %+v", s)
	}
}

// TestResolveClaudeCode: ${NAME} and ${NAME:-default} in the URL and
// headers; ${env:NAME} and ${workspaceFolder} mean nothing to Claude Code.
func TestResolveClaudeCode(t *testing.T) {
	s := server(t, "project/.mcp.json", paths.ClaudeCode, paths.Project, "sentry")
	r, err := s.Resolve(Env{Lookup: lookup(map[string]string{"SENTRY_TOKEN": "tok"})})
	if err != nil {
		t.Fatal(err)
	}
	if r.URL != "https://mcp.sentry.dev/mcp" || r.Headers["Authorization"] != "Bearer tok" || r.Transport != Streamable {
		t.Errorf("resolved %+v %q", r, r.Headers)
	}
	r, err = s.Resolve(Env{Lookup: lookup(map[string]string{"SENTRY_TOKEN": "tok", "SENTRY_URL": "http://127.0.0.1:9/mcp"})})
	if err != nil || r.URL != "http://127.0.0.1:9/mcp" {
		t.Errorf("with SENTRY_URL: %q, %v", r.URL, err)
	}
	_, err = s.Resolve(Env{Lookup: lookup(nil)})
	want := abs(t, "project/.mcp.json") + `: server "sentry": unresolved reference: headers.Authorization: ${SENTRY_TOKEN}: environment variable SENTRY_TOKEN is not set and has no default (${SENTRY_TOKEN:-default})`
	if !errors.Is(err, ErrReference) || err.Error() != want {
		t.Errorf("unset:\n got %v\nwant %s", err, want)
	}

	literal := Server{Name: "x", Transport: Stdio, Command: "run", Args: []string{"${env:HOME}", "${1abc}", "${HOME", "$HOME"},
		dialect: formatOf(paths.ClaudeCode, paths.Project).dialect}
	r, err = literal.Resolve(Env{Lookup: lookup(map[string]string{"HOME": "/h"}), Workspace: "/w"})
	if err != nil || !reflect.DeepEqual(r.Args, literal.Args) {
		t.Errorf("references Claude Code does not know are kept: %q, %v", r.Args, err)
	}
	// To Claude Code, ${workspaceFolder} is an environment variable.
	literal.Args = []string{"${workspaceFolder}"}
	if _, err := literal.Resolve(Env{Lookup: lookup(nil), Workspace: "/w"}); !errors.Is(err, ErrReference) {
		t.Errorf("${workspaceFolder} in Claude Code: %v, want an unset variable", err)
	}
}

// TestResolveLiteralHosts: Claude Desktop and Cline expand nothing.
func TestResolveLiteralHosts(t *testing.T) {
	for _, host := range []string{paths.ClaudeDesktop, paths.Cline} {
		s := Server{Name: "x", Transport: Stdio, Command: "${HOME}/bin/x", Args: []string{"${env:HOME}"}, dialect: formatOf(host, paths.User).dialect}
		r, err := s.Resolve(Env{Lookup: lookup(map[string]string{"HOME": "/h"})})
		if err != nil || r.Command != s.Command || r.Args[0] != "${env:HOME}" {
			t.Errorf("%s: %+v, %v", host, r, err)
		}
	}
}

// TestResolveProblems: an unknown input id, an unset ${env:NAME} and a
// missing envFile are per-server errors naming the file, the server, the
// field and the reference; the file's good server resolves.
func TestResolveProblems(t *testing.T) {
	file := abs(t, "broken/references.json")
	servers, problems := ReadFile(file, paths.VSCode, paths.Project, "")
	if len(problems) > 0 {
		t.Fatal(problemLines(t, problems))
	}
	ws := abs(t, "project")
	env := Env{Lookup: lookup(nil), Workspace: ws, Prompter: &answers{values: map[string]string{"token": "T"}}}
	want := map[string]string{
		"unknown-input":    `unresolved reference: headers.Authorization: ${input:tokn}: no input with id "tokn" in the file's "inputs"`,
		"unset-env":        `unresolved reference: args[0]: ${env:SONDE_TEST_UNSET_VARIABLE}: environment variable SONDE_TEST_UNSET_VARIABLE is not set`,
		"missing-env-file": `unresolved reference: envFile: open ` + filepath.Join(ws, "no-such.env") + `: no such file or directory`,
	}
	for _, s := range servers {
		r, err := s.Resolve(env)
		if s.Name == "fine" {
			if err != nil || r.Headers["Authorization"] != "Bearer T" {
				t.Errorf("fine: %q, %v", r.Headers, err)
			}
			continue
		}
		var p *Problem
		if !errors.As(err, &p) || !errors.Is(err, ErrReference) || p.File != file || p.Server != s.Name {
			t.Errorf("%s: %v is not a Problem of the server wrapping ErrReference", s.Name, err)
			continue
		}
		if got := strings.TrimPrefix(err.Error(), file+`: server "`+s.Name+`": `); got != want[s.Name] {
			t.Errorf("%s:\n got %s\nwant %s", s.Name, got, want[s.Name])
		}
	}
	// Without a Prompter, inputs are checked but not asked for.
	fine, _ := Find(servers, "fine")
	if _, err := fine.Resolve(Env{}); err != nil {
		t.Errorf("check of fine: %v", err)
	}
	bad, _ := Find(servers, "unknown-input")
	if _, err := bad.Resolve(Env{}); !errors.Is(err, ErrReference) {
		t.Errorf("check of unknown-input: %v", err)
	}
	// A Prompter's failure is the server's error.
	_, err := fine.Resolve(Env{Prompter: &answers{}})
	if err == nil || !strings.HasSuffix(err.Error(), `${input:token}: input "token" ("API token"): no answer`) {
		t.Errorf("prompter failure: %v", err)
	}
}

func TestReadEnvFile(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "x.env")
		if err := writeFile(p, text); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := readEnvFile(write("A=1\n\n# c\nexport B='two words'\nC=\"x=y\"\nD=v # note\n"), "")
	if err != nil || !reflect.DeepEqual(got, map[string]string{"A": "1", "B": "two words", "C": "x=y", "D": "v"}) {
		t.Errorf("got %q, %v", got, err)
	}
	_, err = readEnvFile(write("A=1\nnot a line\n"), "")
	if err == nil || !strings.HasSuffix(err.Error(), "x.env: line 2: want KEY=VALUE") {
		t.Errorf("bad line: %v", err)
	}
}
