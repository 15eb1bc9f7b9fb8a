package hostconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// FuzzParse: whatever the bytes, Parse does not panic, every problem names
// the file, every server has a name and a transport with what it needs,
// and stripping JSONC keeps the length and the line breaks (so error
// positions are those of the file).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*", ".*", "*.json"))
	newer, _ := filepath.Glob(filepath.Join("testdata", "newer", "*.json*"))
	more = append(more, newer...)
	for _, p := range append(files, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"servers": {"a": {"url": "x", "type": "sse"}}, "inputs": [{"id": "i"}]} // c`))
	hosts := []string{paths.ClaudeDesktop, paths.ClaudeCode, paths.Cursor, paths.VSCode, paths.Windsurf, paths.Cline,
		paths.Gemini, paths.Zed, paths.Opencode, paths.LMStudio, HostFile}
	f.Fuzz(func(t *testing.T, b []byte) {
		stripped := stripJSONC(b)
		if len(stripped) != len(b) || bytes.Count(stripped, []byte("\n")) != bytes.Count(b, []byte("\n")) {
			t.Fatalf("stripJSONC changed the length or the lines of %q: %q", b, stripped)
		}
		for _, host := range hosts {
			servers, problems := Parse(b, "f.json", host, paths.User, "/p")
			for _, p := range problems {
				if p.File != "f.json" || p.Err == nil {
					t.Fatalf("%s: problem %+v", host, p)
				}
			}
			for _, s := range servers {
				if s.Name == "" || s.Transport == "" || (s.Transport == Stdio && s.Command == "") || (s.Transport != Stdio && s.URL == "") {
					t.Fatalf("%s: server %+v", host, s)
				}
				if _, err := s.Resolve(Env{}); err != nil && !isProblem(err) {
					t.Fatalf("%s: Resolve error %v is not a Problem", host, err)
				}
			}
		}
	})
}

func isProblem(err error) bool {
	_, ok := err.(*Problem)
	return ok
}

// FuzzResolve: a config file's entry with any text in its command, args,
// env, cwd and envFile (references of every syntax, broken ones too) and
// any .env file content resolves or fails with an error; never a panic,
// and a resolved entry keeps its name and transport.
func FuzzResolve(f *testing.F) {
	f.Add("${env:HOME}/bin", "${input:x}", "${workspaceFolder}", "A=1\nexport B='q'\n")
	f.Add("${", "$${env:", "${userHome", "=\n#\nX=\"")
	f.Add("${input:}", "${env:A}${env:A}", "${pathSeparator}", "K=v # c\n")
	dir := f.TempDir()
	envFile := filepath.Join(dir, "x.env")
	f.Fuzz(func(t *testing.T, command, arg, cwd, envText string) {
		if err := os.WriteFile(envFile, []byte(envText), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, host := range []string{paths.VSCode, paths.ClaudeCode, paths.Cursor, HostFile} {
			s := Server{Name: "s", Host: host, Transport: Stdio, Command: command, Args: []string{arg, command},
				Env: map[string]string{"E": arg}, Cwd: cwd, EnvFile: envFile}
			r, err := s.Resolve(Env{Lookup: func(n string) (string, bool) { return "v" + n, n != "" }, Home: "/h", Workspace: dir})
			if err == nil && (r.Name != "s" || r.Transport != Stdio) {
				t.Fatalf("%s: resolved %+v", host, r)
			}
		}
		vars, err := readEnvFile(envFile, "")
		for k := range vars {
			if err != nil || !isName(k) {
				t.Fatalf("readEnvFile: key %q (err %v)", k, err)
			}
		}
	})
}
