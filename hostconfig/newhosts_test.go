package hostconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// newerSamples are the sample files of the newer hosts (testdata/newer,
// each with the documentation it follows in a comment, or here).
var newerSamples = []struct {
	file, host string
	// want: name=transport:command-or-url, in file order.
	want []string
}{
	{"gemini-settings.json", paths.Gemini, []string{"serverName=stdio:path/to/server", "httpServer=streamable-http:http://localhost:3000/mcp", "sseServer=sse:http://localhost:8080/sse"}},
	{"codex-config.toml", paths.Codex, []string{"server-name=stdio:npx", "figma=streamable-http:https://mcp.figma.com/mcp", "bare=stdio:uvx"}},
	{"zed-settings.json", paths.Zed, []string{"local-mcp-server=stdio:some-command", "remote-mcp-server=http:https://example.com/mcp"}},
	{"opencode.jsonc", paths.Opencode, []string{"my-local-mcp-server=stdio:npx", "my-remote-mcp=http:https://my-mcp-server.com"}},
	{"opencode-v2.jsonc", paths.Opencode, []string{"my-server=stdio:npx"}},
	{"goose-config.yaml", paths.Goose, []string{"github=stdio:npx", "remote=streamable-http:http://localhost:8000/mcp"}},
	// LM Studio's mcp.json follows Cursor's notation (url and headers for a
	// remote server), after https://lmstudio.ai/docs/app/mcp.
	{"lmstudio-mcp.json", paths.LMStudio, []string{"hf-mcp-server=http:https://huggingface.co/mcp", "filesystem=stdio:npx"}},
}

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "newer", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNewerHostSamples: each newer host's documented shape reads into
// the servers it lists, in file order, with no problem.
func TestNewerHostSamples(t *testing.T) {
	for _, tc := range newerSamples {
		servers, problems := Parse(readSample(t, tc.file), tc.file, tc.host, paths.User, "")
		if len(problems) > 0 {
			t.Errorf("%s: problems %v", tc.file, problems)
		}
		var got []string
		for _, s := range servers {
			target := s.Command
			if s.Transport != Stdio {
				target = s.URL
			}
			got = append(got, s.Name+"="+string(s.Transport)+":"+target)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.file, got, tc.want)
		}
	}
}

