package capfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// recordTools records `sonde tools` against the fixture (a session that
// lists the tools).
func recordTools(t *testing.T, fixtureArgs ...string) string {
	t.Helper()
	return recordOK(t, []string{"tools"}, fixtureArgs...)
}

// edit writes a copy of the capture at path with the raw frame text old
// replaced by new (in the capture, a frame's quotes are escaped).
func edit(t *testing.T, path, old, new string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	esc := func(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }
	if !strings.Contains(string(data), esc(old)) {
		t.Fatalf("%s has no %s", path, old)
	}
	out := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(out, []byte(strings.ReplaceAll(string(data), esc(old), esc(new))), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDiffCommand: two real captures of the fixture, one of them with the
// echo tool declared read-only and another description: diff names the
// rug-pull and the description change, the cost shift, and --exit-code
// makes it status 1; a capture compared with itself has no differences.
func TestDiffCommand(t *testing.T) {
	b := recordTools(t)
	a := edit(t, b, `"name":"echo","description":"Returns value`, `"name":"echo","annotations":{"readOnlyHint":true},"description":"Gives value`)
	r := clitest.RunSonde(t, "", "diff", "--exit-code", a, b)
	for _, want := range []string{
		"tool echo: annotations.readOnlyHint changed: true → false  (a read-only tool turned destructive)\n",
		`tool echo: description changed: "Gives value after delay_ms;`,
		"context cost: tool definitions ",
		"  echo: definition ",
	} {
		if r.Code != 1 || !strings.Contains(r.Stdout, want) {
			t.Errorf("diff: %d, want %q in\n%s%s", r.Code, want, r.Stdout, r.Stderr)
		}
	}
	r = clitest.RunSonde(t, "", "diff", "--json", a, b)
	var rep struct {
		Differs bool
		Changes []struct{ Section, Key, Kind, Field, Old, New, Note string }
		Costs   []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 0 || !rep.Differs || len(rep.Changes) != 2 || rep.Changes[0].Note != "a read-only tool turned destructive" || len(rep.Costs) != 1 {
		t.Errorf("diff --json: %d %v %+v\n%s", r.Code, err, rep, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "diff", "--exit-code", b, b)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "no differences\n") {
		t.Errorf("diff of a capture with itself: %d\n%s", r.Code, r.Stdout)
	}
	for _, args := range [][]string{{"diff", b}, {"diff", "--ratio", "0.5", b, b}, {"diff", b, filepath.Join(t.TempDir(), "missing.jsonl")}} {
		if r := clitest.RunSonde(t, "", args...); r.Code != 2 {
			t.Errorf("%v: %d %s", args, r.Code, r.Stderr)
		}
	}
}

// TestDiffCalls: the same call in two real sessions, answered at once and
// after 600ms (the second recorded with delay_ms, which is then taken out
// of its request so that the arguments match): a slower median past the
// default thresholds; with --min-shift 2s, no difference; different
// arguments are calls on one side only.
func TestDiffCalls(t *testing.T) {
	fast := recordCall(t)
	f := clitest.NewFixture(t)
	slow := filepath.Join(t.TempDir(), "slow.jsonl")
	if r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "echo", "--args", `{"value":"hi","delay_ms":600}`, "--record", slow})...); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	r := clitest.RunSonde(t, "", "diff", fast, slow)
	if !strings.Contains(r.Stdout, `echo {"value":"hi"}: only in A (resolved×1)`) || !strings.Contains(r.Stdout, `echo {"delay_ms":600,"value":"hi"}: only in B (resolved×1)`) {
		t.Errorf("different arguments: %s", r.Stdout)
	}
	same := edit(t, slow, `,"delay_ms":600`, ``)
	r = clitest.RunSonde(t, "", "diff", "--exit-code", fast, same)
	if r.Code != 1 || !strings.Contains(r.Stdout, `echo {"value":"hi"}: slower, median `) {
		t.Errorf("slower: %d\n%s", r.Code, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "diff", "--exit-code", "--min-shift", "2s", fast, same)
	if r.Code != 0 || strings.Contains(r.Stdout, "calls:") {
		t.Errorf("--min-shift 2s: %d\n%s", r.Code, r.Stdout)
	}
}

// TestDiffPrompts: prompts are compared by name, field by field: an
// argument that became required, a prompt gone.
func TestDiffPrompts(t *testing.T) {
	f := clitest.NewFixture(t)
	a := filepath.Join(t.TempDir(), "prompts.jsonl")
	if r := clitest.RunSonde(t, "", f.Cmd([]string{"prompts", "--record", a})...); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	b := edit(t, a, `[{"arguments":[{"name":"arg","required":false}],"name":"prompt-1"},`, `[{"arguments":[{"name":"arg","required":true}],"name":"prompt-1"},`)
	b = edit(t, b, `{"arguments":[{"name":"arg","required":true}],"name":"prompt-2"},`, ``)
	r := clitest.RunSonde(t, "", "diff", "--exit-code", a, b)
	want := "prompt prompt-1: arguments[0].required changed: false → true\nprompt prompt-2: removed\n"
	if r.Code != 1 || !strings.HasPrefix(r.Stdout, want) {
		t.Errorf("diff of prompts: %d, want %q at the start of\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
}

// TestDiffNoToolList: against a capture that never listed its tools, diff
// says which side holds no tool list instead of reporting every tool of
// the other side gone and a definition cost of 0 B (#33).
func TestDiffNoToolList(t *testing.T) {
	listed, unlisted := recordTools(t), recordCall(t)
	for _, tc := range []struct{ a, b, want string }{
		{listed, unlisted, "context cost: B holds no tool list (no tools/list answer), so tool definitions are not compared"},
		{unlisted, listed, "context cost: A holds no tool list"},
		{unlisted, unlisted, "context cost: neither capture holds a tool list"},
	} {
		r := clitest.RunSonde(t, "", "diff", tc.a, tc.b)
		if r.Code != 0 || !strings.Contains(r.Stdout, tc.want) || strings.Contains(r.Stdout, ": gone,") || strings.Contains(r.Stdout, ": new,") {
			t.Errorf("diff: %d, want %q in\n%s%s", r.Code, tc.want, r.Stdout, r.Stderr)
		}
	}
	r := clitest.RunSonde(t, "", "diff", "--json", listed, unlisted)
	var rep struct {
		BNoToolList bool `json:"b_no_tool_list"`
		Costs       []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || !rep.BNoToolList || len(rep.Costs) != 0 {
		t.Errorf("diff --json: %v %+v\n%s", err, rep, r.Stdout)
	}
}
