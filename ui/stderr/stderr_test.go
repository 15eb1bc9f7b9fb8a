package stderr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = uitest.T0

func chunk(s string) client.Event {
	return client.Event{Time: t0, Kind: client.EvStderr, Stderr: []byte(s)}
}

func proc(p client.ProcInfo) client.Event {
	return client.Event{Time: t0, Kind: client.EvProcess, Proc: &p}
}

func start(pid int, argv ...string) client.Event {
	return proc(client.ProcInfo{What: client.ProcStart, Pid: pid, Argv: argv})
}

func exit(pid, code int, signal string, byClose bool) client.Event {
	return proc(client.ProcInfo{What: client.ProcExit, Pid: pid, Exit: &client.Exit{Pid: pid, Code: code, Signal: signal, ByClose: byClose}})
}

var press = uitest.Press

func newModel(opts Options, w, h int) *Model {
	m := New(theme.New(theme.NoColor()), opts)
	m.SetSize(w, h)
	return m
}

// screen returns the view without styling and trailing spaces.
func screen(m *Model) []string {
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

// texts returns the lines held, oldest first.
func texts(m *Model) []string {
	var out []string
	for i := range m.lines.Len() {
		out = append(out, m.lines.At(i).text)
	}
	return out
}

func TestLinesAndPartial(t *testing.T) {
	m := newModel(Options{}, 40, 4)
	m.Apply([]client.Event{chunk("one\ntw"), chunk("o\r\nthr")})
	if got := screen(m); got[0] != "one" || got[1] != "two" || got[2] != "thr (no newline yet)" || got[3] != "" {
		t.Fatalf("screen = %q", got)
	}
	m.Apply([]client.Event{chunk("ee\n")})
	if got := texts(m); strings.Join(got, "|") != "one|two|three" || len(m.partial) != 0 {
		t.Fatalf("lines = %q, partial %q", got, m.partial)
	}
	if got, want := m.Title(), "stderr 15B"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
}

func TestSanitize(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "hello", "hello"},
		{"crlf", "hello\r", "hello"},
		{"colour", "\x1b[31merror\x1b[0m: bad", "error: bad"},
		{"osc title", "\x1b]0;pwned\x07after", "after"},
		{"osc st", "\x1b]8;;http://x\x1b\\link", "link"},
		{"clear screen", "a\x1b[2Jb\x1bcc", "abc"},
		{"bell and cr", "a\x07b\rc", `a\x07b\rc`},
		{"tab", "a\tb", "a       b"},
		{"invalid utf8", "a\xffb", `a\xffb`},
		{"c1 csi", "a\u009b31mb", `a\u009b31mb`},
		{"unicode", "héllo 日本", "héllo 日本"},
		{"cut escape", "x\x1b[3", "x"},
		{"newline in a separator label", "exec: a\nb", `exec: a\nb`},
	} {
		if got := sanitize([]byte(c.in)); got != c.want {
			t.Errorf("%s: sanitize(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestBudget(t *testing.T) {
	m := newModel(Options{Bytes: 10}, 40, 5)
	m.Apply([]client.Event{chunk("aaaa\nbbbb\ncccc\n")})
	if got := texts(m); strings.Join(got, "|") != "bbbb|cccc" || m.dropped != 5 {
		t.Fatalf("lines %q dropped %d", got, m.dropped)
	}
	if got := screen(m); got[0] != "… 5B dropped …" || got[1] != "bbbb" {
		t.Fatalf("screen = %q", got)
	}
	if got, want := m.Title(), "stderr 10B · 5B dropped"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	// A partial line over budget loses its head, on a rune boundary.
	m.Apply([]client.Event{chunk("ééééééé")}) // 14 bytes
	if string(m.partial) != "ééééé" || m.dropped != 5+10+4 || m.held != 10 {
		t.Fatalf("partial %q dropped %d held %d", m.partial, m.dropped, m.held)
	}
	// A chunk larger than the budget keeps only its tail.
	m.Apply([]client.Event{chunk(strings.Repeat("x", 100) + "\nyy")})
	if got := texts(m); len(got) != 1 || got[0] != "xxxxxxx" || string(m.partial) != "yy" {
		t.Fatalf("lines %q partial %q", got, m.partial)
	}
}

func TestProcessSeparators(t *testing.T) {
	m := newModel(Options{}, 60, 8)
	m.Apply([]client.Event{
		start(1234, "node", "server.js", "--name", "my server"),
		chunk("listening"),
		proc(client.ProcInfo{What: client.ProcSignal, Pid: 1234, Signal: "SIGTERM"}),
		exit(1234, -1, "SIGKILL", true),
	})
	want := []string{
		`── pid 1234 started: node server.js --name "my server" ─────`,
		"listening",
		"── sonde sent SIGTERM ──────────────────────────────────────",
		"── pid 1234 exited: signal SIGKILL · stopped by sonde ──────",
	}
	if got := screen(m); strings.Join(got[:4], "\n") != strings.Join(want, "\n") {
		t.Fatalf("screen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := m.Title(), "stderr 9B · signal SIGKILL"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	if m.lines.At(3).kind != kSepErr {
		t.Error("a signal exit is not drawn as an error")
	}
	m.Reset()
	m.Apply([]client.Event{start(1300, "node"), exit(1300, 0, "", false)})
	if got, want := m.Title(), "stderr 9B · exit code 0"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	if m.lines.At(5).kind != kSep || m.lines.Len() != 6 {
		t.Error("exit code 0 is drawn as an error, or history was lost")
	}
	m.Apply([]client.Event{proc(client.ProcInfo{What: client.ProcSpawnFailed, Err: errors.New("MCP_SPAWN: no such file")})})
	if got := screen(m)[6]; !strings.HasPrefix(got, "── spawn failed: MCP_SPAWN: no such file ──") {
		t.Errorf("spawn failure: %q", got)
	}
}

func numbered(m *Model, n int) {
	var b strings.Builder
	for i := range n {
		b.WriteString("line ")
		b.WriteString(string(rune('a'+i%26)) + "\n")
	}
	m.Apply([]client.Event{chunk(b.String())})
}

func TestScroll(t *testing.T) {
	m := newModel(Options{}, 20, 3)
	numbered(m, 10) // line a .. line j
	if got := screen(m); got[2] != "line j" {
		t.Fatalf("not following: %q", got)
	}
	m.Update(press("k"))
	if got := screen(m); got[0] != "line g" || got[2] != "line i" || m.follow {
		t.Fatalf("after k: %q follow=%v", got, m.follow)
	}
	numbered(m, 1) // new output does not move a scrolled view
	if got := screen(m); got[2] != "line i" {
		t.Fatalf("scrolled view moved: %q", got)
	}
	m.Update(press("g"))
	if got := screen(m); got[0] != "line a" {
		t.Fatalf("after g: %q", got)
	}
	m.Update(press("pgdown"))
	m.Update(press("j"))
	if got := screen(m); got[0] != "line e" {
		t.Fatalf("after pgdn j: %q", got)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if !m.follow {
		t.Fatalf("scrolling to the end does not follow again: top %+v", m.top)
	}
	m.Update(press("pgup"))
	m.Update(press("G"))
	if got := screen(m); !m.follow || got[2] != "line a" {
		t.Fatalf("after G: %q", got)
	}
}

func TestWrap(t *testing.T) {
	m := newModel(Options{}, 10, 4)
	m.Apply([]client.Event{chunk("short\n0123456789abcdefghijKLM\nend")})
	if got := screen(m); got[1] != "012345678…" {
		t.Fatalf("no wrap: %q", got)
	}
	m.Update(press("w"))
	want := []string{"abcdefghij", "KLM", "end", "(no newli…"}
	if got := screen(m); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("wrap: %q, want %q", got, want)
	}
	m.Update(press("k"))
	if got := screen(m); got[0] != "0123456789" {
		t.Fatalf("wrap, k: %q", got)
	}
}

// TestServersTaggedAndShown: with several servers each line is tagged; a
// line one server had not finished ends when another writes; SetServer
// shows one server's lines (and scrolling skips the others'), and the
// column goes when the pane is narrow.
func TestServersTaggedAndShown(t *testing.T) {
	m := newModel(Options{}, 60, 10)
	m.SetTag("alpha")
	m.Apply([]client.Event{start(11, "srv-a"), chunk("a one\na two (no end")})
	m.SetTag("beta")
	m.Apply([]client.Event{start(12, "srv-b"), chunk("b one\n")})
	m.SetTag("alpha")
	m.Apply([]client.Event{chunk("a three\n")})
	want := []string{
		"alpha ── pid 11 started: srv-a ─────────────────────────────",
		"alpha a one",
		"alpha a two (no end",
		"beta  ── pid 12 started: srv-b ─────────────────────────────",
		"beta  b one",
		"alpha a three",
	}
	if got := screen(m)[:6]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("all servers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m.SetServer("beta")
	if got := screen(m)[:3]; got[0] != want[3] || got[1] != want[4] || got[2] != "" {
		t.Fatalf("beta only:\n%s", strings.Join(got, "\n"))
	}
	if m.Title() != "stderr 33B · server beta" { // the size is the whole tail's
		t.Errorf("title %q", m.Title())
	}
	m.SetServer("alpha")
	m.SetSize(60, 2)
	if got := screen(m); got[0] != "alpha a two (no end" || got[1] != "alpha a three" { // beta's between them take no row
		t.Fatalf("alpha's last page:\n%s", strings.Join(got, "\n"))
	}
	m.Update(press("up"))
	if got := screen(m); got[0] != "alpha a one" || got[1] != "alpha a two (no end" {
		t.Fatalf("alpha scrolled up one row:\n%s", strings.Join(got, "\n"))
	}
	m.Update(press("down"))
	if got := screen(m); got[0] != "alpha a two (no end" || got[1] != "alpha a three" {
		t.Fatalf("alpha scrolled down one row (over beta's):\n%s", strings.Join(got, "\n"))
	}
	m.SetServer("")
	m.SetSize(16, 10)
	if got := screen(m)[1]; got != "a one" {
		t.Errorf("narrow: the tag still shows: %q", got)
	}
}

// BenchmarkViewOneServer draws a full tail (64 KiB) in which the server
// shown wrote one line in a hundred: the others' lines take no rows, and
// the cost of a frame is bounded by the tail's size.
func BenchmarkViewOneServer(b *testing.B) {
	m := newModel(Options{}, 118, 36)
	for i := range 4000 {
		tag := "beta"
		if i%100 == 0 {
			tag = "alpha"
		}
		m.SetTag(tag)
		m.Apply([]client.Event{chunk(fmt.Sprintf("line %06d of %s\n", i, tag))})
	}
	for _, only := range []string{"", "alpha"} {
		name := "all"
		if only != "" {
			name = "one-shown"
		}
		b.Run(name, func(b *testing.B) {
			m.SetServer(only)
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}
