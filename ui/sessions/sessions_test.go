package sessions

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // the goldens' start times
	goleak.VerifyTestMain(m)
}

// rowsSource is a Source over rows a test changes between reads (as the
// sessions folder changes behind the list).
type rowsSource struct {
	mu    sync.Mutex
	rows  []Row
	err   error
	reads int
}

func (s *rowsSource) Rows() ([]Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	return append([]Row(nil), s.rows...), s.err
}

func (s *rowsSource) set(rows ...Row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = rows
}

var now = time.Date(2026, 12, 1, 14, 30, 0, 0, time.UTC)

func sample() []Row {
	return []Row{
		{ID: "github-20261201-143007-4242", Label: "github", Server: "npx -y @modelcontextprotocol/server-github", Client: "claude-code 2.1.197 · 2025-11-25", Host: "claude (pid 4000)",
			Started: now.Add(-time.Minute), Live: true, Calls: 12, Errors: 1, Late: 2},
		{ID: "fs-20261201-120000-77", Label: "fs", Server: "mcp-server-filesystem /tmp", Host: "pid 3000",
			Started: now.Add(-3 * time.Hour), Ended: now.Add(-2 * time.Hour), Cut: true, Calls: 3, Duplicate: 1},
		{ID: "evil-20261201-110000-78", Label: "evil\x1b]0;pwned\x07", Server: "srv \x1b[2J", Started: now.Add(-4 * time.Hour), Ended: now.Add(-4 * time.Hour)},
	}
}

func newList(t *testing.T, src *rowsSource, o Options) *Model {
	t.Helper()
	o.Source = src
	o.Now = func() time.Time { return now }
	m := New(o)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 12})
	read(m)
	return m
}

// read runs the list's read of its source, as its refresh command does.
func read(m *Model) {
	m.Update(m.refresh()())
}

func plain(m *Model) string { return ansi.Strip(m.Render()) }

func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(uitest.Press(k))
	}
	return cmd
}

// The list shows each session's label, state, host, start, counts and
// server, escaping what the files hold; the live one first as the source
// orders them; the selected row's id below.
func TestRender(t *testing.T) {
	src := &rowsSource{rows: sample()}
	m := newList(t, src, Options{})
	view := plain(m)
	for _, want := range []string{
		"sonde watch · 3 sessions · 1 live",
		"github", "live", "claude-code 2.1.197 · 2025-11-25", "claude (pid 4000)", "12", "npx -y @modelcontextprotocol/server-github",
		"ended 2h0m0s ago (cut)", "pid 3000",
		"github-20261201-143007-4242", // the selected row's id
	} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(m.Render(), "\x1b]0;pwned") || strings.Contains(m.Render(), "\x1b[2J") {
		t.Errorf("a label or server reached the terminal unescaped:\n%q", m.Render())
	}
	if err := uitest.ScreenSize(view, 160, 12); err != nil {
		t.Errorf("not the window's size: %v", err)
	}
}

// The list at 80x24 and 120x24: who each host says it is (its clientInfo
// and protocol) where it said so, its process where it has not yet; the
// selected row's detail has both.
func TestRenderGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 24}} {
		src := &rowsSource{rows: sample()}
		m := newList(t, src, Options{Where: "/home/u/.local/state/sonde/sessions"})
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		golden.Assert(t, fmt.Sprintf("list_%dx%d", size[0], size[1]), plain(m))
	}
}

// enter hands back the selected session's id; q quits with none.
func TestOpenAndQuit(t *testing.T) {
	src := &rowsSource{rows: sample()}
	m := newList(t, src, Options{})
	press(m, "j")
	cmd := press(m, "enter")
	if id, ok := m.Chosen(); !ok || id != "fs-20261201-120000-77" {
		t.Fatalf("chosen %q %v", id, ok)
	}
	if cmd == nil {
		t.Fatal("enter did not quit the list")
	}
	m = newList(t, src, Options{})
	if cmd := press(m, "q"); cmd == nil {
		t.Fatal("q did not quit")
	}
	if _, ok := m.Chosen(); ok {
		t.Error("q chose a session")
	}
}

