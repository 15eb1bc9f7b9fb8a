package hostconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

const testSonde = "/usr/local/bin/sonde"

// wrapSample is a host config file of testdata, read as its host reads it.
type wrapSample struct {
	file    string
	host    string
	scope   paths.Scope
	project string
}

var wrapSamples = []wrapSample{
	{"home/.config/Claude/claude_desktop_config.json", paths.ClaudeDesktop, paths.User, ""},
	{"home/.claude.json", paths.ClaudeCode, paths.User, "/home/ada/shop/src"},
	{"project/.mcp.json", paths.ClaudeCode, paths.Project, ""},
	{"home/.cursor/mcp.json", paths.Cursor, paths.User, ""},
	{"home/.config/Code/User/mcp.json", paths.VSCode, paths.User, ""},
	{"project/.vscode/mcp.json", paths.VSCode, paths.Project, ""},
	{"inputs/mcp.json", paths.VSCode, paths.Project, ""},
	{"home/.codeium/windsurf/mcp_config.json", paths.Windsurf, paths.User, ""},
	{"home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", paths.Cline, paths.User, ""},
}

// TestWrapRoundTrip: on each host's sample file, wrapping every entry
// makes each stdio entry launch sonde tap with its original command and
// args after "--" (as Parse reads it), keeps the comments and every byte
// outside the command and args, and leaves URL entries alone; wrapping
// again changes nothing; unwrapping gives back the file byte for byte,
// and unwrapping again changes nothing.
func TestWrapRoundTrip(t *testing.T) {
	for _, s := range wrapSamples {
		t.Run(s.file, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join("testdata", s.file))
			if err != nil {
				t.Fatal(err)
			}
			o := WrapOptions{Sonde: testSonde, All: true, Project: s.project}
			before, _ := Parse(orig, s.file, s.host, s.scope, s.project)
			wrapped, changes, err := Wrap(orig, s.host, s.scope, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) != len(before) {
				t.Fatalf("%d changes for %d servers: %+v", len(changes), len(before), changes)
			}
			after, problems := Parse(wrapped, s.file, s.host, s.scope, s.project)
			if len(problems) > 0 {
				t.Fatalf("wrapped file: %v\n%s", problems, wrapped)
			}
			nwrapped := 0
			for i, c := range changes {
				b, a := before[i], after[i]
				if c.Server != b.Name || a.Name != b.Name {
					t.Fatalf("change %d is %q, servers %q %q", i, c.Server, b.Name, a.Name)
				}
				if b.Transport != Stdio {
					if c.State != URLEntry || c.URL != b.URL || !reflect.DeepEqual(a, b) {
						t.Errorf("%s: URL entry: %+v, after %+v", b.Name, c, a)
					}
					continue
				}
				nwrapped++
				want := append([]string{"tap", WrapMarker, "--label", b.Name, "--", b.Command}, b.Args...)
				if b.Args == nil {
					want = []string{"tap", WrapMarker, "--label=" + b.Name, "--", b.Command}
				}
				if c.State != Wrapped || a.Command != testSonde || !reflect.DeepEqual(a.Args, want) {
					t.Errorf("%s: %s, command %q args %q, want %q", b.Name, c.State, a.Command, a.Args, want)
				}
				if len(c.Before) == 0 || len(c.After) == 0 || c.Line < 1 || !strings.Contains(strings.Join(c.After, "\n"), `"tap"`) {
					t.Errorf("%s: diff at line %d: %q -> %q", b.Name, c.Line, c.Before, c.After)
				}
			}
			if nwrapped == 0 {
				t.Fatal("nothing wrapped")
			}
			for _, comment := range []string{"//", "/*"} {
				if bytes.Count(wrapped, []byte(comment)) != bytes.Count(orig, []byte(comment)) {
					t.Errorf("comments %q not kept:\n%s", comment, wrapped)
				}
			}
			again, changes, err := Wrap(wrapped, s.host, s.scope, o)
			if err != nil || !bytes.Equal(again, wrapped) {
				t.Errorf("wrapping twice changed the file (%v):\n%s", err, again)
			}
			for _, c := range changes {
				if c.State != AlreadyWrapped && c.State != URLEntry {
					t.Errorf("second wrap: %s %s", c.Server, c.State)
				}
			}
			back, changes, err := Unwrap(wrapped, s.host, s.scope, o)
			if err != nil || !bytes.Equal(back, orig) {
				t.Fatalf("unwrap (%v):\n%s\nwant:\n%s", err, back, orig)
			}
			for _, c := range changes {
				if c.State != Unwrapped && c.State != URLEntry {
					t.Errorf("unwrap: %s %s", c.Server, c.State)
				}
			}
			again, changes, err = Unwrap(back, s.host, s.scope, o)
			if err != nil || !bytes.Equal(again, orig) {
				t.Errorf("unwrapping twice changed the file (%v)", err)
			}
			for _, c := range changes {
				if c.State != NotWrapped && c.State != URLEntry {
					t.Errorf("second unwrap: %s %s", c.Server, c.State)
				}
			}
		})
	}
}

