package ui

import (
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// testServers is Servers over never-connected clients: starts counts each
// server's starts; running lists those that run before the UI opens.
type testServers struct {
	t       testing.TB
	names   []string
	running map[string]bool
	starts  map[string]int
}

func (s *testServers) Names() []string          { return s.names }
func (s *testServers) Running(name string) bool { return s.running[name] }
func (s *testServers) Waiting(name string) string {
	if name == "b" && s.starts["b"] == 0 {
		return "backing off after 1 failures in a row: next try in 3s"
	}
	return ""
}
func (s *testServers) Report(name string) string {
	if name == "b" {
		return "server:  b\ncode:    MCP_SPAWN\n"
	}
	return ""
}

func (s *testServers) Start(name string) (Conn, error) {
	s.starts[name]++
	c := client.New(client.Options{})
	s.t.Cleanup(func() { c.Close() })
	return Conn{Client: c, Sub: c.Subscribe(16)}, nil
}

// Aggregate names every tool server/tool; a name two servers have is a
// conflict (the manager's rule, manager.Aggregate, tested there).
func (s *testServers) Aggregate(names []string, lists [][]mcp.Tool) []NamedTool {
	has := map[string][]string{}
	for i, n := range names {
		for _, t := range lists[i] {
			has[t.Name] = append(has[t.Name], n)
		}
	}
	var out []NamedTool
	for i, n := range names {
		for _, t := range lists[i] {
			nt := NamedTool{Server: n, Name: n + "/" + t.Name, Tool: t}
			for _, o := range has[t.Name] {
				if o != n {
					nt.Conflicts = append(nt.Conflicts, o)
				}
			}
			out = append(out, nt)
		}
	}
	return out
}

// newFleetModel is an fleet inspector of w×h over servers a and b,
// none running.
func newFleetModel(t *testing.T, w, h int) (*Model, *testServers) {
	t.Helper()
	src := &testServers{t: t, names: []string{"a", "b"}, running: map[string]bool{}, starts: map[string]int{}}
	hs := newHarness(t, w, h, func(o *Options) { o.Servers = src })
	hs.m.Init()
	return hs.m, src
}

// runStart runs cmd, a server's start, and gives m the message it
// produces (and nothing after it: the event pumps block).
func runStart(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command")
	}
	msg := cmd()
	sm, ok := msg.(srvMsg)
	if !ok {
		t.Fatalf("got %T, want a server's message", msg)
	}
	m.Update(sm)
}

// connectServer delivers server name's start, handshake and tool list.
func connectServer(t *testing.T, m *Model, name string, list []mcp.Tool) {
	t.Helper()
	s := m.fl.srv[name]
	if !s.asked {
		runStart(t, m, m.fl.startServer(name))
	}
	m.Update(srvMsg{name, initializedMsg{gen: s.gen, res: initResult(), era: client.EraLegacy}})
	m.Update(srvMsg{name, toolsListedMsg{gen: s.gen, tools: list}})
}

// plain is the screen without styling.
func plain(m *Model) string { return ansi.Strip(m.View().Content) }