// TestNewerHostFields: the fields each host names its own way.
func TestNewerHostFields(t *testing.T) {
	get := func(file, host, name string) Server {
		servers, _ := Parse(readSample(t, file), file, host, paths.User, "")
		for _, s := range servers {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("%s: no server %q", file, name)
		return Server{}
	}
	if s := get("gemini-settings.json", paths.Gemini, "serverName"); s.Cwd != "./server-directory" || s.Env["API_KEY"] != "$MY_API_TOKEN" || !slices.Equal(s.Args, []string{"--arg1", "value1"}) {
		t.Errorf("gemini stdio: %+v", s)
	}
	if s := get("codex-config.toml", paths.Codex, "server-name"); s.Env["API_KEY"] != "value" || !slices.Equal(s.Args, []string{"-y", "mcp-server"}) || s.Disabled {
		t.Errorf("codex stdio: %+v", s)
	}
	if s := get("codex-config.toml", paths.Codex, "figma"); s.Headers["X-Figma-Region"] != "us-east-1" {
		t.Errorf("codex http_headers: %+v", s)
	}
	if s := get("codex-config.toml", paths.Codex, "bare"); !s.Disabled {
		t.Errorf("codex enabled = false: %+v", s)
	}
	if s := get("opencode.jsonc", paths.Opencode, "my-local-mcp-server"); !slices.Equal(s.Args, []string{"-y", "my-mcp-command"}) || s.Env["MY_ENV_VAR"] != "my_env_var_value" || s.Disabled {
		t.Errorf("opencode local: %+v", s)
	}
	if s := get("opencode.jsonc", paths.Opencode, "my-remote-mcp"); !s.Disabled || s.Headers["Authorization"] == "" {
		t.Errorf("opencode remote: %+v", s)
	}
	if s := get("goose-config.yaml", paths.Goose, "github"); s.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "<token>" || !slices.Equal(s.Args, []string{"-y", "@modelcontextprotocol/server-github"}) {
		t.Errorf("goose stdio: %+v", s)
	}
	if s := get("goose-config.yaml", paths.Goose, "remote"); !s.Disabled || s.Headers["Authorization"] != "Bearer x" {
		t.Errorf("goose remote: %+v", s)
	}
	if s := get("zed-settings.json", paths.Zed, "remote-mcp-server"); s.Headers["Authorization"] == "" {
		t.Errorf("zed remote: %+v", s)
	}
	// Gemini CLI expands $NAME and ${NAME}.
	s := get("gemini-settings.json", paths.Gemini, "serverName")
	r, err := s.Resolve(Env{Lookup: func(n string) (string, bool) {
		return map[string]string{"MY_API_TOKEN": "tok-123"}[n], n == "MY_API_TOKEN"
	}})
	if err != nil || r.Env["API_KEY"] != "tok-123" {
		t.Errorf("gemini $NAME: %v %+v", err, r.Env)
	}
	if _, err := s.Resolve(Env{Lookup: func(string) (string, bool) { return "", false }}); !errors.Is(err, ErrReference) {
		t.Errorf("gemini unset $NAME: %v", err)
	}
	// opencode expands {env:NAME}.
	oc, _ := Parse([]byte(`{"mcp": {"a": {"type": "remote", "url": "https://x/{env:REGION}/mcp", "headers": {"K": "Bearer {env:TOK}"}}}}`), "f", paths.Opencode, paths.User, "")
	lookup := func(n string) (string, bool) {
		return map[string]string{"REGION": "eu", "TOK": "tok-abc"}[n], n == "REGION" || n == "TOK"
	}
	if r, err := oc[0].Resolve(Env{Lookup: lookup}); err != nil || r.URL != "https://x/eu/mcp" || r.Headers["K"] != "Bearer tok-abc" {
		t.Errorf("opencode {env:NAME}: %v %+v", err, r)
	}
	if _, err := oc[0].Resolve(Env{Lookup: func(string) (string, bool) { return "", false }}); !errors.Is(err, ErrReference) || !strings.Contains(err.Error(), "{env:REGION}") {
		t.Errorf("opencode unset {env:NAME}: %v", err)
	}
}

// codexVariants are Codex files of the other forms TOML allows for an
// entry: dotted keys, an inline table, a multi-line args array with
// comments, literal strings, no args.
var codexVariants = []string{
	"mcp_servers.dotted.command = \"node\"\nmcp_servers.dotted.args = ['a.js']\n",
	"[mcp_servers]\ninline = { command = \"node\", args = [\"x\"] }\nnoargs = { command = \"deno\" }\n",
	"# top\n[mcp_servers.multi]\ncommand = \"npx\" # the runner\nargs = [\n  # the package\n  \"-y\",\n  'pkg@1', # pinned\n]\n\n[other]\nx = 1\n",
	"[mcp_servers.dotted2]\ncommand.x = 1\n[mcp_servers.empty]\ncommand = '''py'''\nargs = []\n",
	"[mcp_servers.bare]\r\ncommand = \"uvx\"\r\n",
}

// TestNewerHostWrapRoundTrip: wrap --all on every newer host's sample
// (and Codex's other forms) makes each stdio entry launch sonde tap in
// front of its command, changes nothing else, and unwrap gives back the
// file byte for byte.
func TestNewerHostWrapRoundTrip(t *testing.T) {
	type file struct {
		name, host string
		b          []byte
	}
	var files []file
	for _, tc := range newerSamples {
		files = append(files, file{tc.file, tc.host, readSample(t, tc.file)})
	}
	for i, v := range codexVariants {
		files = append(files, file{"codex variant " + string(rune('0'+i)), paths.Codex, []byte(v)})
	}
	for i, v := range gooseVariants {
		files = append(files, file{"goose variant " + string(rune('0'+i)), paths.Goose, []byte(v)})
	}
	o := WrapOptions{Sonde: testSonde, All: true}
	for _, f := range files {
		before, _ := Parse(f.b, "f", f.host, paths.User, "")
		out, changes, err := Wrap(f.b, f.host, paths.User, o)
		if err != nil {
			t.Errorf("%s: wrap: %v", f.name, err)
			continue
		}
		after, problems := Parse(out, "f", f.host, paths.User, "")
		if _, was := Parse(f.b, "f", f.host, paths.User, ""); len(problems) != len(was) {
			t.Errorf("%s: the wrapped file has problems %v:\n%s", f.name, problems, out)
		}
		wrapped := 0
		for i, s := range before {
			if s.Transport != Stdio {
				continue
			}
			wrapped++
			a := after[i]
			label := len(a.Args) > 2 && (a.Args[2] == "--label" || a.Args[2] == "--label="+s.Name)
			if a.Command != testSonde || !slices.Equal(a.Args[:2], []string{"tap", WrapMarker}) || !label || !slices.Equal(a.Args[len(a.Args)-len(s.Args)-1:], append([]string{s.Command}, s.Args...)) {
				t.Errorf("%s: %q wrapped as %q %q", f.name, s.Name, a.Command, a.Args)
			}
		}
		n := 0
		for _, c := range changes {
			if c.State == Wrapped {
				n++
			}
		}
		if n != wrapped || wrapped == 0 {
			t.Errorf("%s: %d entries wrapped, want %d (changes %+v)", f.name, n, wrapped, changes)
		}
		again, _, err := Wrap(out, f.host, paths.User, o)
		if err != nil || !bytes.Equal(again, out) {
			t.Errorf("%s: wrapping twice changed the file (%v)", f.name, err)
		}
		back, _, err := Unwrap(out, f.host, paths.User, o)
		if err != nil || !bytes.Equal(back, f.b) {
			t.Errorf("%s: unwrap is not byte-identical (%v):\n%s\nwant:\n%s", f.name, err, back, f.b)
		}
	}
}

// gooseVariants are Goose files of other YAML forms: flow args, no args,
// quoted commands, indented block items, comments, an empty args list.
var gooseVariants = []string{
	"extensions:\n  a:\n    type: stdio\n    cmd: \"node\"   # quoted\n    args: [x.js, 'y z']\n",
	"extensions:\n  a:\n    cmd: 'deno'\n    type: stdio\n",
	"# top\nextensions:\n    b:\n        args:\n            - -y   # yes\n            - \"pkg@1\"\n        cmd: npx\n        type: stdio\n        envs: {K: v}\nother: 1\n",
	"extensions:\n  e:\n    type: stdio\n    cmd: uvx\n    args: []\n  f: {type: builtin, name: developer}\n",
	"extensions:\r\n  c:\r\n    type: stdio\r\n    cmd: python3\r\n    args:\r\n    - m.py\r\n",
}

// TestHostileTextFiles: a TOML or YAML file that is huge, nested without
// end or not UTF-8 is one clear problem, and wrap refuses it.
func TestHostileTextFiles(t *testing.T) {
	cases := []struct {
		name, want string
		b          []byte
	}{
		{"huge", "more than", []byte("x = \"" + strings.Repeat("a", maxTextFile) + "\"\n")},
		{"deep", "nested", []byte("x = " + strings.Repeat("[", 100000) + "\n")},
		{"not utf-8", "not UTF-8", []byte("[mcp_servers.a]\ncommand = \"\xff\xfe\"\n")},
		{"deep yaml", "nested", []byte("extensions: " + strings.Repeat("[", 5000) + "\n")},
	}
	for _, tc := range cases {
		for _, host := range []string{paths.Codex, paths.Goose} {
			servers, problems := Parse(tc.b, "f", host, paths.User, "")
			if len(servers) != 0 || len(problems) != 1 || !errors.Is(problems[0].Err, ErrSyntax) || !strings.Contains(problems[0].Error(), tc.want) {
				t.Errorf("%s, %s: servers %d, problems %v", tc.name, host, len(servers), problems)
			}
			if out, _, err := Wrap(tc.b, host, paths.User, WrapOptions{Sonde: testSonde, All: true}); err == nil || out != nil {
				t.Errorf("%s, %s: wrap did not refuse", tc.name, host)
			}
		}
	}
	// A YAML alias bomb stops at the node budget.
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nextensions: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	if _, problems := Parse([]byte(bomb), "f", paths.Goose, paths.User, ""); len(problems) != 1 {
		t.Errorf("alias bomb: %v", problems)
	}
}
