package picker

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	keyEnter = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyEsc   = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyDown  = tea.KeyPressMsg{Code: tea.KeyDown}
	keyUp    = tea.KeyPressMsg{Code: tea.KeyUp}
	keyBack  = tea.KeyPressMsg{Code: tea.KeyBackspace}
	keyCtrlC = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
)

func press(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(press(r))
	}
}

var items = []Item{
	{Name: "filesystem", Where: "Claude Desktop · user", What: "npx -y @modelcontextprotocol/server-filesystem /home/ada", Source: "~/.config/Claude/claude_desktop_config.json"},
	{Name: "github", Where: "Claude Desktop · user", What: "docker run -i --rm ghcr.io/github/github-mcp-server"},
	{Name: "sentry", Where: "Claude Code · project", What: "https://mcp.sentry.dev/mcp", Source: "/srv/shop/.mcp.json", Approval: Pending},
	{Name: "db", Where: "VS Code · project", What: "./bin/db-server --region eu-west-1"},
	{Name: "puppeteer", Where: "Windsurf · user", What: "npx -y @modelcontextprotocol/server-puppeteer", Disabled: true},
}

func newPicker(w, h int, problems ...string) *Model {
	m := New(Options{Items: items, Problems: problems, Files: 4})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// screen renders the picker without styles and checks its size.
func screen(t *testing.T, m *Model) string {
	t.Helper()
	s := ansi.Strip(m.Render())
	uitest.CheckScreen(t, s, m.w, m.h)
	return s
}

func names(m *Model) []string {
	vis, _ := m.Visible()
	var out []string
	for _, i := range vis {
		out = append(out, items[i].Name)
	}
	return out
}

// TestSelectWithArrows: enter picks the selected row and quits.
func TestSelectWithArrows(t *testing.T) {
	m := newPicker(100, 20)
	m.Update(keyDown)
	m.Update(press('j'))
	m.Update(keyUp)
	_, cmd := m.Update(keyEnter)
	if i, ok := m.Chosen(); !ok || i != 1 {
		t.Fatalf("chosen %d %v, want 1 (github)", i, ok)
	}
	if cmd == nil || !isQuit(cmd) {
		t.Fatalf("enter did not quit")
	}
}

// TestFilter: / opens the filter; letters type (j, k and q too); the list
// narrows by name or host; backspace widens it; enter picks the
// first match; the matched letters of the name are marked.
func TestFilter(t *testing.T) {
	m := newPicker(100, 20)
	m.Update(press('/'))
	typeText(m, "pup")
	if got := names(m); !reflect.DeepEqual(got, []string{"puppeteer"}) {
		t.Fatalf("filter pup: %q", got)
	}
	s := screen(t, m)
	for _, want := range []string{"/ pup▏", " 1/5", "› puppeteer", "(disabled) npx -y"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	m.Update(keyBack)
	m.Update(keyBack)
	m.Update(keyBack)
	if m.Query() != "" || len(names(m)) != len(items) {
		t.Fatalf("after 3 backspaces: query %q, %d rows", m.Query(), len(names(m)))
	}
	typeText(m, "vs code") // matches the host
	if got := names(m); !reflect.DeepEqual(got, []string{"db"}) {
		t.Fatalf("filter by host: %q", got)
	}
	m.Update(keyEsc) // clears the filter, back to the list: does not quit
	if _, ok := m.Chosen(); ok || m.Query() != "" || m.filtering {
		t.Fatalf("esc in the filter: chosen %v query %q filtering %v", ok, m.Query(), m.filtering)
	}
	m.Update(press('/'))
	typeText(m, "jkq") // letters that are keys in the list type here
	if m.Query() != "jkq" {
		t.Fatalf("query %q, want jkq", m.Query())
	}
	if !strings.Contains(screen(t, m), "no server matches jkq") {
		t.Errorf("no-match screen:\n%s", screen(t, m))
	}
	_, cmd := m.Update(keyEnter)
	if _, ok := m.Chosen(); ok || cmd != nil {
		t.Fatalf("enter with no match picked something or quit")
	}
	for range 3 {
		m.Update(keyBack)
	}
	typeText(m, "sen")
	m.Update(keyEnter)
	if i, ok := m.Chosen(); !ok || items[i].Name != "sentry" {
		t.Fatalf("chosen %d %v, want sentry", i, ok)
	}
	// Highlight: the matched name letters are styled apart.
	hl := highlight("sentry", []int{0, 1, 2}, m.st.Text, m.st.Match)
	if ansi.Strip(hl) != "sentry" || hl == "sentry" {
		t.Errorf("highlight = %q", hl)
	}
}

// TestQuit: esc and q quit from the list, ctrl+c from the filter too;
// nothing is chosen.
func TestQuit(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []tea.KeyPressMsg
	}{
		{"esc", []tea.KeyPressMsg{keyEsc}},
		{"q", []tea.KeyPressMsg{press('q')}},
		{"ctrl+c in the filter", []tea.KeyPressMsg{press('/'), press('a'), keyCtrlC}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newPicker(80, 20)
			var cmd tea.Cmd
			for _, k := range tc.keys {
				_, cmd = m.Update(k)
			}
			if _, ok := m.Chosen(); ok || cmd == nil || !isQuit(cmd) {
				t.Fatalf("chosen %v, quit %v", ok, cmd != nil && isQuit(cmd))
			}
		})
	}
}

