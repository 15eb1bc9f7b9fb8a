package capfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// recordCall records `sonde call echo` against the fixture with its args.
func recordCall(t *testing.T, fixtureArgs ...string) string {
	t.Helper()
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "echo", "--args", `{"value":"hi"}`, "--record", path}, fixtureArgs...)...)
	if r.Code != 0 {
		t.Fatalf("call: %d %s", r.Code, r.Stderr)
	}
	return path
}

// TestLintCommand: a capture of a noisy server is exit status 1 with the
// frame shown; a clean one is 0; --json carries the same findings.
func TestLintCommand(t *testing.T) {
	noisy := recordCall(t, "--fault", "stdout-noise")
	r := clitest.RunSonde(t, "", "lint", noisy)
	if r.Code != 1 || !strings.Contains(r.Stdout, "not-json\n  line on stdout is not JSON: servers must log to stderr\n  fixture noise: this is not JSON") ||
		!strings.Contains(r.Stdout, "2 findings: 2 not-json") || !strings.Contains(r.Stdout, "spec: 2511/basic/transports.mdx") {
		t.Errorf("lint of a noisy session: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "lint", "--json", noisy)
	var rep struct {
		File     string
		Findings []struct {
			Rule, Dir, Preview, Detail string
			Seq                        uint64
			T                          int64
		}
		Counts map[string]int
		Rules  []struct{ Name, Spec string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 1 {
		t.Fatalf("lint --json: %d %v\n%s", r.Code, err, r.Stdout)
	}
	if len(rep.Findings) != 2 || rep.Counts["not-json"] != 2 || len(rep.Rules) != 1 || rep.File != noisy {
		t.Errorf("lint --json: %+v", rep)
	}
	for _, f := range rep.Findings {
		if f.Rule != "not-json" || f.Dir != "in" || f.Seq == 0 || f.T <= 0 || f.Preview != "fixture noise: this is not JSON" {
			t.Errorf("finding %+v", f)
		}
	}
	r = clitest.RunSonde(t, "", "lint", recordCall(t))
	if r.Code != 0 || r.Stdout != "no protocol violations\n" {
		t.Errorf("lint of a clean session: %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestLintRules(t *testing.T) {
	r := clitest.RunSonde(t, "", "lint", "--rules")
	if r.Code != 0 || strings.Count(r.Stdout, "\n  spec: ") != 16 || !strings.Contains(r.Stdout, "late-response (should): ") {
		t.Errorf("lint --rules: %d\n%s", r.Code, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "lint", "--rules", "--json")
	var rules []struct{ Name, Level, Summary, Spec string }
	if err := json.Unmarshal([]byte(r.Stdout), &rules); err != nil || len(rules) != 16 || rules[0].Name != "not-json" {
		t.Errorf("lint --rules --json: %v %s", err, r.Stdout)
	}
	if r := clitest.RunSonde(t, "", "lint", "--rules", "x.jsonl"); r.Code != 2 {
		t.Errorf("lint --rules FILE: %d", r.Code)
	}
}

// TestCaptureErrors: every command that reads a capture says which file
// and why it cannot read it, with exit status 2; a cut last line is a
// warning.
func TestCaptureErrors(t *testing.T) {
	dir := t.TempDir()
	good := recordCall(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.jsonl", lines[0]+lines[1]+"{not json\n"+strings.Join(lines[2:], ""))
	cut := write("cut.jsonl", string(data[:len(data)-len(lines[len(lines)-2])/2-1]))
	for _, cmd := range []string{"lint", "stats", "export"} {
		for _, tc := range []struct{ path, want string }{
			{filepath.Join(dir, "missing.jsonl"), "sonde: capture " + filepath.Join(dir, "missing.jsonl") + ": no such file or directory\n"},
			{dir, "sonde: capture " + dir + ": is a directory\n"},
			{write("readme.md", "# not a capture\n"), ": line 1: not a sonde capture: the first line is not a JSON header"},
			{write("empty.jsonl", ""), ": line 1: not a sonde capture: the file is empty"},
			{write("newer.jsonl", regexp.MustCompile(`"version":"[0-9.]+"`).ReplaceAllString(lines[0], `"version":"9.0"`)), ": line 1: capture format is newer than this sonde: version 9.0"},
			{bad, "bad.jsonl: line 3: bad capture record: "},
		} {
			r := clitest.RunSonde(t, "", cmd, tc.path)
			if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
				t.Errorf("%s %s: %d %q %q, want 2 and %q", cmd, tc.path, r.Code, r.Stdout, r.Stderr, tc.want)
			}
		}
		r := clitest.RunSonde(t, "", cmd, cut)
		if r.Code != 0 || !strings.Contains(r.Stderr, "cut.jsonl: warning: capture line") || !strings.Contains(r.Stderr, "is incomplete") {
			t.Errorf("%s of a cut capture: %d %q", cmd, r.Code, r.Stderr)
		}
		if r := clitest.RunSonde(t, "", cmd); r.Code != 2 || !strings.Contains(r.Stderr, cmd+" takes one capture FILE") {
			t.Errorf("%s without a file: %d %q", cmd, r.Code, r.Stderr)
		}
	}
}

func TestStatsCommand(t *testing.T) {
	path := recordCall(t)
	r := clitest.RunSonde(t, "", "stats", path)
	if r.Code != 0 || !strings.Contains(r.Stdout, "tools/call echo         1         0") || !strings.Contains(r.Stdout, "at most 1 in flight") {
		t.Errorf("stats: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "stats", "--json", "--bucket", "1s", path)
	var rep struct {
		Requests int
		Methods  []struct {
			Method, Tool  string
			Count, Errors int
			P50, Max      int64
		}
		Concurrency struct {
			Max      int
			Bucket   int64
			InFlight []int `json:"in_flight"`
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 0 {
		t.Fatalf("stats --json: %d %v %s", r.Code, err, r.Stdout)
	}
	if rep.Requests != 2 || len(rep.Methods) != 2 || rep.Methods[1].Tool != "echo" || rep.Methods[1].P50 <= 0 ||
		rep.Concurrency.Max != 1 || rep.Concurrency.Bucket != 1e9 || len(rep.Concurrency.InFlight) == 0 {
		t.Errorf("stats --json: %+v", rep)
	}
	if r := clitest.RunSonde(t, "", "stats", "--bucket", "-1s", path); r.Code != 2 {
		t.Errorf("negative bucket: %d", r.Code)
	}
}

func TestExportCommand(t *testing.T) {
	path := recordCall(t)
	r := clitest.RunSonde(t, "", "export", "--mermaid", path)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "sequenceDiagram\n    participant C as sonde\n    participant S as sonde-fixture\n") ||
		!strings.Contains(r.Stdout, "    C->>S: tools/call echo [id 2]\n") || !strings.Contains(r.Stdout, "    S-->>C: result [id 2] ") {
		t.Errorf("export --mermaid: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "export", "--format", "text", "--width", "70", "--to", "#3", path)
	if r.Code != 0 || strings.Contains(r.Stdout, "tools/call") || !strings.Contains(r.Stdout, "│─ initialize [id 1] ─") || !strings.Contains(r.Stdout, "window from the start to event 3: events 1 to 3") {
		t.Errorf("export --format text: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, args := range [][]string{
		{"--from", "soon"}, {"--to", "-1s"}, {"--format", "svg"}, {"--mermaid", "--format", "text"}, {"--width", "10"},
	} {
		if r := clitest.RunSonde(t, "", append(append([]string{"export"}, args...), path)...); r.Code != 2 || r.Stdout != "" {
			t.Errorf("export %v: %d %q", args, r.Code, r.Stderr)
		}
	}
}