// TestWrapShapes: args missing, empty, empty with blanks, on several
// lines, with a trailing comma and comments, a compact file, CRLF line
// ends, a command with escapes: each wraps and unwraps byte for byte, and
// the wrapped entry reads as sonde tap in front of the original.
func TestWrapShapes(t *testing.T) {
	for _, text := range []string{
		`{"mcpServers":{"a":{"command":"x"}}}`,
		`{"mcpServers":{"a":{"command":"x", "args": []}}}`,
		`{"mcpServers":{"a":{"command":"x","args":[]}}}`,
		`{"mcpServers":{"a":{"args": [ ], "command": "x"}}}`,
		"{\r\n  \"mcpServers\": {\r\n    \"a\": {\r\n      \"command\": \"x\",\r\n      \"args\": [\r\n        \"-y\",\r\n        \"p\"\r\n      ]\r\n    }\r\n  }\r\n}\r\n",
		"{\"mcpServers\": {\"a\": {\"command\": \"x\" /* c */, // d\n \"args\": [ /* e */ \"1\", \"2\", ], }, \"b\": {\"command\": \"y\"},},}",
		`{"mcpServers":{"a":{"command":"C:\\srv\\x.exe","args":["\u00e9","<&>"]},"b":{"command":"y","args":["z"]}}}`,
		"\xef\xbb\xbf{\"mcpServers\":{\"a\":{\"command\":\"x\"}}}",
	} {
		orig := []byte(text)
		before, problems := Parse(orig, "f", HostFile, paths.User, "")
		if len(problems) > 0 {
			t.Fatalf("%q: %v", text, problems)
		}
		o := WrapOptions{Sonde: `C:\Program Files\sonde\sonde.exe`, Servers: []string{"a"}}
		wrapped, changes, err := Wrap(orig, HostFile, paths.User, o)
		if err != nil || len(changes) != 1 || changes[0].State != Wrapped {
			t.Fatalf("%q: %v %+v", text, err, changes)
		}
		after, problems := Parse(wrapped, "f", HostFile, paths.User, "")
		if len(problems) > 0 {
			t.Fatalf("%q wrapped: %v\n%s", text, problems, wrapped)
		}
		if got := append([]string{after[0].Command}, after[0].Args...); got[0] != o.Sonde || got[1] != "tap" ||
			!reflect.DeepEqual(got[len(got)-1-len(before[0].Args):], append([]string{before[0].Command}, before[0].Args...)) {
			t.Errorf("%q wrapped: %q\n%s", text, got, wrapped)
		}
		if len(before) > 1 && !reflect.DeepEqual(after[1], before[1]) {
			t.Errorf("%q: server b changed: %+v", text, after[1])
		}
		back, _, err := Unwrap(wrapped, HostFile, paths.User, o)
		if err != nil || !bytes.Equal(back, orig) {
			t.Errorf("%q: unwrap gave %q (%v)", text, back, err)
		}
	}
}

