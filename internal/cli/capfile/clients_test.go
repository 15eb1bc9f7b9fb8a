package capfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// tapInto runs sonde tap in front of the fixture, in-process, into the
// sessions folder of SONDE_HOME, with the host's lines as its stdin, and
// returns the session file it wrote.
func tapInto(t *testing.T, label string, lines ...string) string {
	t.Helper()
	fx := clitest.NewFixture(t)
	r := clitest.RunSonde(t, strings.Join(lines, "\n")+"\n", append([]string{"tap", "--label", label, "--"}, fx.Argv()...)...)
	if r.Code != 0 {
		t.Fatalf("tap: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	files, _ := filepath.Glob(filepath.Join(os.Getenv("SONDE_HOME"), "sessions", label+"-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files of %s: %v", label, files)
	}
	return files[0]
}

// TestClientsCommand: two real taps of the fixture by one host (a call
// cancelled and sent again under a new id, calls in flight together) and
// one by another; sonde clients reads the sessions folder, or the
// sessions named, as a table, JSON and Markdown.
func TestClientsCommand(t *testing.T) {
	for _, kv := range clitest.ChildEnv() { // the server gets the tap's environment
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("SONDE_HOME", t.TempDir())
	if r := clitest.RunSonde(t, "", "clients"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "no tapped sessions") {
		t.Errorf("an empty sessions folder: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	initA := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"host-a","version":"1.2"}}}`
	initB := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host-b","version":"7"}}}`
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	slow := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"value":"v","delay_ms":60000},"_meta":{"progressToken":` + id + `}}}`
	}
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timeout"}}`
	a1 := tapInto(t, "first", initA, initialized, slow("2"), cancel, slow("3"), slow("4"))
	tapInto(t, "second", initA, initialized)
	tapInto(t, "third", initB, initialized, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)

	r := clitest.RunSonde(t, "", "clients")
	clitest.CheckRun(t, r, 0, "")
	for _, want := range []string{
		"                  host-a             host-b\n                  1.2                7\nsessions          2                  1\n",
		"retries           1 after cancel     no\n                  1 unanswered\n",
		// initialize may still be in flight too: all the lines come at once
		"parallel calls    yes, up to ",
		"progress tokens   3 of 5 requests    no\n",
		"capabilities      roots.listChanged  none\n",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the table lacks\n%s\nin\n%s", want, r.Stdout)
		}
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if len(l) > 80 {
			t.Errorf("wider than 80: %q", l)
		}
	}

	// One session named by its id's prefix, as JSON.
	id := strings.TrimSuffix(filepath.Base(a1), ".jsonl")
	r = clitest.RunSonde(t, "", "clients", "--json", id[:len("first-")+4])
	clitest.CheckRun(t, r, 0, "")
	var got struct {
		Hosts []struct {
			Host      string   `json:"host"`
			Sessions  []string `json:"sessions"`
			Requests  int      `json:"requests"`
			Retries   int      `json:"retries"`
			Cancelled int      `json:"retries_after_cancel"`
			Retried   []struct {
				ID, Of, After string
			} `json:"retried"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || len(got.Hosts) != 1 {
		t.Fatalf("--json: %v\n%s", err, r.Stdout)
	}
	if h := got.Hosts[0]; h.Host != "host-a" || len(h.Sessions) != 1 || h.Sessions[0] != id || h.Requests != 4 || h.Retries != 2 || h.Cancelled != 1 || len(h.Retried) != 2 ||
		h.Retried[0].ID != "3" || h.Retried[0].Of != "2" || h.Retried[0].After != "cancel" || h.Retried[1].After != "unanswered" {
		t.Errorf("--json: %+v", h)
	}

	r = clitest.RunSonde(t, "", "clients", "--markdown", a1)
	clitest.CheckRun(t, r, 0, "")
	if !strings.HasPrefix(r.Stdout, "| behaviour | host-a 1.2 |\n|---|---|\n| sessions | 1 |\n") || !strings.Contains(r.Stdout, "| retries | 1 after cancel<br>1 unanswered |\n") {
		t.Errorf("--markdown:\n%s", r.Stdout)
	}

	clitest.CheckRun(t, clitest.RunSonde(t, "", "clients", "--json", "--markdown"), 2, "sonde: --json and --markdown cannot be used together\n")
	missing := filepath.Join(t.TempDir(), "none.jsonl")
	clitest.CheckRun(t, clitest.RunSonde(t, "", "clients", missing), 2, "sonde: capture "+missing+": no such file or directory\n")
}
