package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/internal/paths"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// abs returns the absolute path of a testdata file.
func abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// line is a server on one line: name, where, transport, what, flags; the
// file relative to testdata.
func line(t *testing.T, s Server) string {
	t.Helper()
	rel, err := filepath.Rel(abs(t, ""), s.File)
	if err != nil {
		t.Fatal(err)
	}
	what := s.URL
	if s.Transport == Stdio {
		what = strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	out := fmt.Sprintf("%s | %s | %s | %s | %s", s.Name, s.Where(), s.Transport, what, filepath.ToSlash(rel))
	if s.Project != "" {
		out += " | project " + s.Project
	}
	if s.Disabled {
		out += " | disabled"
	}
	if names := s.EnvNames(); len(names) > 0 {
		out += " | env " + strings.Join(names, ",")
	}
	if names := s.HeaderNames(); len(names) > 0 {
		out += " | headers " + strings.Join(names, ",")
	}
	return out
}

func lines(t *testing.T, servers []Server) []string {
	t.Helper()
	var out []string
	for _, s := range servers {
		out = append(out, line(t, s))
	}
	return out
}

func problemLines(t *testing.T, problems []Problem) []string {
	t.Helper()
	var out []string
	for _, p := range problems {
		out = append(out, strings.ReplaceAll(p.Error(), abs(t, "")+string(filepath.Separator), ""))
	}
	return out
}

func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestDiscover reads every host's file from a home folder laid out as on
// Linux and a project folder: every format, in the order of paths.For,
// servers in file order, a broken project file reported without stopping
// the others.
func TestDiscover(t *testing.T) {
	home, project := abs(t, "home"), abs(t, "project")
	p, err := paths.For("linux", home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	f := Discover(p.Hosts, project)
	checkLines(t, "servers", lines(t, f.Servers), []string{
		"filesystem | Claude Desktop · user | stdio | npx -y @modelcontextprotocol/server-filesystem /home/ada/Desktop /home/ada/Downloads | home/.config/Claude/claude_desktop_config.json",
		"github | Claude Desktop · user | stdio | docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server | home/.config/Claude/claude_desktop_config.json | env GITHUB_PERSONAL_ACCESS_TOKEN",
		"memory | Claude Code · user | stdio | npx -y @modelcontextprotocol/server-memory | home/.claude.json | env MEMORY_FILE_PATH",
		"linear | Claude Code · user | sse | https://mcp.linear.app/sse | home/.claude.json",
		"playwright | Claude Code · project | stdio | npx @playwright/mcp@latest | project/.mcp.json",
		"sentry | Claude Code · project | streamable-http | ${SENTRY_URL:-https://mcp.sentry.dev/mcp} | project/.mcp.json | headers Authorization",
		"context7 | Cursor · user | http | https://mcp.context7.com/mcp | home/.cursor/mcp.json | headers CONTEXT7_API_KEY",
		"sqlite | Cursor · user | stdio | uvx mcp-server-sqlite --db-path ${userHome}/data/app.db | home/.cursor/mcp.json",
		"github-remote | VS Code · user | http | https://api.githubcopilot.com/mcp/ | home/.config/Code/User/mcp.json | headers Authorization",
		"time | VS Code · user | stdio | uvx mcp-server-time --local-timezone=Europe/Paris | home/.config/Code/User/mcp.json",
		"db | VS Code · project | stdio | ${workspaceFolder}/bin/db-server --region ${input:region} --home ${userHome} | project/.vscode/mcp.json | env DB_PASSWORD,DB_USER,LOG_LEVEL",
		"events | VS Code · project | sse | http://localhost:8931/sse | project/.vscode/mcp.json",
		"puppeteer | Windsurf · user | stdio | npx -y @modelcontextprotocol/server-puppeteer | home/.codeium/windsurf/mcp_config.json | disabled",
		"figma | Windsurf · user | http | https://mcp.figma.com/mcp | home/.codeium/windsurf/mcp_config.json | headers X-Figma-Token",
		"brave-search | Cline · user | stdio | npx -y @modelcontextprotocol/server-brave-search | home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json | env BRAVE_API_KEY",
		"docs | Cline · user | streamable-http | https://docs.example.com/mcp | home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json | disabled",
		"legacy-events | Cline · user | sse | https://events.example.com/sse | home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
	})
	checkLines(t, "problems", problemLines(t, f.Problems), []string{
		`project/.cursor/mcp.json: not valid JSON: line 5, column 7: invalid character '"' after object key:value pair`,
	})
	if len(f.Files) != 9 {
		t.Errorf("files read: %d %q, want 9 (every file but none missing)", len(f.Files), f.Files)
	}
}

// TestDiscoverMissingAndUnreadable: missing files are skipped quietly; a
// file that cannot be read (here a folder where the file should be) is a
// problem with the file and the reason, and the other files are read.
func TestDiscoverMissingAndUnreadable(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cursor", "mcp.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	good := []byte(`{"mcpServers": {"one": {"command": "one-server"}}}`)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := paths.For("linux", home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	f := Discover(p.Hosts, t.TempDir())
	if len(f.Servers) != 1 || f.Servers[0].Name != "one" || f.Servers[0].Host != paths.ClaudeCode {
		t.Errorf("servers = %+v, want one from Claude Code", f.Servers)
	}
	if len(f.Problems) != 1 {
		t.Fatalf("problems = %q, want the unreadable Cursor file only", problemLines(t, f.Problems))
	}
	pr := f.Problems[0]
	want := filepath.Join(home, ".cursor", "mcp.json") + ": cannot read: is a directory"
	if pr.Error() != want || !errors.Is(pr.Err, ErrRead) {
		t.Errorf("problem = %q, want %q wrapping ErrRead", pr.Error(), want)
	}
	// ReadFile on a missing file says so (for --config).
	_, probs := ReadFile(filepath.Join(home, "nope.json"), HostFile, paths.User, "")
	if len(probs) != 1 || !errors.Is(probs[0].Err, fs.ErrNotExist) || !strings.HasSuffix(probs[0].Error(), "nope.json: cannot read: no such file or directory") {
		t.Errorf("missing file: %q", problemLines(t, probs))
	}
}

// TestClaudeCodeProjects: ~/.claude.json's local-scope servers are those of
// the project folder or its nearest parent in "projects".
func TestClaudeCodeProjects(t *testing.T) {
	file := abs(t, "home/.claude.json")
	for _, tc := range []struct {
		project string
		want    []string
	}{
		{"/home/ada/shop", []string{"memory:user:", "linear:user:", "shop-db:local:/home/ada/shop"}},
		{"/home/ada/shop/api/v2", []string{"memory:user:", "linear:user:", "shop-db:local:/home/ada/shop"}},
		{"/home/ada/blog", []string{"memory:user:", "linear:user:", "blog-search:local:/home/ada/blog"}},
		{"/home/ada", []string{"memory:user:", "linear:user:"}},
		{"", []string{"memory:user:", "linear:user:"}},
	} {
		servers, problems := ReadFile(file, paths.ClaudeCode, paths.User, tc.project)
		var got []string
		for _, s := range servers {
			got = append(got, s.Name+":"+s.Scope+":"+s.Project)
		}
		if !reflect.DeepEqual(got, tc.want) || len(problems) > 0 {
			t.Errorf("project %q: servers %q problems %q, want %q", tc.project, got, problemLines(t, problems), tc.want)
		}
	}
}

// TestBrokenFiles: every bad file or entry is a problem naming the file,
// the server when there is one, and the reason; good entries of the same
// file are still read.
func TestBrokenFiles(t *testing.T) {
	for _, tc := range []struct {
		file, host string
		servers    []string
		problems   []string
	}{
		{"broken/wrong-types.json", paths.ClaudeDesktop, []string{"fine"}, []string{
			`broken/wrong-types.json: server "number-command": wrong shape: "command" is a number, want a string`,
			`broken/wrong-types.json: server "string-args": wrong shape: "args" is a string, want an array of strings`,
			`broken/wrong-types.json: server "env-numbers": wrong shape: "env" is an object, want an object of strings`,
			`broken/wrong-types.json: server "not-an-object": wrong shape: the entry is a string, want an object`,
			`broken/wrong-types.json: server "no-command": wrong shape: no "command" and no "url"`,
			`broken/wrong-types.json: server "both": wrong shape: both "command" and a URL: give one`,
			`broken/wrong-types.json: server "websocket": wrong shape: "type" "ws": want stdio, http, streamable-http or sse`,
			`broken/wrong-types.json: server "http-without-url": wrong shape: "type" "http" needs a "url"`,
			`broken/wrong-types.json: server "disabled-string": wrong shape: "disabled" is a string, want a boolean`,
			`broken/wrong-types.json: wrong shape: "mcpServers" has a server with an empty name`,
		}},
		{"broken/servers-array.json", paths.Cursor, nil, []string{
			`broken/servers-array.json: wrong shape: "mcpServers" is an array, want an object of servers`,
		}},
		{"broken/top-array.json", paths.VSCode, nil, []string{
			`broken/top-array.json: wrong shape: the top level is an array, want an object`,
		}},
		{"broken/empty.json", paths.Windsurf, nil, []string{
			`broken/empty.json: not valid JSON: the file is empty`,
		}},
		// Claude Desktop reads strict JSON; VS Code and Cursor accept a
		// trailing comma.
		{"broken/trailing-comma.json", paths.ClaudeDesktop, nil, []string{
			`broken/trailing-comma.json: not valid JSON: line 6, column 5: invalid character '}' looking for beginning of object key string`,
		}},
		{"broken/trailing-comma.json", paths.Cursor, []string{"a"}, nil},
		{"broken/bad-inputs.json", paths.VSCode, []string{"uses-input"}, []string{
			`broken/bad-inputs.json: wrong shape: "inputs" is not a list of inputs (an object, want an array of objects with string "id", "type", "description", "default" and boolean "password")`,
		}},
	} {
		t.Run(tc.file+" "+tc.host, func(t *testing.T) {
			servers, problems := ReadFile(abs(t, tc.file), tc.host, paths.User, "")
			var names []string
			for _, s := range servers {
				names = append(names, s.Name)
			}
			if !reflect.DeepEqual(names, tc.servers) {
				t.Errorf("servers %q, want %q", names, tc.servers)
			}
			checkLines(t, "problems", problemLines(t, problems), tc.problems)
			for _, p := range problems {
				if !errors.Is(p.Err, ErrShape) && !errors.Is(p.Err, ErrSyntax) {
					t.Errorf("problem %q wraps neither ErrShape nor ErrSyntax", p.Error())
				}
			}
		})
	}
}

func TestStripJSONC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": "x // not a comment", "b": "/* nor this */"}`, `{"a": "x // not a comment", "b": "/* nor this */"}`},
		{"{\"a\": 1, // c\n\"b\": [1, 2,],}", "{\"a\": 1,     \n\"b\": [1, 2 ] }"},
		{"{/* x\ny */\"a\": \"q\\\",\"}", "{    \n    \"a\": \"q\\\",\"}"},
		{`{"a": ",}"}`, `{"a": ",}"}`},
		{"{\"a\": 1 /* unterminated", "{\"a\": 1                "},
	} {
		got := string(stripJSONC([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("stripJSONC(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestDetect(t *testing.T) {
	p, _ := paths.For("linux", "/home/ada", func(string) string { return "" })
	for _, tc := range []struct {
		file, host string
		scope      paths.Scope
	}{
		{"/home/ada/.config/Claude/claude_desktop_config.json", paths.ClaudeDesktop, paths.User},
		{"/home/ada/.claude.json", paths.ClaudeCode, paths.User},
		{"/srv/app/.mcp.json", paths.ClaudeCode, paths.Project},
		{"/srv/app/.cursor/mcp.json", paths.Cursor, paths.Project},
		{"/home/ada/.cursor/mcp.json", paths.Cursor, paths.User},
		{"/srv/app/.vscode/mcp.json", paths.VSCode, paths.Project},
		{"/tmp/Code/User/mcp.json", paths.VSCode, paths.User},
		{"/home/ada/.codeium/windsurf/mcp_config.json", paths.Windsurf, paths.User},
		{"/x/cline_mcp_settings.json", paths.Cline, paths.User},
		{"/x/servers.json", HostFile, paths.User},
	} {
		host, scope := Detect(tc.file, p.Hosts, "/srv/app")
		if host != tc.host || scope != tc.scope {
			t.Errorf("Detect(%s) = %s %s, want %s %s", tc.file, host, scope, tc.host, tc.scope)
		}
	}
}

func TestFind(t *testing.T) {
	servers := []Server{
		{Name: "a", Host: paths.Cursor, Scope: "user", File: "/h/.cursor/mcp.json"},
		{Name: "b", Host: paths.VSCode, Scope: "project", File: "/p/.vscode/mcp.json"},
		{Name: "a", Host: paths.ClaudeCode, Scope: "local", File: "/h/.claude.json", Project: "/p"},
	}
	if s, err := Find(servers, "b"); err != nil || s.File != "/p/.vscode/mcp.json" {
		t.Errorf("Find b = %+v, %v", s, err)
	}
	_, err := Find(servers, "c")
	if !errors.Is(err, ErrNotFound) || err.Error() != `no such server "c"; the servers are: a, b` {
		t.Errorf("Find c: %v", err)
	}
	_, err = Find(servers, "a")
	want := `ambiguous server name "a": it is in Cursor · user in /h/.cursor/mcp.json; Claude Code · local in /h/.claude.json (project /p); choose one with --config FILE`
	if !errors.Is(err, ErrAmbiguous) || err.Error() != want {
		t.Errorf("Find a:\n got %v\nwant %s", err, want)
	}
	// Claude Code's own entries: local over project over user.
	cc := []Server{
		{Name: "x", Host: paths.ClaudeCode, Scope: "user", File: "/h/.claude.json"},
		{Name: "x", Host: paths.ClaudeCode, Scope: "project", File: "/p/.mcp.json"},
		{Name: "x", Host: paths.ClaudeCode, Scope: "local", File: "/h/.claude.json", Project: "/p"},
	}
	if s, err := Find(cc, "x"); err != nil || s.Scope != "local" {
		t.Errorf("Claude Code x: %+v, %v; want the local one", s, err)
	}
	// A project server (an untrusted checkout's .mcp.json) shadows the
	// user's only once Claude Code approved it; otherwise Find refuses,
	// naming both files.
	_, err = Find(cc[:2], "x")
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "/p/.mcp.json (not yet approved in Claude Code) would shadow yours in /h/.claude.json") {
		t.Errorf("unapproved project x over the user's: %v", err)
	}
	approved := slices.Clone(cc[:2])
	approved[1].Approval = ApprovalEnabled
	if s, err := Find(approved, "x"); err != nil || s.Scope != "project" {
		t.Errorf("approved project x: %+v, %v; want the project one", s, err)
	}
	if s, err := Find(cc[1:2], "x"); err != nil || s.Scope != "project" {
		t.Errorf("project x alone: %+v, %v; want it (nothing is shadowed)", s, err)
	}
	if _, err := Find(append(cc, Server{Name: "x", Host: paths.Cursor, Scope: "user"}), "x"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("Claude Code and Cursor x: %v, want ambiguous", err)
	}
	if _, err := Find(nil, "a"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no servers were found") {
		t.Errorf("Find in nothing: %v", err)
	}
}

func writeFile(p, text string) error { return os.WriteFile(p, []byte(text), 0o644) }

// TestDiscoverMacOS: the user files where paths.For puts them on macOS
// (Application Support for Claude Desktop, VS Code and Cline; the home
// folder for the others) are found.
func TestDiscoverMacOS(t *testing.T) {
	home := t.TempDir()
	support := filepath.Join(home, "Library", "Application Support")
	files := map[string]string{
		filepath.Join(support, "Claude", "claude_desktop_config.json"):                                                           `{"mcpServers": {"desktop": {"command": "d"}}}`,
		filepath.Join(support, "Code", "User", "mcp.json"):                                                                       `{"servers": {"vscode": {"type": "sse", "url": "http://localhost:1/sse"}}}`,
		filepath.Join(support, "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"): `{"mcpServers": {"cline": {"command": "c"}}}`,
		filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"):                                                           `{"mcpServers": {"windsurf": {"serverUrl": "http://localhost:2/mcp"}}}`,
	}
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(p, text); err != nil {
			t.Fatal(err)
		}
	}
	p, err := paths.For("darwin", home, func(string) string { return "/ignored/on/macos" })
	if err != nil {
		t.Fatal(err)
	}
	f := Discover(p.Hosts, "")
	var got []string
	for _, s := range f.Servers {
		got = append(got, s.Name+" "+s.Where()+" "+string(s.Transport))
	}
	want := []string{"desktop Claude Desktop · user stdio", "vscode VS Code · user sse", "windsurf Windsurf · user http", "cline Cline · user stdio"}
	if !reflect.DeepEqual(got, want) || len(f.Problems) > 0 {
		t.Errorf("servers %q problems %q, want %q", got, problemLines(t, f.Problems), want)
	}
}
