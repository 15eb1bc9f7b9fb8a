package tap_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

const fakeSonde = "/opt/sonde/bin/sonde"

// copyTree copies the sample folder hostconfig/testdata/rel to a new
// temporary folder.
func copyTree(t *testing.T, rel string) string {
	t.Helper()
	src := filepath.Join(peertest.Root(), "hostconfig", "testdata", rel)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, r), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, r), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// TestWrapEveryHost: for each host, sonde wrap --host NAME --all on the
// sample files (a home and a project folder) wraps every stdio entry and
// only them, writes a backup holding the original first, keeps the file's
// mode, and says what it did; a second wrap changes nothing and writes no
// backup; sonde unwrap gives back every file byte for byte (with a backup
// of its own, which never replaces the first); a second unwrap changes
// nothing. A project file that is not valid JSON is skipped with a
// warning, the other file of the host still edited.
func TestWrapEveryHost(t *testing.T) {
	for _, tc := range []struct {
		flag  string
		host  string
		files []string // relative to home (h/) or project (p/)
	}{
		{"claude-desktop", paths.ClaudeDesktop, []string{"h/.config/Claude/claude_desktop_config.json"}},
		{"claude-code", paths.ClaudeCode, []string{"h/.claude.json", "p/.mcp.json"}},
		{"cursor", paths.Cursor, []string{"h/.cursor/mcp.json"}},
		{"vscode", paths.VSCode, []string{"h/.config/Code/User/mcp.json", "p/.vscode/mcp.json"}},
		{"windsurf", paths.Windsurf, []string{"h/.codeium/windsurf/mcp_config.json"}},
		{"cline", paths.Cline, []string{"h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"}},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			home, project := copyTree(t, "home"), copyTree(t, "project")
			clitest.HostHome(t, home, project)
			abs := func(rel string) string {
				if r, ok := strings.CutPrefix(rel, "h/"); ok {
					return filepath.Join(home, r)
				}
				return filepath.Join(project, strings.TrimPrefix(rel, "p/"))
			}
			before := map[string]string{}
			for _, rel := range tc.files {
				before[rel] = snapshot(t, filepath.Dir(abs(rel)))[abs(rel)]
			}
			all := snapshot(t, home)
			for k, v := range snapshot(t, project) {
				all[k] = v
			}

			// Cursor's project file is not valid JSON: a warning, each time.
			warning := ""
			if tc.flag == "cursor" {
				warning = "sonde: skipping " + filepath.Join(project, ".cursor", "mcp.json") + ": not valid JSON: line 5, column 7: invalid character '\"' after object key:value pair\n"
			}
			r := clitest.RunSonde(t, "", "wrap", "--host", tc.flag, "--all", "--sonde", fakeSonde)
			clitest.CheckRun(t, r, 0, warning)
			for _, rel := range tc.files {
				file := abs(rel)
				b, _ := os.ReadFile(file)
				if string(b) == before[rel] {
					t.Errorf("%s: not changed\n%s", rel, r.Stdout)
				}
				if bk, err := os.ReadFile(file + ".sonde-backup"); err != nil || string(bk) != before[rel] {
					t.Errorf("%s: backup %v", rel, err)
				}
				if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v", rel, st.Mode())
				}
				if !strings.Contains(r.Stdout, file+" ("+tc.host+" · ") || !strings.Contains(r.Stdout, "  backup: "+file+".sonde-backup\n") {
					t.Errorf("output:\n%s", r.Stdout)
				}
				scope := paths.User
				if strings.HasPrefix(rel, "p/") {
					scope = paths.Project
				}
				orig, _ := hostconfig.Parse([]byte(before[rel]), file, tc.host, scope, project)
				now, problems := hostconfig.Parse(b, file, tc.host, scope, project)
				if len(problems) > 0 || len(now) != len(orig) {
					t.Fatalf("%s: %v", rel, problems)
				}
				for i, s := range now {
					o := orig[i]
					if o.Transport != hostconfig.Stdio {
						if !reflect.DeepEqual(s, o) {
							t.Errorf("%s: URL entry %s changed", rel, s.Name)
						}
						if !strings.Contains(r.Stdout, "sonde tap --listen 127.0.0.1:PORT --target ") || !strings.Contains(r.Stdout, "--label "+o.Name+"\n") {
							t.Errorf("no tap --listen command for %s:\n%s", o.Name, r.Stdout)
						}
						continue
					}
					if s.Command != fakeSonde || len(s.Args) < 4 || s.Args[0] != "tap" || !reflect.DeepEqual(s.Args[len(s.Args)-len(o.Args)-1:], append([]string{o.Command}, o.Args...)) {
						t.Errorf("%s: %s: %q %q", rel, s.Name, s.Command, s.Args)
					}
					if !strings.Contains(r.Stdout, `  server "`+o.Name+`": wrapped (line `) {
						t.Errorf("%s not reported wrapped:\n%s", o.Name, r.Stdout)
					}
				}
			}
			wrapped := snapshot(t, home)
			for k, v := range snapshot(t, project) {
				wrapped[k] = v
			}

			r = clitest.RunSonde(t, "", "wrap", "--host", tc.flag, "--all", "--sonde", fakeSonde)
			clitest.CheckRun(t, r, 0, warning)
			if !strings.Contains(r.Stdout, "already wrapped, left as it is") || !strings.Contains(r.Stdout, "Nothing to change.") {
				t.Errorf("second wrap:\n%s", r.Stdout)
			}
			again := snapshot(t, home)
			for k, v := range snapshot(t, project) {
				again[k] = v
			}
			if !reflect.DeepEqual(again, wrapped) {
				t.Error("a second wrap changed files")
			}

			r = clitest.RunSonde(t, "", "unwrap", "--host", tc.flag, "--all")
			clitest.CheckRun(t, r, 0, warning)
			for _, rel := range tc.files {
				file := abs(rel)
				if b, _ := os.ReadFile(file); string(b) != before[rel] {
					t.Errorf("%s after unwrap:\n%s\nwant:\n%s", rel, b, before[rel])
				}
				if bk, _ := os.ReadFile(file + ".sonde-backup"); string(bk) != before[rel] {
					t.Errorf("%s: the first backup was replaced", rel)
				}
				more, _ := filepath.Glob(file + ".sonde-backup-*")
				if len(more) != 1 {
					t.Errorf("%s: unwrap's backups %v", rel, more)
				} else if bk, _ := os.ReadFile(more[0]); string(bk) != wrapped[file] {
					t.Errorf("%s: unwrap's backup is not the wrapped file", rel)
				}
			}
			r = clitest.RunSonde(t, "", "unwrap", "--host", tc.flag, "--all")
			clitest.CheckRun(t, r, 0, warning)
			if !strings.Contains(r.Stdout, "Nothing to change.") {
				t.Errorf("second unwrap:\n%s", r.Stdout)
			}
			for file, text := range all {
				if b, _ := os.ReadFile(file); string(b) != text {
					t.Errorf("%s differs after wrap and unwrap", file)
				}
			}
		})
	}
}

