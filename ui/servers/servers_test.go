package servers

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/uitest"
)

// rowsSource is a Source over fixed rows that records what it was asked.
type rowsSource struct {
	mu       sync.Mutex
	rows     []Row
	approved []string
	started  []string
	approve  error
}

func (s *rowsSource) Rows() []Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Row(nil), s.rows...)
}

func (s *rowsSource) Prewarm(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = append(s.started, name)
	return nil
}

func (s *rowsSource) Tools() ([]ToolRow, error) {
	return []ToolRow{
		{Name: "beta/echo", Server: "beta", Description: "Echoes.\nMore.", Conflicts: []string{"delta"}},
		{Name: "beta/add", Server: "beta", Description: "Adds."},
		{Name: "delta/echo", Server: "delta", Description: "Echoes \x1b[2J too.", Conflicts: []string{"beta"}},
	}, nil
}

func (s *rowsSource) Report(name string) string {
	if name == "delta" {
		return "server:    delta\ncode:      MCP_PROCESS_EXIT\nstderr:\n  \x1b]0;pwned\x07boom\n"
	}
	return ""
}

func (s *rowsSource) Approve(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approved = append(s.approved, name)
	return s.approve
}

// plain is the list's screen without its styles.
func plain(m *Model) string { return ansi.Strip(m.Render()) }

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newList(t *testing.T, src *rowsSource) *Model {
	t.Helper()
	m := New(Options{Source: src, Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 12})
	m.Update(rowsMsg(src.Rows()))
	return m
}

// run runs cmd and feeds its message back (one level: what the list's
// commands return).
func run(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if msg := cmd(); msg != nil {
		m.Update(msg)
	}
}

