package hostconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// approvals reads a testdata .mcp.json, sets the approvals from the
// settings of its folder and home, and returns "name:approval" per server.
func approvals(t *testing.T, mcpJSON, home string) ([]string, []Problem) {
	t.Helper()
	servers, problems := ReadFile(mcpJSON, paths.ClaudeCode, paths.Project, filepath.Dir(mcpJSON))
	if len(problems) > 0 {
		t.Fatal(problemLines(t, problems))
	}
	problems = SetApprovals(servers, home)
	var got []string
	for _, s := range servers {
		got = append(got, s.Name+":"+string(s.Approval))
	}
	return got, problems
}

// TestApprovals: Claude Code's three settings files add up their lists; a
// rejection wins over an approval, in any file; enableAllProjectMcpServers
// is the one of the file of highest precedence (here the local file's
// false over the user's true), so a server in no list is pending.
func TestApprovals(t *testing.T) {
	got, problems := approvals(t, abs(t, "approvals/project/.mcp.json"), abs(t, "approvals/home"))
	want := []string{"docs:enabled", "search:disabled", "db:disabled", "shell:enabled", "fresh:pending"}
	if !reflect.DeepEqual(got, want) || len(problems) > 0 {
		t.Errorf("approvals %q problems %q, want %q", got, problemLines(t, problems), want)
	}
	a, _ := ReadClaudeApprovals(ClaudeSettingsFiles(abs(t, "approvals/home"), abs(t, "approvals/project")))
	if want := []string{
		abs(t, "approvals/home/.claude/settings.json"),
		abs(t, "approvals/project/.claude/settings.json"),
		abs(t, "approvals/project/.claude/settings.local.json"),
	}; !reflect.DeepEqual(a.Files, want) {
		t.Errorf("files used %q, want %q", a.Files, want)
	}
	// Without the local file, the user's enableAllProjectMcpServers holds.
	a, _ = ReadClaudeApprovals(ClaudeSettingsFiles(abs(t, "approvals/home"), abs(t, "approvals/project"))[:2])
	if a.Of("fresh") != ApprovalEnabled || a.Of("db") != ApprovalDisabled {
		t.Errorf("user and shared only: fresh %s db %s, want enabled, disabled", a.Of("fresh"), a.Of("db"))
	}
	// enableAllProjectMcpServers alone; an empty settings file is skipped.
	got, problems = approvals(t, abs(t, "approvals/all/.mcp.json"), "")
	if want := []string{"one:enabled", "off:disabled"}; !reflect.DeepEqual(got, want) || len(problems) > 0 {
		t.Errorf("enableAll: %q %q, want %q", got, problemLines(t, problems), want)
	}
	for a, text := range map[Approval]string{ApprovalEnabled: "enabled in Claude Code", ApprovalDisabled: "disabled in Claude Code", ApprovalPending: "not yet approved in Claude Code", "": ""} {
		if a.Text() != text {
			t.Errorf("%q.Text() = %q, want %q", a, a.Text(), text)
		}
	}
}

// TestApprovalsBroken: a settings file that is not valid JSON, or whose
// approval keys have the wrong type, is a problem naming it and why, and
// is not used; the server is still listed (here pending).
func TestApprovalsBroken(t *testing.T) {
	got, problems := approvals(t, abs(t, "approvals/broken/.mcp.json"), "")
	if want := []string{"x:pending"}; !reflect.DeepEqual(got, want) {
		t.Errorf("approvals %q, want %q", got, want)
	}
	checkLines(t, "problems", problemLines(t, problems), []string{
		`approvals/broken/.claude/settings.json: not valid JSON: line 3, column 1: invalid character '}' looking for beginning of object key string`,
		`approvals/broken/.claude/settings.local.json: wrong shape: "enabledMcpjsonServers" is a string, want an array of strings; "disabledMcpjsonServers" is an array, want an array of strings; "enableAllProjectMcpServers" is a string, want a boolean (the file is not used, as Claude Code ignores it)`,
	})
	if len(problems) == 2 && (!errors.Is(problems[0].Err, ErrSyntax) || !errors.Is(problems[1].Err, ErrShape)) {
		t.Errorf("problems do not wrap ErrSyntax, ErrShape: %v; %v", problems[0].Err, problems[1].Err)
	}
}

// TestApprovalsOnly: only Claude Code's project servers get an approval;
// a settings file that cannot be read is reported once, however many
// projects read it.
func TestApprovalsOnly(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude", "settings.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	servers := []Server{
		{Name: "a", Host: paths.ClaudeCode, Scope: "project", File: "/p1/.mcp.json"},
		{Name: "b", Host: paths.ClaudeCode, Scope: "project", File: "/p2/.mcp.json"},
		{Name: "c", Host: paths.ClaudeCode, Scope: "user", File: filepath.Join(home, ".claude.json")},
		{Name: "d", Host: paths.ClaudeCode, Scope: ScopeLocal, File: filepath.Join(home, ".claude.json"), Project: "/p1"},
		{Name: "e", Host: paths.Cursor, Scope: "project", File: "/p1/.cursor/mcp.json"},
	}
	problems := SetApprovals(servers, home)
	var got []string
	for _, s := range servers {
		got = append(got, s.Name+":"+string(s.Approval))
	}
	if want := []string{"a:pending", "b:pending", "c:", "d:", "e:"}; !reflect.DeepEqual(got, want) {
		t.Errorf("approvals %q, want %q", got, want)
	}
	want := filepath.Join(home, ".claude", "settings.json") + ": cannot read: is a directory"
	if len(problems) != 1 || problems[0].Error() != want || !errors.Is(problems[0].Err, ErrRead) {
		t.Errorf("problems %q, want once %q", problemLines(t, problems), want)
	}
}