// / filters fuzzily on label, server, host and id; esc clears the filter;
// with no match enter opens nothing.
func TestFilter(t *testing.T) {
	src := &rowsSource{rows: sample()}
	m := newList(t, src, Options{})
	press(m, "/", "f", "s")
	ids, _ := m.Visible()
	if len(ids) == 0 || ids[0] != "fs-20261201-120000-77" {
		t.Fatalf("visible %v for fs", ids)
	}
	press(m, "esc")
	if ids, _ := m.Visible(); len(ids) != 3 || m.Query() != "" {
		t.Fatalf("after esc: %v %q", ids, m.Query())
	}
	press(m, "/")
	press(m, "c", "l", "a", "u", "d", "e")
	if ids, _ := m.Visible(); len(ids) != 1 || ids[0] != "github-20261201-143007-4242" {
		t.Fatalf("visible %v for the host's name", ids)
	}
	press(m, "backspace")
	press(m, "z", "z", "z")
	if ids, _ := m.Visible(); len(ids) != 0 {
		t.Fatalf("visible %v for zzz", ids)
	}
	if !strings.Contains(plain(m), "no session matches the filter") {
		t.Errorf("view:\n%s", plain(m))
	}
	press(m, "enter")
	if _, ok := m.Chosen(); ok {
		t.Error("enter with nothing shown chose a session")
	}
}

// Each tick reads the rows again: a new session appears, one that ended
// says so, and the selection stays on the session it was on.
func TestRefresh(t *testing.T) {
	src := &rowsSource{rows: sample()}
	m := newList(t, src, Options{})
	press(m, "j") // fs
	_, cmd := m.Update(tickMsg{})
	if cmd == nil {
		t.Fatal("the tick asked for nothing")
	}
	fresh := Row{ID: "new-20261201-142959-99", Label: "new", Server: "srv", Started: now, Live: true}
	rows := sample()
	rows[0].Live, rows[0].Ended = false, now
	src.set(append([]Row{fresh}, rows...)...)
	read(m)
	view := plain(m)
	if !strings.Contains(view, "new") || !strings.Contains(view, "4 sessions · 1 live") {
		t.Errorf("the new session is not listed:\n%s", view)
	}
	if ids, sel := m.Visible(); ids[sel] != "fs-20261201-120000-77" {
		t.Errorf("selected %s after the read, want fs", ids[sel])
	}
}

// An empty folder says where sessions come from; a folder that cannot be
// read says why; Select puts the cursor on the session just left; Note
// is shown.
func TestEmptyAndErrors(t *testing.T) {
	src := &rowsSource{}
	m := newList(t, src, Options{Where: "/home/u/.local/state/sonde/sessions", Note: "x: it went away"})
	view := plain(m)
	if !strings.Contains(view, "no sessions yet in /home/u/.local/state/sonde/sessions") || !strings.Contains(view, "x: it went away") {
		t.Errorf("view:\n%s", view)
	}
	press(m, "enter")
	if _, ok := m.Chosen(); ok {
		t.Error("enter in an empty list chose something")
	}
	src.err = errors.New("permission denied")
	read(m)
	if !strings.Contains(plain(m), "the sessions folder: permission denied") {
		t.Errorf("view:\n%s", plain(m))
	}
	src.err = nil
	src.set(sample()...)
	m = newList(t, src, Options{Select: "evil-20261201-110000-78"})
	if ids, sel := m.Visible(); ids[sel] != "evil-20261201-110000-78" {
		t.Errorf("selected %s, want the one given", ids[sel])
	}
}

// The screen is exactly the window's size at every size, down to nothing,
// while filtering too.
func TestViewSize(t *testing.T) {
	for _, filtering := range []bool{false, true} {
		for _, w := range []int{0, 1, 2, 5, 20, 40, 79, 80, 120, 200} {
			for _, h := range []int{0, 1, 2, 3, 5, 6, 12, 40} {
				src := &rowsSource{rows: sample()}
				m := New(Options{Source: src, Now: func() time.Time { return now }})
				m.Update(tea.WindowSizeMsg{Width: w, Height: h})
				read(m)
				if filtering {
					press(m, "/", "g")
				}
				s := m.Render()
				if w == 0 || h == 0 {
					if s != "" {
						t.Errorf("%dx%d: %q", w, h, s)
					}
					continue
				}
				uitest.CheckScreen(t, s, w, h)
			}
		}
	}
}

// TestTitleOneSession: one session is "1 session", not "1 sessions" (#33).
func TestTitleOneSession(t *testing.T) {
	m := newList(t, &rowsSource{rows: sample()[:1]}, Options{})
	if view := plain(m); !strings.Contains(view, "sonde watch · 1 session · 1 live") {
		t.Errorf("title:\n%s", view)
	}
}