// TestWrapErrors: a name that is not there, a file that is not JSON, args
// of the wrong type.
func TestWrapErrors(t *testing.T) {
	o := WrapOptions{Sonde: testSonde, Servers: []string{"nope"}}
	_, _, err := Wrap([]byte(`{"mcpServers": {"a": {"command": "x"}}}`), paths.ClaudeDesktop, paths.User, o)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"; the servers are: a`) {
		t.Errorf("missing server: %v", err)
	}
	if _, _, err := Wrap([]byte(`{"mcpServers": // c
	{}}`), paths.ClaudeDesktop, paths.User, o); !errors.Is(err, ErrSyntax) {
		t.Errorf("a comment in a strict file: %v", err)
	}
	out, changes, err := Wrap([]byte(`{"mcpServers": {"a": {"command": "x", "args": "y"}, "b": {"command": "x", "args": null}}}`), paths.ClaudeDesktop, paths.User, WrapOptions{Sonde: testSonde, All: true})
	if err != nil || len(changes) != 2 || changes[0].State != Skipped || changes[1].State != Skipped || changes[0].Err == nil {
		t.Errorf("%v %+v %s", err, changes, out)
	}
}

// FuzzWrap: whatever the bytes, Wrap and Unwrap do not panic; Unwrap with
// All changes nothing in a file without WrapMarker (an entry pointed at
// sonde tap by hand is not sonde wrap's); when Wrap succeeds its file reads
// as before with the same servers, wrapping again changes nothing, and,
// when no entry was wrapped already, unwrapping gives back the bytes.
func FuzzWrap(f *testing.F) {
	for _, s := range wrapSamples {
		if b, err := os.ReadFile(filepath.Join("testdata", s.file)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":[]},"b":{"command":"sonde","args":["tap","--","y"]}}}`))
	f.Add([]byte(`{"servers":{"a":{"command":"x" /*c*/,},},}`))
	f.Add([]byte(`{"mcpServers":{"--":{"command":"sonde","args":["tap","--label","--","--","x","--"]},"b":{"command":"x","args":["--"]}}}`))
	hosts := []string{paths.ClaudeDesktop, paths.ClaudeCode, paths.VSCode, HostFile}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, host := range hosts {
			o := WrapOptions{Sonde: testSonde, All: true, Project: "/home/ada/shop"}
			wrapped, changes, err := Wrap(b, host, paths.User, o)
			out, _, uerr := Unwrap(b, host, paths.User, o)
			if uerr == nil && !bytes.Contains(b, []byte("wrapped-by-sonde")) && !bytes.Contains(b, []byte(`\u`)) && !bytes.Equal(out, b) {
				t.Fatalf("%s: unwrap --all changed a file without the marker:\n%q\n%q", host, b, out)
			}
			if err != nil {
				continue
			}
			before, p1 := Parse(b, "f", host, paths.User, o.Project)
			after, p2 := Parse(wrapped, "f", host, paths.User, o.Project)
			if len(before) != len(after) || len(p1) != len(p2) {
				t.Fatalf("%s: %d servers %d problems, wrapped %d %d\n%q\n%q", host, len(before), len(p1), len(after), len(p2), b, wrapped)
			}
			again, _, err := Wrap(wrapped, host, paths.User, o)
			if err != nil || !bytes.Equal(again, wrapped) {
				t.Fatalf("%s: wrap twice: %v\n%q\n%q", host, err, wrapped, again)
			}
			already := false
			for _, c := range changes {
				already = already || c.State == AlreadyWrapped
			}
			if already {
				continue
			}
			back, _, err := Unwrap(wrapped, host, paths.User, o)
			if err != nil || !bytes.Equal(back, b) {
				t.Fatalf("%s: unwrap: %v\n%q\n%q\n%q", host, err, b, wrapped, back)
			}
		}
	})
}