// TestWrapDryRun: --dry-run prints each change as the lines before and
// after, and writes nothing (no backup either), for wrap and unwrap.
func TestWrapDryRun(t *testing.T) {
	home, project := copyTree(t, "home"), t.TempDir()
	clitest.HostHome(t, home, project)
	before := snapshot(t, home)
	r := clitest.RunSonde(t, "", "wrap", "--server", "github", "--dry-run", "--sonde", fakeSonde)
	clitest.CheckRun(t, r, 0, "")
	want := `  server "github": would be wrapped (line 9)
    -       "command": "docker",
    -       "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
    +       "command": "/opt/sonde/bin/sonde",
    +       "args": ["tap", "--wrapped-by-sonde", "--label", "github", "--", "docker", "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
Dry run: nothing was written.
`
	if !strings.HasSuffix(r.Stdout, want) {
		t.Errorf("got:\n%s\nwant:\n%s", r.Stdout, want)
	}
	if !reflect.DeepEqual(snapshot(t, home), before) {
		t.Error("--dry-run wrote")
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "wrap", "--server", "github", "--sonde", fakeSonde), 0, "")
	wrapped := snapshot(t, home)
	r = clitest.RunSonde(t, "", "unwrap", "--server", "github", "--dry-run")
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "would be unwrapped") || !strings.Contains(r.Stdout, `    +       "command": "docker",`) {
		t.Errorf("unwrap --dry-run:\n%s", r.Stdout)
	}
	if !reflect.DeepEqual(snapshot(t, home), wrapped) {
		t.Error("unwrap --dry-run wrote")
	}
}