func TestMultiLazyStartFromTools(t *testing.T) {
	m, src := newFleetModel(t, 120, 40)
	if got := m.tools.Title(); got != "Tools 0" {
		t.Fatalf("title %q before any start", got)
	}
	if s := plain(m); !strings.Contains(s, "a not started │ b not started") || !strings.Contains(s, "a/…") || !strings.Contains(s, "b/…") {
		t.Fatalf("the servers' rows and states are not shown:\n%s", s)
	}
	m.Update(keyMsg("3"))
	m.Update(keyMsg("G")) // b/…, the last row
	cmd := m.tools.Update(keyMsg("enter"))
	if cmd == nil {
		t.Fatal("enter on b's row asked for nothing")
	}
	start, ok := cmd().(tools.StartMsg)
	if !ok || start.Server != "b" {
		t.Fatalf("enter on b's row: %#v, want StartMsg{b}", start)
	}
	_, cmd = m.Update(start)
	if s := plain(m); !strings.Contains(s, "b starting…") || !strings.Contains(s, "starting b (backing off after 1 failures in a row: next try in 3s)") {
		t.Fatalf("the status bar does not say b starts, after its backoff:\n%s", s)
	}
	runStart(t, m, cmd)
	if src.starts["b"] != 1 || src.starts["a"] != 0 {
		t.Fatalf("starts %v, want b once and a never", src.starts)
	}
	// A second pick while it runs starts nothing more.
	if _, cmd := m.Update(tools.StartMsg{Server: "b"}); cmd != nil {
		t.Fatal("a second pick of b's row started it again")
	}
	connectServer(t, m, "b", fixtureTools())
	if got := m.tools.Title(); got != "Tools 4" {
		t.Fatalf("title %q after b's tools, want Tools 4", got)
	}
	connectServer(t, m, "a", fixtureTools()[:2])
	s := plain(m)
	for _, want := range []string{"Tools 6", "a/echo", "b/add"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if ts, ok := m.tools.Tool("a/echo"); !ok || ts.Name != "a/echo" {
		t.Errorf("a/echo not listed: %v", ts)
	}
	// The call of b/add goes to b's client under the tool's own name.
	if cmd := m.fl.call(tools.CallMsg{Tool: "b/add", Args: []byte(`{"a":1,"b":2}`)}); cmd == nil {
		t.Error("a call of b/add was not routed")
	}
	if cmd := m.fl.call(tools.CallMsg{Tool: "c/add"}); cmd != nil {
		t.Error("a call of an unknown server's tool was routed")
	}
}

func TestMultiTaggedPanesAndFilter(t *testing.T) {
	m, _ := newFleetModel(t, 140, 44)
	connectServer(t, m, "a", fixtureTools())
	connectServer(t, m, "b", fixtureTools())
	// The same id on both servers: two rows, each tagged.
	for _, name := range []string{"a", "b"} {
		var e events
		e.proc(100, client.ProcInfo{What: client.ProcStart, Pid: map[string]int{"a": 4001, "b": 4002}[name]})
		e.call(200, 7, "tools/call", "slow", `{"name":"slow"}`, 60000)
		e.stderr(250, "hello from "+name+"\n")
		s := m.fl.srv[name]
		m.Update(srvMsg{name, eventsMsg{gen: s.gen, sub: s.sess.Sub, evs: e.take()}})
	}
	s := plain(m)
	for _, re := range []string{`SERVER\s+ID\s+METHOD`, `(?m)^│\s*a\s+7\s+tools/call slow`, `(?m)^│\s*b\s+7\s+tools/call slow`,
		`a\s+->\s+7\s+tools/call`, `b\s+->\s+7\s+tools/call`, `a\s+hello from a`, `b\s+hello from b`,
		`a pid 4001 │ b pid 4002`, `Pending 2 `} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("screen does not match %q:\n%s", re, s)
		}
	}

	m.Update(keyMsg("S"))
	s = plain(m)
	for _, want := range []string{"Pending 1 · server a", "filter: server a", "stderr 26B · server a", "S servers: a", "a/echo"} {
		if !strings.Contains(s, want) {
			t.Errorf("filtered to a: screen lacks %q:\n%s", want, s)
		}
	}
	for _, not := range []string{"hello from b", "b/echo"} {
		if strings.Contains(s, not) {
			t.Errorf("filtered to a: screen shows %q:\n%s", not, s)
		}
	}
	m.Update(keyMsg("S"))
	if s := plain(m); !strings.Contains(s, "Pending 1 · server b") || strings.Contains(s, "hello from a") {
		t.Errorf("filtered to b:\n%s", s)
	}
	m.Update(keyMsg("S"))
	if s := plain(m); !strings.Contains(s, "Pending 2 ") || !strings.Contains(s, "S servers: all") {
		t.Errorf("all again:\n%s", s)
	}

	// Narrow: the SERVER column goes before the state; in Frames before
	// the time.
	m.Update(tea.WindowSizeMsg{Width: 32, Height: 44})
	if s := plain(m); !strings.Contains(s, "│ 2 servers: 2 running │") {
		t.Errorf("narrow: the servers are not counted in the status bar:\n%s", s)
	}
	if s := plain(m); strings.Contains(s, "SERVER") || regexp.MustCompile(`time\s+server`).MatchString(s) {
		t.Errorf("the SERVER column shows at 32 cells:\n%s", s)
	}
}