// TestScrollAndProblems: a list longer than the screen scrolls with the
// selection; problems take at most a quarter of the rows, the rest counted.
func TestScrollAndProblems(t *testing.T) {
	var many []Item
	for i := range 30 {
		many = append(many, Item{Name: fmt.Sprintf("server-%02d", i), Where: "Cursor · user", What: "node s.js"})
	}
	var problems []string
	for i := range 7 {
		problems = append(problems, fmt.Sprintf("/home/ada/.cursor/mcp%d.json: not valid JSON: line %d", i, i+1))
	}
	m := New(Options{Items: many, Problems: problems, Files: 2})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 16})
	s := screen(t, m)
	// 16 rows: title, filter hint, header, 6 list rows, source, heading + 4 problem rows, help.
	for _, want := range []string{"30 found in 2 files", "› server-00", "server-05", "Problems (7)", "! /home/ada/.cursor/mcp0.json: not valid JSON: line 1", "… 4 more: sonde config list shows them all", "enter start"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "server-06") {
		t.Errorf("row 7 shown in a 6-row list:\n%s", s)
	}
	for range 9 {
		m.Update(keyDown)
	}
	s = screen(t, m)
	if !strings.Contains(s, "› server-09") || strings.Contains(s, "server-03 ") || !strings.Contains(s, "server-04") {
		t.Errorf("after 9 downs the window is not rows 4-9:\n%s", s)
	}
	m.Update(press('G'))
	if _, sel := m.Visible(); sel != 29 || !strings.Contains(screen(t, m), "› server-29") {
		t.Errorf("G: sel %d", sel)
	}
}

// TestNoServers: the empty state says where to look; enter does nothing.
func TestNoServers(t *testing.T) {
	m := New(Options{Problems: []string{"/x/.mcp.json: not valid JSON"}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 10})
	s := screen(t, m)
	if !strings.Contains(s, "No MCP servers were found") || !strings.Contains(s, "start one with: sonde -- COMMAND") || !strings.Contains(s, "! /x/.mcp.json: not valid JSON") {
		t.Errorf("empty screen:\n%s", s)
	}
	if _, cmd := m.Update(keyEnter); cmd != nil {
		t.Error("enter with no servers did something")
	}
}

// isQuit runs cmd and reports whether it asks the program to quit.
func isQuit(cmd tea.Cmd) bool {
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// TestGolden: the whole screen at 100x16, NoColor, with the filter typed
// and problems listed.
func TestGolden(t *testing.T) {
	m := newPicker(100, 16,
		"~/.cursor/mcp.json: not valid JSON: line 5, column 7: invalid character '\"' after object key:value pair",
		"~/.config/Code/User/mcp.json: server \"db\": unresolved reference: env.DB_USER: ${env:USER}: environment variable USER is not set")
	golden.Assert(t, "picker_100x16", screen(t, m))
	m.Update(press('/'))
	typeText(m, "ude")
	golden.Assert(t, "picker_filter_100x16", screen(t, m))
}

// TestApprovals: a Claude Code project server shows whether Claude Code
// enables it, before its command line (a rejected one dimmed, as a
// disabled one), and in words after the selected row's source.
func TestApprovals(t *testing.T) {
	st := theme.New(theme.Dark())
	m := New(Options{Styles: st, Files: 1, Items: []Item{
		{Name: "docs", Where: "Claude Code · project", What: "docs-server", Source: "/p/.mcp.json", Approval: Approved},
		{Name: "fresh", Where: "Claude Code · project", What: "fresh-server", Source: "/p/.mcp.json", Approval: Pending},
		{Name: "db", Where: "Claude Code · project", What: "db-server", Source: "/p/.mcp.json", Approval: Rejected},
		{Name: "mem", Where: "Claude Code · user", What: "mem-server", Source: "~/.claude.json"},
	}})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 12})
	s := screen(t, m)
	for _, want := range []string{
		"› docs   Claude Code · project  (enabled) docs-server",
		"  fresh  Claude Code · project  (not approved) fresh-server",
		"  db     Claude Code · project  (disabled) db-server",
		"  mem    Claude Code · user     mem-server",
		"  from /p/.mcp.json · enabled in Claude Code",
	} {
		if !hasLine(s, want) {
			t.Errorf("screen lacks the line %q:\n%s", want, s)
		}
	}
	styled := m.Render()
	for _, want := range []string{st.OK.Render("(enabled)"), st.Warn.Render("(not approved)"), st.Subtle.Render("(disabled) ")} {
		if !strings.Contains(styled, want) {
			t.Errorf("the marks are not styled: no %q", want)
		}
	}
	m.Update(keyDown)
	if s := screen(t, m); !hasLine(s, "  from /p/.mcp.json · not yet approved in Claude Code (sonde starts it anyway)") {
		t.Errorf("pending source line:\n%s", s)
	}
	m.Update(keyDown)
	if s := screen(t, m); !hasLine(s, "  from /p/.mcp.json · disabled in Claude Code (sonde starts it anyway)") {
		t.Errorf("rejected source line:\n%s", s)
	}
	m.Update(keyDown)
	if s := screen(t, m); !hasLine(s, "  from ~/.claude.json") {
		t.Errorf("a server without approval has words:\n%s", s)
	}
	// enter starts a rejected or pending server as any other.
	m.Update(keyUp)
	m.Update(keyEnter)
	if i, ok := m.Chosen(); !ok || i != 2 {
		t.Errorf("chosen %d %v, want db (2)", i, ok)
	}
}

