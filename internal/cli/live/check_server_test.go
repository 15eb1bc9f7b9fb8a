package live_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestCheckMaxServerDuration: against the modern fixture, check --call
// confirm runs an MRTR chain (input_required, then the retry); with
// --max-server-duration over what it takes the run passes, with 1ns it
// fails naming the chain as one call, its rounds summed. A slow echo
// (delay_ms 300) over a 100ms bound fails naming tools/call echo.
func TestCheckMaxServerDuration(t *testing.T) {
	yes := filepath.Join(t.TempDir(), "yes.json")
	if err := os.WriteFile(yes, []byte(`{"action":"accept","content":{"confirm":true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(bound string, calls ...string) (clitest.Result, []struct{ Rule, Message string }) {
		args := []string{"check", "--json", "--era", "modern", "--elicit-reply", yes, "--max-server-duration", bound}
		for _, c := range calls {
			args = append(args, "--call", c)
		}
		f := clitest.NewFixture(t)
		r := clitest.RunSonde(t, "", f.Cmd(args, "--era", "modern")...)
		var rep struct {
			Steps []struct {
				Step string
				OK   bool
			}
			Results []struct{ Rule, Message string }
		}
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatalf("%v\n%s%s", err, r.Stdout, r.Stderr)
		}
		if n := len(rep.Steps); n != 2+len(calls) || !rep.Steps[n-1].OK {
			t.Fatalf("steps %+v\n%s", rep.Steps, r.Stdout)
		}
		return r, rep.Results
	}
	if r, res := run("1h", "confirm"); r.Code != 0 || len(res) != 0 {
		t.Errorf("--max-server-duration 1h: %d %+v\n%s", r.Code, res, r.Stderr)
	}
	r, res := run("1ns", "confirm")
	chains := 0
	for _, x := range res {
		if x.Rule != "max-server-duration" {
			t.Errorf("result %+v", x)
		}
		if strings.HasPrefix(x.Message, "tools/call confirm (MRTR chain, 2 rounds, resolved): the server worked ") {
			chains++
		}
		if strings.HasPrefix(x.Message, "tools/call confirm id") {
			t.Errorf("a round of the chain held alone: %s", x.Message)
		}
	}
	if r.Code != cmdutil.ExitToolError || chains != 1 {
		t.Errorf("--max-server-duration 1ns: %d, %d chains in %+v", r.Code, chains, res)
	}
	r, res = run("100ms", `echo={"value":"x","delay_ms":300}`)
	echo := slices.ContainsFunc(res, func(x struct{ Rule, Message string }) bool {
		return strings.HasPrefix(x.Message, "tools/call echo id 3: the server took ")
	})
	if r.Code != cmdutil.ExitToolError || !echo {
		t.Errorf("slow echo: %d %+v", r.Code, res)
	}
}

// TestCheckAppVisibility: check --call runs the lint rules on the call
// live: against fixture --apps, calling the app-only refresh_chart (sonde
// declares no MCP Apps extension) fails --fail-on must with
// app-tool-visibility; calling show_chart passes.
func TestCheckAppVisibility(t *testing.T) {
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"check", "--fail-on", "must", "--call", "show_chart"}, "--apps")...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "  ok   call show_chart") {
		t.Errorf("show_chart: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	f = clitest.NewFixture(t)
	r = clitest.RunSonde(t, "", f.Cmd([]string{"check", "--fail-on", "must", "--call", "refresh_chart"}, "--apps")...)
	if r.Code != cmdutil.ExitToolError || !strings.Contains(r.Stdout, `  FAIL app-tool-visibility tools/call "refresh_chart": its _meta.ui.visibility is [app] (hidden from the model), and the client's initialize did not declare io.modelcontextprotocol/ui`) {
		t.Errorf("refresh_chart: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestCheckCallUsage: a --call whose ARGS is not a JSON object, or with no
// tool name, is a usage error before anything starts.
func TestCheckCallUsage(t *testing.T) {
	for _, c := range []string{`echo={"value":`, `echo=[1]`, `={}`} {
		r := clitest.RunSonde(t, "", "check", "--call", c, "--", "unused-server")
		if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "--call") {
			t.Errorf("--call %s: %d %s", c, r.Code, r.Stderr)
		}
	}
}
