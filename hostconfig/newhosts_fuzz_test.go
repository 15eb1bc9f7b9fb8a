package hostconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// FuzzParseText: whatever the bytes, reading them as Codex's TOML or
// Goose's YAML does not panic, every problem names the file, and every
// server has what its transport needs.
func FuzzParseText(f *testing.F) {
	for _, name := range []string{"codex-config.toml", "goose-config.yaml"} {
		if b, err := os.ReadFile(filepath.Join("testdata", "newer", name)); err == nil {
			f.Add(b)
		}
	}
	for _, v := range codexVariants {
		f.Add([]byte(v))
	}
	f.Add([]byte("extensions: {a: &x {type: stdio, cmd: c, args: [*x]}}"))
	f.Add([]byte("[mcp_servers.a]\ncommand = \"\xff\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, host := range []string{paths.Codex, paths.Goose} {
			servers, problems := Parse(b, "f", host, paths.User, "")
			for _, p := range problems {
				if p.File != "f" || p.Err == nil {
					t.Fatalf("%s: problem %+v", host, p)
				}
			}
			for _, s := range servers {
				if s.Name == "" || s.Transport == "" || (s.Transport == Stdio && s.Command == "") || (s.Transport != Stdio && s.URL == "") {
					t.Fatalf("%s: server %+v", host, s)
				}
			}
		}
	})
}

// FuzzWrapTOML: on any TOML file, wrap --all either refuses or gives a
// file that reads as one whose stdio entries launch sonde tap, and unwrap
// --all gives back the original byte for byte.
func FuzzWrapTOML(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "newer", "codex-config.toml")); err == nil {
		f.Add(b)
	}
	for _, v := range codexVariants {
		f.Add([]byte(v))
	}
	f.Add([]byte("[mcp_servers.\"a b\"]\ncommand = \"x\\u00e9\"\nargs = [\"\"\"\nm\"\"\", 'l']\n"))
	o := WrapOptions{Sonde: testSonde, All: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, changes, err := Wrap(b, paths.Codex, paths.User, o)
		if err != nil {
			if out != nil {
				t.Fatal("an error with contents")
			}
			return
		}
		checkWrapped(t, mustServers(t, out), changes, out)
		back, _, err := Unwrap(out, paths.Codex, paths.User, o)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("unwrap: %v\n%q\nwant\n%q", err, back, b)
		}
	})
}

// FuzzWrapYAML: the same for Goose's YAML.
func FuzzWrapYAML(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "newer", "goose-config.yaml")); err == nil {
		f.Add(b)
	}
	for _, v := range gooseVariants {
		f.Add([]byte(v))
	}
	o := WrapOptions{Sonde: testSonde, All: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, changes, err := Wrap(b, paths.Goose, paths.User, o)
		if err != nil {
			if out != nil {
				t.Fatal("an error with contents")
			}
			return
		}
		servers, problems := Parse(out, "f", paths.Goose, paths.User, "")
		for _, p := range problems {
			if p.Server == "" {
				t.Fatalf("the wrapped file does not read: %v\n%q", p.Err, out)
			}
		}
		checkWrapped(t, servers, changes, out)
		back, _, err := Unwrap(out, paths.Goose, paths.User, o)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("unwrap: %v\n%q\nwant\n%q", err, back, b)
		}
	})
}

func mustServers(t *testing.T, b []byte) []Server {
	servers, problems := Parse(b, "f", paths.Codex, paths.User, "")
	for _, p := range problems {
		if p.Server == "" {
			t.Fatalf("the wrapped file does not read: %v\n%q", p.Err, b)
		}
	}
	return servers
}

// checkWrapped: every entry a change says is wrapped launches sonde tap.
func checkWrapped(t *testing.T, servers []Server, changes []WrapChange, out []byte) {
	t.Helper()
	wrapped := map[string]bool{}
	for _, c := range changes {
		wrapped[c.Server] = c.State == Wrapped
	}
	for _, s := range servers {
		if wrapped[s.Name] && (s.Command != testSonde || len(s.Args) == 0 || s.Args[0] != "tap") {
			t.Fatalf("not wrapped: %+v\n%q", s, out)
		}
	}
}