// hasLine reports whether a line of screen s is want, trailing spaces
// aside.
func hasLine(s, want string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimRight(l, " ") == want {
			return true
		}
	}
	return false
}

// TestMarkSeveral: space marks the selected server (● before it) and
// unmarks it again; enter with servers marked returns them together, in
// the list's order, and no single choice; in the filter, space types.
func TestMarkSeveral(t *testing.T) {
	m := newPicker(100, 16)
	keySpace := tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	m.Update(keyDown)
	m.Update(keyDown)
	m.Update(keySpace) // sentry
	m.Update(keyUp)
	m.Update(keySpace) // github
	m.Update(keySpace) // github again: unmarked
	m.Update(keyUp)
	m.Update(keySpace) // filesystem
	s := screen(t, m)
	if !strings.Contains(s, "›●filesystem") || !strings.Contains(s, " ●sentry") || strings.Contains(s, "●github") {
		t.Fatalf("marks:\n%s", s)
	}
	if !strings.Contains(s, "enter start the 2 marked") {
		t.Errorf("help line does not say what enter does now:\n%s", s)
	}
	_, cmd := m.Update(keyEnter)
	if cmd == nil {
		t.Fatal("enter did not quit")
	}
	if got := m.ChosenMany(); !reflect.DeepEqual(got, []int{0, 2}) {
		t.Errorf("chosen %v, want [0 2]", got)
	}
	if _, ok := m.Chosen(); ok {
		t.Error("a single server was chosen too")
	}

	f := newPicker(100, 16)
	f.Update(press('/'))
	typeText(f, "git")
	f.Update(keySpace)
	if f.Query() != "git " || len(f.marked) != 0 {
		t.Errorf("in the filter, space: query %q, marked %v", f.Query(), f.marked)
	}
}

// Live tapped sessions come first (the caller puts them there): the title
// counts them apart from the servers, space does not mark one, the filter
// finds one by its label, and enter chooses it like a server.
func TestLiveSessions(t *testing.T) {
	live := Item{Name: "gh", Where: "tapped · live", What: "npx server-github", Source: "live session gh-20261201-143007-4242", Session: "gh-20261201-143007-4242"}
	m := New(Options{Items: append([]Item{live}, items...), Files: 4})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 20})
	s := screen(t, m)
	if !strings.Contains(s, "5 found in 4 files · 1 live tapped session above them") || !strings.Contains(s, "› gh  ") || !strings.Contains(s, "  live session gh-") {
		t.Fatalf("screen:\n%s", s)
	}
	m.Update(press(' '))
	if len(m.marked) != 0 {
		t.Errorf("space marked a session: %v", m.marked)
	}
	m.Update(press('/'))
	typeText(m, "gh")
	if vis, _ := m.Visible(); len(vis) == 0 || vis[0] != 0 {
		t.Fatalf("filtered %v, want the session first", vis)
	}
	m.Update(keyEnter)
	if i, ok := m.Chosen(); !ok || i != 0 || m.ChosenMany() != nil {
		t.Errorf("chosen %d %v %v", i, ok, m.ChosenMany())
	}
}