func TestStatesShown(t *testing.T) {
	src := &rowsSource{rows: []Row{
		{Name: "alpha", Where: "VS Code · user", State: "not started"},
		{Name: "beta", Where: "Cursor · user", State: "ready", Pid: 42},
		{Name: "gamma", Where: "Cursor · user", State: "backing off", Failures: 2, NextTry: now.Add(4 * time.Second), Why: "MCP_SPAWN: cannot start"},
		{Name: "delta", Where: "Cursor · user", State: "quarantined", Failures: 5, Why: "MCP_PROCESS_EXIT: exit code 3", Changed: true},
		{Name: "evil\x1b]0;x\x07", Where: "Cursor · user", State: "not started"},
	}}
	m := newList(t, src)
	out := plain(m)
	for _, want := range []string{
		"sonde · 5 servers · 1 running · each starts when you open it",
		"› alpha             not started",
		"beta              ready (pid 42)",
		"gamma             backing off 4s",
		"2 · Cursor · user",
		"delta             quarantined",
		`evil\x1b]0;x\x07`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if raw := m.Render(); strings.Contains(raw, "\x1b]0") || strings.Contains(raw, "\x07") {
		t.Error("a server name reached the terminal unescaped")
	}
	m.Update(uitest.Press("down"))
	m.Update(uitest.Press("down"))
	if out := plain(m); !strings.Contains(out, "last failure: MCP_SPAWN: cannot start") {
		t.Errorf("the selected row's failure:\n%s", out)
	}
}

func TestKeys(t *testing.T) {
	src := &rowsSource{rows: []Row{
		{Name: "alpha", State: "not started"},
		{Name: "delta", State: "quarantined", Changed: true, Why: "x"},
	}}
	m := newList(t, src)
	// p starts the selected server (in a command).
	run(m, m.key(uitest.Press("p")))
	if len(src.started) != 1 || src.started[0] != "alpha" || !strings.Contains(plain(m), "alpha started") {
		t.Fatalf("prewarm: %v\n%s", src.started, plain(m))
	}
	// ctrl+r on a server that is not quarantined says so.
	run(m, m.key(uitest.Press("ctrl+r")))
	if !strings.Contains(plain(m), "alpha is not quarantined") {
		t.Fatal(plain(m))
	}
	// On a quarantined one it asks; n keeps it, y approves it.
	m.Update(uitest.Press("down"))
	run(m, m.key(uitest.Press("ctrl+r")))
	if !strings.Contains(plain(m), "approve delta (its configuration or binary changed)? y/n") {
		t.Fatal(plain(m))
	}
	run(m, m.key(uitest.Press("n")))
	if len(src.approved) != 0 || !strings.Contains(plain(m), "delta stays quarantined") {
		t.Fatalf("n: %v", src.approved)
	}
	run(m, m.key(uitest.Press("ctrl+r")))
	src.approve = errors.New("unchanged since its quarantine")
	run(m, m.key(uitest.Press("y")))
	if len(src.approved) != 1 || !strings.Contains(plain(m), "delta: unchanged since its quarantine") {
		t.Fatalf("y refused: %v\n%s", src.approved, plain(m))
	}
	src.approve = nil
	run(m, m.key(uitest.Press("ctrl+r")))
	run(m, m.key(uitest.Press("y")))
	if !strings.Contains(plain(m), "delta approved: it starts at its next use") {
		t.Fatal(plain(m))
	}
	// R shows the report of the selected server's last failure (escaped),
	// R again goes back; a server without one says so.
	run(m, m.key(uitest.Press("R")))
	if out := plain(m); !strings.Contains(out, "failure report") || !strings.Contains(out, "code:      MCP_PROCESS_EXIT") || !strings.Contains(out, `\x1b]0;pwned\x07boom`) {
		t.Fatalf("report:\n%s", out)
	}
	if strings.Contains(m.Render(), "\x1b]0;pwned") {
		t.Fatal("the report's stderr reached the terminal unescaped")
	}
	run(m, m.key(uitest.Press("R")))
	if strings.Contains(plain(m), "failure report ·") {
		t.Fatal("R did not close the report")
	}
	m.Update(uitest.Press("up"))
	run(m, m.key(uitest.Press("R")))
	m.Update(uitest.Press("down"))
	if !strings.Contains(plain(m), "alpha has no failure in this run") {
		t.Fatal(plain(m))
	}
	// enter chooses the selected server.
	if cmd := m.key(uitest.Press("enter")); cmd == nil {
		t.Fatal("enter did not quit")
	}
	if name, ok := m.Chosen(); !ok || name != "delta" {
		t.Fatalf("chosen %q %v", name, ok)
	}
	// q quits with nothing chosen.
	m2 := newList(t, src)
	if cmd := m2.key(uitest.Press("q")); cmd == nil {
		t.Fatal("q did not quit")
	}
	if _, ok := m2.Chosen(); ok {
		t.Fatal("q chose")
	}
}

// TestToolsView: t shows the running servers' tools as server/tool with
// their conflicts (escaped), the servers not running named below; enter
// on a tool chooses its server; t goes back.
func TestToolsView(t *testing.T) {
	src := &rowsSource{rows: []Row{
		{Name: "alpha", State: "not started"},
		{Name: "beta", State: "ready", Pid: 4},
		{Name: "delta", State: "ready", Pid: 5},
	}}
	m := newList(t, src)
	run(m, m.key(uitest.Press("t")))
	out := plain(m)
	for _, want := range []string{
		"sonde · tools of the running servers · 3 tools, 2 in conflict",
		"› beta/echo   conflict: also in delta  Echoes.",
		"  beta/add    Adds.",
		`delta/echo  conflict: also in beta  Echoes \x1b[2J too.`,
		"not running: alpha (their tools show once they run)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(m.Render(), "\x1b[2J") {
		t.Error("a tool description reached the terminal unescaped")
	}
	m.Update(uitest.Press("down"))
	m.Update(uitest.Press("down"))
	run(m, m.key(uitest.Press("t")))
	if strings.Contains(plain(m), "tools of the running servers") {
		t.Fatal("t did not go back")
	}
	run(m, m.key(uitest.Press("t")))
	m.key(uitest.Press("down"))
	m.key(uitest.Press("down"))
	if cmd := m.key(uitest.Press("enter")); cmd == nil {
		t.Fatal("enter did not quit")
	}
	if name, ok := m.Chosen(); !ok || name != "delta" {
		t.Fatalf("chosen %q", name)
	}
}

// TestRunningCountsLiveStates: a server that failed, backs off or stopped
// is not running, though its row keeps the pid of the process that ended
// (#33: "1 running" with nothing running).
func TestRunningCountsLiveStates(t *testing.T) {
	src := &rowsSource{rows: []Row{
		{Name: "alpha", Where: "VS Code · user", State: "failed", Pid: 41, Why: "MCP_PROCESS_EXIT: exit code 1"},
		{Name: "beta", Where: "Cursor · user", State: "backing off", Pid: 42, NextTry: now.Add(time.Second)},
		{Name: "gamma", Where: "Cursor · user", State: "stopped", Pid: 43},
	}}
	if out := plain(newList(t, src)); !strings.Contains(out, "sonde · 3 servers · 0 running") {
		t.Errorf("title:\n%s", out)
	}
}