func TestMultiRestartNeedsOneServer(t *testing.T) {
	m, src := newFleetModel(t, 120, 40)
	connectServer(t, m, "a", fixtureTools())
	if _, cmd := m.Update(keyMsg("ctrl+r")); cmd != nil {
		t.Fatal("ctrl+r with every server shown restarted something")
	}
	if s := plain(m); !strings.Contains(s, "choose it with S first") {
		t.Fatalf("the status bar does not say how to restart one:\n%s", s)
	}
	m.Update(keyMsg("S"))
	_, cmd := m.Update(keyMsg("ctrl+r"))
	runStart(t, m, cmd)
	if src.starts["a"] != 2 || src.starts["b"] != 0 {
		t.Fatalf("starts %v, want a twice and b never", src.starts)
	}
}

func TestMultiReportKey(t *testing.T) {
	m, _ := newFleetModel(t, 120, 40)
	if _, cmd := m.Update(keyMsg("R")); cmd != nil {
		t.Fatal("R with every server shown read a report")
	}
	if s := plain(m); !strings.Contains(s, "choose it with S first") {
		t.Fatalf("the status bar does not say how:\n%s", s)
	}
	m.Update(keyMsg("S")) // a
	_, cmd := m.Update(keyMsg("R"))
	m.Update(cmd())
	if s := plain(m); !strings.Contains(s, "a has not failed in this run") {
		t.Fatalf("no report for a:\n%s", s)
	}
	m.Update(keyMsg("S")) // b
	_, cmd = m.Update(keyMsg("R"))
	m.Update(cmd())
	s := plain(m)
	if !strings.Contains(s, "failure report · b") || !strings.Contains(s, "code:    MCP_SPAWN") {
		t.Fatalf("b's report is not shown:\n%s", s)
	}
	m.Update(keyMsg("esc"))
	if s := plain(m); strings.Contains(s, "failure report · b") {
		t.Fatalf("esc did not close the report:\n%s", s)
	}
}

// TestMultiOpenedAgain: the model run again (the inspector opened again
// from the server list) takes each running server's session again, under
// a new generation; Frames and stderr keep their history, Pending starts
// again (what settled meanwhile was not followed), and a server no longer
// running has its row back in Tools.
func TestMultiOpenedAgain(t *testing.T) {
	m, src := newFleetModel(t, 140, 44)
	connectServer(t, m, "a", fixtureTools())
	connectServer(t, m, "b", fixtureTools()[:1])
	var e events
	e.call(200, 7, "tools/call", "slow", `{"name":"slow"}`, 60000)
	e.stderr(250, "hello from a\n")
	s := m.fl.srv["a"]
	m.Update(srvMsg{"a", eventsMsg{gen: s.gen, sub: s.sess.Sub, evs: e.take()}})
	if m.pending.InFlight() != 1 {
		t.Fatal("the call is not in flight")
	}
	oldGen := s.gen

	src.running["a"] = true     // b ended while the list was shown
	runStart(t, m, m.fl.open()) // what Init runs
	if src.starts["a"] != 2 || src.starts["b"] != 1 || s.gen == oldGen {
		t.Fatalf("starts %v, generation %d (was %d): want a taken again under a new one, b not", src.starts, s.gen, oldGen)
	}
	// A result of the first run's session is dropped.
	m.Update(srvMsg{"a", toolsListedMsg{gen: oldGen, tools: nil}})
	view := plain(m)
	for _, want := range []string{"Pending 0", "a hello from a", "a/echo", "b/…", "Tools 4"} {
		if !strings.Contains(view, want) {
			t.Errorf("opened again: screen lacks %q:\n%s", want, view)
		}
	}
	if m.frames.Len() != 1 {
		t.Errorf("Frames holds %d frames, want the call's of the first run", m.frames.Len())
	}
}
