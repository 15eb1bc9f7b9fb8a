package live_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/lint"
)

// TestCheckWhy: a command that is not an MCP server (true exits at once,
// saying nothing) fails with a line that says why: how it exited and what
// it wrote; a program that writes on stdout and stderr has those quoted.
func TestCheckWhy(t *testing.T) {
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true on PATH")
	}
	r := clitest.RunSonde(t, "", "check", "--", trueBin)
	if r.Code != cmdutil.ExitExited || !strings.Contains(r.Stdout, "       why: the server exited (exit code 0) before answering initialize; it wrote nothing on stdout; and nothing on stderr. An MCP server on stdio reads JSON-RPC on stdin") {
		t.Errorf("check -- true: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	r = clitest.RunSonde(t, "", "check", "--json", "--", sh, "-c", "echo hello; echo oops >&2; exit 3")
	var rep checkJSON
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	var steps []struct{ Why string }
	var raw struct {
		Steps json.RawMessage `json:"steps"`
	}
	_ = json.Unmarshal([]byte(r.Stdout), &raw)
	_ = json.Unmarshal(raw.Steps, &steps)
	if r.Code != cmdutil.ExitExited || len(steps) != 1 || steps[0].Why != "the server exited (exit code 3) before answering initialize; it wrote 1 line on stdout that is not JSON-RPC (the first: hello); its stderr ends with: oops" {
		t.Errorf("check -- sh: %d %+v\n%s", r.Code, steps, r.Stdout)
	}
}

// TestCheckContracts: each contract holds or fails against the live
// fixture, and a broken one is exit status 1 naming it.
func TestCheckContracts(t *testing.T) {
	n := len(fixtureTools(t))
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"check", "--expect-tool", "echo", "--forbid-tool", "shell", "--max-duration", "1m", "--expect-tools-count", strconv.Itoa(n)})...)
	for _, want := range []string{"sonde check: ok\n", "  ok   expect-tool       listed: echo\n", "  ok   forbid-tool       not listed: shell\n", "  ok   max-duration      every request within 1m0s\n", "  ok   expect-tools-count " + strconv.Itoa(n) + " tools\n"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("holding contracts: %d, want %q in\n%s%s", r.Code, want, r.Stdout, r.Stderr)
		}
	}
	f = clitest.NewFixture(t)
	r = clitest.RunSonde(t, "", f.Cmd([]string{"check", "--expect-tool", "nope", "--forbid-tool", "crash", "--expect-tools-count", "2"})...)
	for _, want := range []string{"sonde check: FAILED\n", `  FAIL expect-tool       tool "nope" is not listed (--expect-tool)`, `  FAIL forbid-tool       tool "crash" is listed (--forbid-tool)`, "  FAIL expect-tools-count " + strconv.Itoa(n) + " tools listed, --expect-tools-count 2"} {
		if r.Code != cmdutil.ExitToolError || !strings.Contains(r.Stdout, want) {
			t.Errorf("broken contracts: %d, want %q in\n%s", r.Code, want, r.Stdout)
		}
	}
	clitest.CheckErrLine(t, r.Stderr, "sonde: check failed: expect-tool: tool \"nope\" is not listed (--expect-tool)\n")
	// Every request takes more than a nanosecond.
	f = clitest.NewFixture(t)
	r = clitest.RunSonde(t, "", f.Cmd([]string{"check", "--json", "--max-duration", "1ns"})...)
	var rep struct {
		OK      bool
		Results []struct{ Rule, Message string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != cmdutil.ExitToolError || rep.OK || len(rep.Results) < 3 || rep.Results[0].Rule != "max-duration" || !strings.HasPrefix(rep.Results[0].Message, "initialize id 1 took ") {
		t.Errorf("--max-duration 1ns: %d %v %+v\n%s", r.Code, err, rep, r.Stdout)
	}
}

// TestCheckGates: check lints its own session; --fail-on must fails on a
// server that writes noise on stdout, --format junit has a testsuite with
// a testcase per rule, the steps and the contracts asked for, and a SARIF
// log of a recorded check locates its results in the capture.
func TestCheckGates(t *testing.T) {
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"check", "--fail-on", "must"}, "--fault", "stdout-noise")...)
	if r.Code != cmdutil.ExitToolError || !strings.Contains(r.Stdout, "  FAIL not-json          3 results; the first: line on stdout is not JSON: servers must log to stderr\n") {
		t.Errorf("--fail-on must with noise: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	f = clitest.NewFixture(t)
	r = clitest.RunSonde(t, "", f.Cmd([]string{"check", "--format", "junit", "--fail-on", "must", "--expect-tool", "echo"}, "--fault", "stdout-noise")...)
	var root struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(r.Stdout), &root); err != nil || r.Code != cmdutil.ExitToolError || len(root.Suites) != 1 {
		t.Fatalf("junit: %d %v\n%s", r.Code, err, r.Stdout)
	}
	failed := map[string]bool{}
	for _, c := range root.Suites[0].Cases {
		failed[c.Name] = c.Failure != nil
	}
	if len(root.Suites[0].Cases) != len(lint.Rules())+3+2 || !failed["not-json"] || failed["check-step"] || failed["expect-tool"] || failed["request-timeout"] {
		t.Errorf("junit cases: %v\n%s", failed, r.Stdout)
	}
	rec := filepath.Join(t.TempDir(), "c.jsonl")
	f = clitest.NewFixture(t)
	r = clitest.RunSonde(t, "", f.Cmd([]string{"check", "--format", "sarif", "--record", rec}, "--fault", "stdout-noise")...)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &log); err != nil || r.Code != 0 || len(log.Runs[0].Results) != 3 {
		t.Fatalf("sarif: %d %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for _, res := range log.Runs[0].Results {
		loc := res.Locations[0].PhysicalLocation
		if res.RuleID != "not-json" || loc.ArtifactLocation.URI != rec || loc.Region.StartLine < 2 || loc.Region.StartLine > len(lines) ||
			!strings.Contains(lines[loc.Region.StartLine-1], `"verdict":"malformed"`) {
			t.Errorf("result %+v", res)
		}
	}
}

// TestCheckDrift: a baseline where echo is read-only, accepted from a
// recorded check; a live check of the fixture (echo without hints) with
// --fail-on drift names the rug-pull and fails, and passes without it.
func TestCheckDrift(t *testing.T) {
	t.Setenv("SONDE_HOME", t.TempDir())
	rec := filepath.Join(t.TempDir(), "c.jsonl")
	f := clitest.NewFixture(t)
	if r := clitest.RunSonde(t, "", f.Cmd([]string{"check", "--record", rec})...); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	trusted := filepath.Join(t.TempDir(), "trusted.jsonl")
	text := strings.ReplaceAll(string(data), `\"name\":\"echo\",`, `\"name\":\"echo\",\"annotations\":{\"readOnlyHint\":true},`)
	if err := os.WriteFile(trusted, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := clitest.RunSonde(t, "", "baseline", "accept", trusted); r.Code != 0 {
		t.Fatal(r.Stdout, r.Stderr)
	}
	f = clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"check", "--fail-on", "drift"})...)
	if r.Code != cmdutil.ExitToolError || !strings.Contains(r.Stdout, "  FAIL tool-drift        tool echo: a read-only tool turned destructive (annotations.readOnlyHint true → false)\n") {
		t.Errorf("check --fail-on drift: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	f = clitest.NewFixture(t)
	if r := clitest.RunSonde(t, "", f.Cmd([]string{"check"})...); r.Code != 0 {
		t.Errorf("check without --fail-on drift: %d\n%s", r.Code, r.Stdout)
	}
}
