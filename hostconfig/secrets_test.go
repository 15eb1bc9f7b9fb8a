package hostconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// TestResolveSecrets: Secrets holds every value a reference brought in from
// outside the file, once each: environment variables (${env:NAME}, ${NAME},
// ${NAME:-default} when set) and typed inputs, wherever they land (command,
// args, env, url, headers); not the editor's variables, a default written
// in the file, a pickString's choice, or a value shorter than MinSecretLen.
func TestResolveSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	text := `{"inputs": [
		{"type": "promptString", "id": "note", "description": "Note"},
		{"type": "pickString", "id": "tier", "description": "Tier", "options": ["free-tier", "team-tier"]}
	], "mcpServers": {
		"s": {"command": "${env:BIN_DIR}/server", "args": ["--key=${env:API_KEY}", "${KEY2}", "${UNSET:-written-default}", "${userHome}", "${input:note}", "${input:tier}", "${env:API_KEY}", "${env:SHORT}"],
		      "env": {"TOKEN": "${env:ENV_TOKEN}"}},
		"h": {"url": "https://example.com/mcp?k=${env:URL_KEY}", "headers": {"X-Key": "${env:HEADER_KEY}"}}
	}}`
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	servers, problems := ReadFile(file, HostFile, paths.User, dir)
	if len(problems) > 0 {
		t.Fatal(problemLines(t, problems))
	}
	env := Env{
		Lookup: lookup(map[string]string{"BIN_DIR": "/opt/bin-dir", "API_KEY": "key-aaaa", "KEY2": "key-bbbb", "ENV_TOKEN": "key-cccc", "SHORT": "abc", "URL_KEY": "key-dddd", "HEADER_KEY": "key-eeee"}),
		Home:   "/home/ada", Workspace: dir,
		Inputs: map[string]string{"note": "typed-note", "tier": "team-tier"},
	}
	for name, want := range map[string][]string{
		"s": {"/opt/bin-dir", "key-aaaa", "key-bbbb", "typed-note", "key-cccc"},
		"h": {"key-dddd", "key-eeee"},
	} {
		s, err := Find(servers, name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(env)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Secrets(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: secrets %q, want %q", name, got, want)
		}
	}
}
