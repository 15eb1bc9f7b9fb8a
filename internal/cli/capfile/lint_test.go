package capfile_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/lint"
)

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
	if r.Code != 0 || strings.Count(r.Stdout, "\n  spec: ") != len(lint.Rules()) || !strings.Contains(r.Stdout, "late-response (should): ") {
		t.Errorf("lint --rules: %d\n%s", r.Code, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "lint", "--rules", "--json")
	var rules []struct{ Name, Level, Summary, Spec string }
	if err := json.Unmarshal([]byte(r.Stdout), &rules); err != nil || len(rules) != len(lint.Rules()) || rules[0].Name != "not-json" {
		t.Errorf("lint --rules --json: %v %s", err, r.Stdout)
	}
	if r := clitest.RunSonde(t, "", "lint", "--rules", "x.jsonl"); r.Code != 2 {
		t.Errorf("lint --rules FILE: %d", r.Code)
	}
}

// TestLintFormats: --format junit and sarif write the findings of a real
// capture; --fail-on decides the exit status; a bad --format or --fail-on
// is a usage error.
func TestLintFormats(t *testing.T) {
	noisy := recordCall(t, "--fault", "stdout-noise")
	r := clitest.RunSonde(t, "", "lint", "--format", "junit", noisy)
	if r.Code != 1 || !strings.HasPrefix(r.Stdout, "<?xml") || !strings.Contains(r.Stdout, `<testcase name="not-json" classname="sonde.lint"`) ||
		!strings.Contains(r.Stdout, `failures="1"`) {
		t.Errorf("junit: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "lint", "--format", "sarif", "--fail-on", "none", noisy)
	var log struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID, Level string
				Locations     []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &log); err != nil || r.Code != 0 {
		t.Fatalf("sarif --fail-on none: %d %v\n%s", r.Code, err, r.Stdout)
	}
	res := log.Runs[0].Results
	if len(res) != 2 || res[0].RuleID != "not-json" || res[0].Level != "warning" || res[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != noisy || res[0].Locations[0].PhysicalLocation.Region.StartLine < 2 {
		t.Errorf("sarif results: %+v", res)
	}
	r = clitest.RunSonde(t, "", "lint", "--fail-on", "should", noisy)
	if r.Code != 0 || !strings.Contains(r.Stdout, "2 findings: 2 not-json") {
		t.Errorf("--fail-on should with MUST findings: %d\n%s", r.Code, r.Stdout)
	}
	for _, args := range [][]string{{"--format", "xml"}, {"--fail-on", "bogus"}, {"--json", "--format", "sarif"}} {
		if r := clitest.RunSonde(t, "", append(append([]string{"lint"}, args...), noisy)...); r.Code != 2 {
			t.Errorf("%v: %d %s", args, r.Code, r.Stderr)
		}
	}
}