// TestWrapUsage: the usage errors exit 2 and change nothing.
func TestWrapUsage(t *testing.T) {
	home, project := copyTree(t, "home"), copyTree(t, "project")
	clitest.HostHome(t, home, project)
	clitest.WriteTestFile(t, filepath.Join(project, ".vscode", "mcp.json"), `{"servers": {"time": {"command": "x"}}}`)
	before := snapshot(t, home)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"wrap"}, "sonde: wrap needs --server NAME or --all (see sonde wrap --help)"},
		{[]string{"unwrap", "--all", "--server", "x"}, "sonde: give either --server NAME or --all, not both"},
		{[]string{"wrap", "--all", "--host", "cursor", "--config", "x.json"}, "sonde: give either --config FILE or --host NAME, not both"},
		{[]string{"wrap", "--all", "--host", "emacs"}, `sonde: --host "emacs": want one of claude-desktop, claude-code, cursor, vscode, windsurf, cline, gemini, codex, zed, opencode, goose, lmstudio`},
		{[]string{"wrap", "--server", "nope", "--host", "windsurf"}, `sonde: no server "nope"; the servers are: figma, puppeteer`},
		{[]string{"wrap", "--server", "time"}, "sonde: skipping " + filepath.Join(project, ".cursor", "mcp.json") + ": not valid JSON: line 5, column 7: invalid character '\"' after object key:value pair\n" +
			`sonde: server "time" is in ` + filepath.Join(home, ".config", "Code", "User", "mcp.json") + " and " + filepath.Join(project, ".vscode", "mcp.json") + "; choose one with --config FILE or --host NAME"},
		{[]string{"wrap", "--all", "--sonde", "sonde"}, `sonde: --sonde "sonde": want an absolute path (a host may not see your PATH)`},
		{[]string{"wrap", "--all", "--config", filepath.Join(project, ".cursor", "mcp.json")}, "sonde: " + filepath.Join(project, ".cursor", "mcp.json") + ": not valid JSON: line 5, column 7: invalid character '\"' after object key:value pair"},
		{[]string{"wrap", "--all", "--config", filepath.Join(project, "none.json")}, "sonde: " + filepath.Join(project, "none.json") + ": no such file or directory"},
		{[]string{"wrap", "extra", "--all"}, `sonde: unknown command "extra" for "sonde wrap"`},
	} {
		r := clitest.RunSonde(t, "", tc.args...)
		clitest.CheckRun(t, r, 2, tc.msg+"\n")
	}
	if !reflect.DeepEqual(snapshot(t, home), before) {
		t.Error("a usage error changed files")
	}
}

// TestWrapLaunchesTap is the whole path: a config entry that starts the
// fixture is wrapped (with this sonde's own path); launched as the host
// would launch it, it is sonde tap, which forwards the session and records
// it in the sessions folder under the entry's name, where sonde sessions
// lists it; unwrapped, the file is as it was.
func TestWrapLaunchesTap(t *testing.T) {
	fx := clitest.NewFixture(t)
	home, project, sessions := t.TempDir(), t.TempDir(), t.TempDir()
	clitest.HostHome(t, home, project)
	t.Setenv("SONDE_HOME", sessions)
	file := filepath.Join(project, ".vscode", "mcp.json")
	argv, _ := json.Marshal(fx.Argv()[1:])
	cmd, _ := json.Marshal(fx.Argv()[0])
	orig := "{\n\t// the fixture\n\t\"servers\": {\n\t\t\"fx\": {\"command\": " + string(cmd) + ", \"args\": " + string(argv) + "},\n\t},\n}\n"
	clitest.WriteTestFile(t, file, orig)

	r := clitest.RunSonde(t, "", "wrap", "--host", "vscode", "--server", "fx")
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "sessions then go to "+filepath.Join(sessions, "sessions")) {
		t.Errorf("wrap:\n%s", r.Stdout)
	}
	b, _ := os.ReadFile(file)
	servers, problems := hostconfig.Parse(b, file, paths.VSCode, paths.Project, project)
	if len(problems) > 0 || len(servers) != 1 {
		t.Fatal(problems)
	}
	exe, _ := os.Executable()
	if s := servers[0]; s.Command != exe || !strings.Contains(string(b), "// the fixture") {
		t.Fatalf("wrapped:\n%s", b)
	}
	h := startHost(t, []string{"SONDE_HOME=" + sessions}, append([]string{servers[0].Command}, servers[0].Args...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, h.stderr())
	}

	r = clitest.RunSonde(t, "", "sessions", "--json")
	clitest.CheckRun(t, r, 0, "")
	var list []struct {
		Label    string
		Live     bool
		Calls    int
		CleanEnd bool `json:"clean_end"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || len(list) != 1 || list[0].Label != "fx" || list[0].Live || list[0].Calls != 1 || !list[0].CleanEnd {
		t.Errorf("sessions: %v\n%s", err, r.Stdout)
	}

	clitest.CheckRun(t, clitest.RunSonde(t, "", "unwrap", "--config", file, "--server", "fx"), 0, "")
	if b, _ := os.ReadFile(file); !bytes.Equal(b, []byte(orig)) {
		t.Errorf("unwrapped:\n%s\nwant:\n%s", b, orig)
	}
}
