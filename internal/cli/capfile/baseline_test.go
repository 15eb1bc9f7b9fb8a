package capfile_test

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestBaselineDrift: a baseline accepted from a capture where echo is
// read-only; the fixture's real echo (no hints: destructive by default) is
// then drift that lint --fail-on drift names as a rug-pull, exit status 1,
// in text, JUnit and SARIF; show lists it, reset forgets it, and drift is
// then not checked (skipped, exit 0).
func TestBaselineDrift(t *testing.T) {
	t.Setenv("SONDE_HOME", t.TempDir())
	real := recordTools(t)
	trusted := edit(t, real, `"name":"echo",`, `"name":"echo","annotations":{"readOnlyHint":true},`)
	r := clitest.RunSonde(t, "", "baseline", "accept", trusted)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "baseline sonde-fixture: 9 tools accepted from ") {
		t.Fatalf("accept: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "lint", "--fail-on", "drift", trusted)
	if r.Code != 0 {
		t.Errorf("lint of the trusted capture: %d\n%s", r.Code, r.Stdout)
	}
	const pull = "tool echo: a read-only tool turned destructive (annotations.readOnlyHint true → false)"
	r = clitest.RunSonde(t, "", "lint", "--fail-on", "drift", real)
	if r.Code != 1 || !strings.Contains(r.Stdout, "  tool-drift  session 1, line ") || !strings.Contains(r.Stdout, pull) {
		t.Errorf("lint --fail-on drift: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "lint", "--fail-on", "drift", "--format", "junit", real)
	if r.Code != 1 || !strings.Contains(r.Stdout, `<testcase name="tool-drift" classname="sonde.lint" time="0">`) || !strings.Contains(r.Stdout, `<failure message="1 result: `+pull) {
		t.Errorf("junit: %d\n%s", r.Code, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "lint", "--fail-on", "must", "--label", "other", "--format", "sarif", real)
	if r.Code != 0 || strings.Contains(r.Stdout, "tool-drift") {
		t.Errorf("drift not asked for: %d\n%s", r.Code, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "baseline", "show")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "sonde-fixture  9 tools  accepted ") {
		t.Errorf("show: %d %s", r.Code, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "baseline", "show", "sonde-fixture")
	if r.Code != 0 || !strings.Contains(r.Stdout, "\n  echo  (") {
		t.Errorf("show label: %d %s", r.Code, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "baseline", "accept", real)
	if r.Code != 0 || !strings.Contains(r.Stdout, "it replaces the baseline of ") || !strings.Contains(r.Stdout, ": 1 change\n") {
		t.Errorf("accept again: %d %s", r.Code, r.Stdout)
	}
	if r = clitest.RunSonde(t, "", "lint", "--fail-on", "drift", real); r.Code != 0 {
		t.Errorf("after accepting the change: %d %s", r.Code, r.Stdout)
	}
	if r = clitest.RunSonde(t, "", "baseline", "reset", "sonde-fixture"); r.Code != 0 {
		t.Errorf("reset: %d %s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "lint", "--fail-on", "drift", real)
	if r.Code != 0 || !strings.Contains(r.Stdout, `tool-drift  session 1  not checked: no baseline accepted for "sonde-fixture"`) {
		t.Errorf("no baseline: %d %s", r.Code, r.Stdout)
	}
	for _, args := range [][]string{{"baseline", "reset", "sonde-fixture"}, {"baseline", "show", "nope"}} {
		if r := clitest.RunSonde(t, "", args...); r.Code != 1 || !strings.Contains(r.Stderr, "no baseline accepted") {
			t.Errorf("%v: %d %s", args, r.Code, r.Stderr)
		}
	}
	for _, args := range [][]string{{"baseline"}, {"baseline", "accept"}, {"baseline", "accept", recordCall(t)}, {"baseline", "drop", "x"}} {
		if r := clitest.RunSonde(t, "", args...); r.Code != 2 {
			t.Errorf("%v: %d %s", args, r.Code, r.Stderr)
		}
	}
}
