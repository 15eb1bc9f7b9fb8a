package ui

import (
	"context"
	"errors"
	"image/color"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/lesson"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/theme"
	"github.com/sonde-mcp/sonde/ui/tools"
)

func TestInit(t *testing.T) {
	hs := newHarness(t, 0, 0)
	if hs.m.Init() == nil {
		t.Fatal("Init returned no command")
	}
	if got := hs.m.View().Content; got != "starting…" {
		t.Fatalf("view before the first size: %q", got)
	}
	hs.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(hs.status(), "sonde │ starting… │ stdio │ pending 0 │ 0.0 calls/s │ errors 0") {
		t.Fatalf("status bar before the start: %q", hs.status())
	}
	v := hs.m.View()
	if !v.AltScreen || v.MouseMode != tea.MouseModeCellMotion || v.WindowTitle != "sonde srv" {
		t.Fatalf("view fields: alt %v mouse %v title %q", v.AltScreen, v.MouseMode, v.WindowTitle)
	}
}

func TestFocus(t *testing.T) {
	tests := []struct {
		name   string
		lesson bool
		keys   []string
		want   []int // focus after each key
	}{
		{"tab cycles and skips the missing lesson", false,
			[]string{"tab", "tab", "tab", "tab", "tab", "tab", "tab"},
			[]int{paneFrames, paneTools, paneStderr, paneFeatures, paneTimeline, panePending, paneFrames}},
		{"shift+tab cycles backwards", false,
			[]string{"shift+tab", "shift+tab", "shift+tab", "shift+tab", "shift+tab", "shift+tab"},
			[]int{paneTimeline, paneFeatures, paneStderr, paneTools, paneFrames, panePending}},
		{"digits focus, 5 without a lesson is ignored", false,
			[]string{"3", "5", "4", "1", "2", "9", "6"},
			[]int{paneTools, paneTools, paneStderr, panePending, paneFrames, paneFrames, paneFeatures}},
		{"the lesson starts focused and is in the cycle", true,
			[]string{"tab", "shift+tab", "shift+tab", "5", "tab", "tab", "tab"},
			[]int{paneFeatures, paneLesson, paneStderr, paneLesson, paneFeatures, paneTimeline, panePending}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []opt
			if tt.lesson {
				opts = append(opts, withLesson)
			}
			hs := newHarness(t, 120, 40, opts...)
			for i, k := range tt.keys {
				if cmd := hs.press(k); cmd != nil {
					t.Fatalf("key %q returned a command", k)
				}
				if hs.m.focus != tt.want[i] {
					t.Fatalf("after %v: focus %d, want %d", tt.keys[:i+1], hs.m.focus, tt.want[i])
				}
			}
			// The focused pane's frame is drawn differently (bold border,
			// underlined title in NoColor), with the same text.
			f := hs.m.focus
			focused := hs.m.frame(f, hs.m.rects[f])
			hs.m.focus = (f + 1) % paneCount
			plain := hs.m.frame(f, hs.m.rects[f])
			hs.m.focus = f
			if focused == plain || ansi.Strip(focused) != ansi.Strip(plain) {
				t.Fatalf("focused frame not marked:\n%q\n%q", focused, plain)
			}
		})
	}
}

func TestZoom(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.press("2", "z")
	if !hs.m.zoom || len(hs.m.rects) != 1 || hs.m.rects[paneFrames] != (rect{0, 0, 100, 28}) {
		t.Fatalf("zoomed frames: %v", hs.m.rects)
	}
	hs.press("tab")
	if len(hs.m.rects) != 1 || hs.m.rects[paneTools] != (rect{0, 0, 100, 28}) {
		t.Fatalf("zoom follows the focus: %v", hs.m.rects)
	}
	if s := hs.screen(); !strings.Contains(s, "3 Tools") || strings.Contains(s, "Frames") {
		t.Fatalf("zoomed screen shows other panes:\n%s", s)
	}
	hs.press("z")
	if hs.m.zoom || len(hs.m.rects) != 4 {
		t.Fatalf("unzoomed: %v", hs.m.rects)
	}
	if want := layout(100, 30, paneTools, false, false); hs.m.rects[paneTools] != want[paneTools] {
		t.Fatalf("unzoomed tools %v, want %v", hs.m.rects[paneTools], want[paneTools])
	}
}

func TestShortTerminalShowsTheFocusedPane(t *testing.T) {
	hs := newHarness(t, 80, 12)
	if len(hs.m.rects) != 1 || hs.m.rects[panePending] != (rect{0, 0, 80, 10}) {
		t.Fatalf("80x12: %v", hs.m.rects)
	}
	hs.press("tab")
	if len(hs.m.rects) != 1 || hs.m.rects[paneFrames] != (rect{0, 0, 80, 10}) {
		t.Fatalf("80x12 after tab: %v", hs.m.rects)
	}
	if s := hs.screen(); !strings.Contains(s, "2 Frames") {
		t.Fatalf("frames not shown:\n%s", s)
	}
	hs.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	if len(hs.m.rects) != 4 {
		t.Fatalf("80x24: %v", hs.m.rects)
	}
}

func TestHelpScreen(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.press("?")
	if !hs.m.showHelp {
		t.Fatal("? did not open the help")
	}
	s := hs.screen()
	for _, want := range []string{"Keys of Pending", "cancel request", "Everywhere", "restart server", "? or esc closes this help"} {
		if !strings.Contains(s, want) {
			t.Errorf("help lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "next lesson step") {
		t.Error("help lists the lesson keys without a lesson")
	}
	// Keys other than the closing ones do nothing while the help is open.
	hs.press("tab", "z", "h")
	if hs.m.focus != panePending || hs.m.zoom || strings.Contains(hs.m.pending.Title(), "history") {
		t.Fatalf("keys acted under the help: focus %d zoom %v pending %q", hs.m.focus, hs.m.zoom, hs.m.pending.Title())
	}
	if cmd := hs.press("esc"); cmd != nil || hs.m.showHelp {
		t.Fatal("esc did not close the help")
	}
	hs.press("?")
	if cmd := hs.press("q"); isQuit(cmd) || hs.m.showHelp || hs.m.quitted {
		t.Fatal("q under the help should close it, not quit")
	}
	hs.press("?", "?")
	if hs.m.showHelp {
		t.Fatal("? did not close the help")
	}
	if s := hs.screen(); !strings.Contains(s, "1 Pending") {
		t.Fatalf("panes not back after the help:\n%s", s)
	}
}

func TestQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		t.Run(k, func(t *testing.T) {
			hs := newHarness(t, 80, 24)
			if cmd := hs.press(k); !isQuit(cmd) || !hs.m.quitted {
				t.Fatalf("%s did not quit", k)
			}
		})
	}
	t.Run("other keys do not quit", func(t *testing.T) {
		hs := newHarness(t, 80, 24)
		for _, k := range []string{"x", "Q", "esc", "enter"} {
			if cmd := hs.press(k); isQuit(cmd) {
				t.Fatalf("%s quit", k)
			}
		}
	})
}

func TestKeysGoToTheFocusedPane(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.press("2", "h") // frames has no h
	if strings.Contains(hs.m.pending.Title(), "history") {
		t.Fatal("an unfocused pane took a key")
	}
	hs.press("1", "h")
	if !strings.Contains(hs.m.pending.Title(), "history") {
		t.Fatalf("the focused pending pane did not get h: %q", hs.m.pending.Title())
	}
	// Paste goes to the focused pane too: the tools filter receives it.
	hs.send(toolsListedMsg{gen: hs.m.gen, tools: fixtureTools()})
	hs.press("3", "/")
	hs.send(tea.PasteMsg{Content: "ad"})
	if got := hs.m.tools.Title(); !strings.Contains(got, "filter: ad") {
		t.Fatalf("paste did not reach the tools filter: %q", got)
	}
}

func TestCapturingPaneKeepsGlobalKeys(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.send(toolsListedMsg{gen: hs.m.gen, tools: fixtureTools()})
	hs.press("3", "/")
	if !hs.m.tools.Capturing() {
		t.Fatal("/ did not open the tools filter")
	}
	if line := hs.m.helpLine(); strings.Contains(line, "quit") || strings.Contains(line, "next pane") {
		t.Fatalf("help line shows global keys while the pane captures: %q", line)
	}
	for _, k := range []string{"q", "z", "?", "1", "5", "tab", "shift+tab", "ctrl+r"} {
		if cmd := hs.press(k); isQuit(cmd) {
			t.Fatalf("%q quit while typing a filter", k)
		}
		if hs.m.quitted || hs.m.zoom || hs.m.showHelp || hs.m.focus != paneTools || hs.m.gen != 0 {
			t.Fatalf("%q acted as a global key while typing: quit %v zoom %v help %v focus %d gen %d",
				k, hs.m.quitted, hs.m.zoom, hs.m.showHelp, hs.m.focus, hs.m.gen)
		}
	}
	if got := hs.m.tools.Title(); !strings.Contains(got, "filter: qz?15") {
		t.Fatalf("typed keys did not reach the filter: %q", got)
	}
	hs.press("esc") // clears and leaves the filter
	if hs.m.tools.Capturing() {
		t.Fatal("esc did not leave the filter")
	}
	if line := hs.m.helpLine(); !strings.Contains(line, "quit") {
		t.Fatalf("help line lacks the global keys again: %q", line)
	}
	if cmd := hs.press("q"); !isQuit(cmd) {
		t.Fatal("q did not quit once the filter was closed")
	}

	// ctrl+c always quits, even while a pane captures the keyboard.
	hs = newHarness(t, 120, 40)
	hs.press("2", "/")
	if !hs.m.frames.Capturing() {
		t.Fatal("/ did not open the frames filter")
	}
	if cmd := hs.press("ctrl+c"); !isQuit(cmd) {
		t.Fatal("ctrl+c did not quit while capturing")
	}
}

// q quits only from the top level: in the frame detail it does nothing
// (a user's next shell command typed into a still-running sonde must not
// act), and esc goes back.
func TestFramesDetailQDoesNothingEscGoesBack(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.play()
	hs.press("2", "enter")
	if !hs.m.frames.InDetail() {
		t.Fatal("enter did not open the frame detail")
	}
	if cmd := hs.press("q"); isQuit(cmd) || hs.m.quitted {
		t.Fatal("q in the frame detail quit")
	}
	if !hs.m.frames.InDetail() {
		t.Fatal("q left the frame detail")
	}
	hs.press("esc")
	if hs.m.frames.InDetail() {
		t.Fatal("esc did not leave the frame detail")
	}
	// In the detail view q is "back" only for the frames pane: under the
	// help screen it closes the help and leaves the detail open.
	hs.press("enter", "?")
	if cmd := hs.press("q"); isQuit(cmd) || hs.m.showHelp || !hs.m.frames.InDetail() {
		t.Fatalf("q under the help: quit %v help %v detail %v", isQuit(cmd), hs.m.showHelp, hs.m.frames.InDetail())
	}
	hs.press("esc")
	// At the top level, with a request in flight, q asks first: another
	// key stays, q again quits.
	if cmd := hs.press("q"); isQuit(cmd) || !strings.Contains(ansi.Strip(hs.m.helpLine()), "1 request in flight: q again quits") {
		t.Fatalf("q with a request in flight: quit %v, help line %q", isQuit(cmd), ansi.Strip(hs.m.helpLine()))
	}
	if cmd := hs.press("x"); isQuit(cmd) || hs.m.confirmQuit {
		t.Fatal("another key did not cancel the question")
	}
	hs.press("q")
	if cmd := hs.press("q"); !isQuit(cmd) {
		t.Fatal("q, q in the frames list did not quit")
	}
}

// With nothing in flight, q quits at once.
func TestQuitIdle(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.connect()
	if cmd := hs.press("q"); !isQuit(cmd) {
		t.Fatal("q did not quit an idle session")
	}
}

func TestMouse(t *testing.T) {
	// 120x40: pending {0,0,54,19}, tools {0,19,54,19}, frames {54,0,66,24},
	// stderr {54,24,66,14}; the help line and status bar are rows 38-39.
	hs := newHarness(t, 120, 40)
	hs.play()
	click := func(x, y int) tea.Cmd {
		return hs.send(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	}
	for _, c := range []struct{ x, y, want int }{
		{60, 30, paneStderr}, {5, 25, paneTools}, {100, 2, paneFrames}, {0, 0, panePending},
		{119, 37, paneStderr}, {53, 18, panePending}, {54, 18, paneFrames}, {53, 19, paneTools},
		{10, 38, -1}, {10, 39, -1}, // the help line and the status bar: focus stays
	} {
		from := paneTools
		if c.want == paneTools {
			from = paneFrames
		}
		hs.m.setFocus(from)
		click(c.x, c.y)
		want := c.want
		if want < 0 {
			want = from
		}
		if hs.m.focus != want {
			t.Errorf("click at %d,%d: focus %d, want %d", c.x, c.y, hs.m.focus, want)
		}
	}
	// The wheel scrolls the pane under the pointer without focusing it
	// (with more frames than rows, in follow mode).
	e := events{seq: 100}
	for i := range 30 {
		e.frame(6000+i, client.In, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`, client.VerdictNotification, "")
	}
	hs.feed(e.take()...)
	hs.press("2", "G", "1")
	if !hs.m.frames.Following() {
		t.Fatal("frames not following before the wheel")
	}
	hs.send(tea.MouseWheelMsg{X: 80, Y: 10, Button: tea.MouseWheelUp})
	if hs.m.focus != panePending {
		t.Fatalf("wheel moved the focus to %d", hs.m.focus)
	}
	if hs.m.frames.Following() {
		t.Fatal("wheel up over frames did not scroll it (still following)")
	}
	// A click inside frames selects a row (coordinates are made relative
	// to the pane's inside): row 1 of the list is its oldest visible frame.
	click(60, 2)
	if hs.m.focus != paneFrames || hs.m.frames.Following() {
		t.Fatalf("click on a frame row: focus %d following %v", hs.m.focus, hs.m.frames.Following())
	}
}

func TestEventsReachEveryPane(t *testing.T) {
	hs := newHarness(t, 120, 40, withLesson)
	hs.play()
	if got := hs.m.pending.InFlight(); got != 1 {
		t.Errorf("pending in flight %d, want 1 (id 6)", got)
	}
	if got := hs.m.frames.Len(); got != scenarioFrames {
		t.Errorf("frames %d, want %d", got, scenarioFrames)
	}
	if v := hs.m.stderr.View(); !strings.Contains(v, "slow: step 2/4") || !strings.Contains(v, "hang: done after 2.5s, answering anyway") {
		t.Errorf("stderr pane lacks the lines:\n%s", v)
	}
	if !strings.Contains(hs.m.tools.Title(), "Tools 4") {
		t.Errorf("tools pane: %q", hs.m.tools.Title())
	}
	// The lesson pane keeps a trail of tools/call for its FIFO view.
	hs.m.lesson.ToggleFIFO()
	if v := hs.m.lesson.View(); !strings.Contains(v, "hi") {
		t.Errorf("lesson FIFO view lacks the calls:\n%s", v)
	}
	st := hs.status()
	for _, want := range []string{"demo-server 1.4.0", "2025-06-18", "stdio pid 4242", "pending 1", "0.2 calls/s", "errors 3"} {
		if !strings.Contains(st, want) {
			t.Errorf("status bar lacks %q: %q", want, st)
		}
	}
	if strings.Contains(st, "missed") {
		t.Errorf("status bar reports missed events: %q", st)
	}

	// The subscription's missed count reaches the status bar.
	hs.send(eventsMsg{gen: hs.m.gen, sub: hs.sub, evs: nil, missed: 7})
	if st := hs.status(); !strings.Contains(st, "UI missed 7 events") {
		t.Errorf("status bar lacks the missed count: %q", st)
	}

	// The process exit shows in the status bar, with its status.
	var e events
	e.proc(6000, client.ProcInfo{What: client.ProcExit, Pid: 4242, Exit: &client.Exit{Pid: 4242, Code: 3}})
	hs.feed(e.take()...)
	if st := hs.status(); !strings.Contains(st, "exited: exit code 3") {
		t.Errorf("status bar lacks the exit: %q", st)
	}
}

func TestProcessExitWithoutStatus(t *testing.T) {
	hs := newHarness(t, 80, 24)
	var e events
	e.proc(0, client.ProcInfo{What: client.ProcStart, Pid: 7})
	e.proc(10, client.ProcInfo{What: client.ProcExit, Pid: 7}) // no Exit: must not crash the UI
	hs.feed(e.take()...)
	if st := hs.status(); !strings.Contains(st, "pid 7") || !strings.Contains(st, "exited") {
		t.Fatalf("status bar: %q", st)
	}
	hs.screen()
}

func TestStartError(t *testing.T) {
	hs := newHarness(t, 80, 24)
	err := errors.New(`MCP_SPAWN: exec: "srv": executable file not found in $PATH`)
	if cmd := hs.send(startedMsg{gen: hs.m.gen, err: err}); cmd != nil {
		t.Fatal("a failed start returned a command")
	}
	if hs.m.conn.starting || hs.m.sess.Client != nil {
		t.Fatalf("conn %+v sess %+v", hs.m.conn, hs.m.sess)
	}
	if st := hs.status(); !strings.Contains(st, "MCP_SPAWN: exec:") || strings.Contains(st, "starting") {
		t.Fatalf("status bar: %q", st)
	}
	// A restart clears the error while it runs.
	hs.press("ctrl+r")
	if st := hs.status(); strings.Contains(st, "MCP_SPAWN") || !strings.Contains(st, "restarting…") {
		t.Fatalf("status bar during the restart: %q", st)
	}
}

func TestInitialized(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.send(startedMsg{gen: hs.m.gen, sess: Conn{Client: hs.c, Sub: hs.sub}})
	if st := hs.status(); strings.Contains(st, "starting") {
		t.Fatalf("still starting after startedMsg: %q", st)
	}
	// A result of another generation is ignored.
	if cmd := hs.send(initializedMsg{gen: hs.m.gen + 1, res: initResult(), era: client.EraLegacy}); cmd != nil || hs.m.conn.server.Name != "" {
		t.Fatal("an initializedMsg of another generation was applied")
	}
	if cmd := hs.send(initializedMsg{gen: hs.m.gen, res: initResult(), era: client.EraLegacy}); cmd == nil {
		t.Fatal("initializedMsg did not list the tools")
	}
	if hs.m.conn.server.Name != "demo-server" || hs.m.conn.server.Version != "1.4.0" || hs.m.conn.protocol != "2025-06-18 legacy" {
		t.Fatalf("conn %+v", hs.m.conn)
	}
	if st := hs.status(); !strings.Contains(st, "sonde │ demo-server 1.4.0 │ 2025-06-18 legacy │ stdio") {
		t.Fatalf("status bar: %q", st)
	}
	// A failed handshake shows its error instead.
	hs.send(initializedMsg{gen: hs.m.gen, err: errors.New("MCP_HANDSHAKE: unsupported protocol version")})
	if st := hs.status(); !strings.Contains(st, "MCP_HANDSHAKE: unsupported protocol version") {
		t.Fatalf("status bar: %q", st)
	}
	// So does a failed tools/list.
	hs.send(toolsListedMsg{gen: hs.m.gen, err: errors.New("MCP_TIMEOUT: tools/list")})
	if st := hs.status(); !strings.Contains(st, "MCP_TIMEOUT: tools/list") {
		t.Fatalf("status bar: %q", st)
	}
}

// What the server says of itself in its handshake, and an error it
// sends, reach the status bar only through textfmt: no byte of them acts
// on the terminal.
func TestStatusBarCleansServerText(t *testing.T) {
	hs := newHarness(t, 200, 40)
	hs.send(startedMsg{gen: hs.m.gen, sess: Conn{Client: hs.c, Sub: hs.sub}})
	res := initResult()
	res.ServerInfo.Name, res.ServerInfo.Version, res.ProtocolVersion = "evil\x1b]0;pwned\x07", "1\x1b[2J", "2025\x9b1m"
	hs.send(initializedMsg{gen: hs.m.gen, res: res, era: client.EraLegacy})
	if bar := hs.m.statusBar(); strings.Contains(bar, "\x07") || strings.Contains(bar, "\x9b") || strings.Contains(bar, "\x1b]0;") || strings.Contains(bar, "\x1b[2J") {
		t.Errorf("the server's name, version or protocol reached the status bar unescaped: %q", bar)
	}
	hs.send(initializedMsg{gen: hs.m.gen, err: errors.New("MCP_HANDSHAKE: \x1b]0;pwned\x07")})
	if bar := hs.m.statusBar(); strings.Contains(bar, "\x1b]0;") || strings.Contains(bar, "\x07") {
		t.Errorf("an error reached the status bar unescaped: %q", bar)
	}
}

// closed reports whether sub's channel is closed (the client was closed).
func closed(sub *client.Subscription) bool {
	for {
		select {
		case _, ok := <-sub.C:
			if !ok {
				return true
			}
		default:
			return false
		}
	}
}

func TestStaleStartClosesItsClient(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.connect()
	restart := hs.press("ctrl+r")
	if restart == nil || hs.m.gen != 1 {
		t.Fatalf("restart: cmd %v gen %d", restart != nil, hs.m.gen)
	}
	// The start of generation 0 arrives after the restart began.
	stale, err := hs.start()
	if err != nil {
		t.Fatal(err)
	}
	cmd := hs.send(startedMsg{gen: 0, sess: stale})
	if hs.m.sess.Client != nil || !hs.m.conn.restarting {
		t.Fatalf("a stale start was taken: sess %+v conn %+v", hs.m.sess, hs.m.conn)
	}
	// Closing a client is I/O (it waits for its server to stop): it runs in
	// the returned command, not in Update.
	if closed(stale.Sub) {
		t.Fatal("Update closed the stale client itself")
	}
	if cmd == nil {
		t.Fatal("a stale start returned no command to close its client")
	}
	if msg := cmd(); msg != nil {
		t.Fatalf("close command returned %T", msg)
	}
	if !closed(stale.Sub) {
		t.Fatal("the stale session's client was not closed")
	}
	// A stale failed start has nothing to close.
	if cmd := hs.send(startedMsg{gen: 0, err: errors.New("boom")}); cmd != nil || hs.m.conn.err != nil {
		t.Fatal("a stale failed start was taken")
	}
}

func TestRestart(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.play()
	frames := hs.m.frames.Len()
	cmd := hs.press("ctrl+r")
	if cmd == nil || hs.m.gen != 1 || !hs.m.conn.restarting || hs.m.sess.Client != nil {
		t.Fatalf("ctrl+r: cmd %v gen %d conn %+v", cmd != nil, hs.m.gen, hs.m.conn)
	}
	if st := hs.status(); !strings.Contains(st, "restarting…") || strings.Contains(st, "pid") {
		t.Fatalf("status bar: %q", st)
	}
	if again := hs.press("ctrl+r"); again != nil || hs.m.gen != 1 {
		t.Fatal("a second ctrl+r during the restart started another")
	}
	if hs.m.frames.Len() != frames {
		t.Fatal("the restart dropped the frames history")
	}
	// Events of the old session still reach the panes, but not the status.
	var e events
	e.seq = 100
	e.req(6000, 6, "tools/call", "slow", client.StateExited).Err = errors.New("MCP_PROCESS_EXIT: server exited")
	e.proc(6001, client.ProcInfo{What: client.ProcExit, Pid: 4242, Exit: &client.Exit{Pid: 4242, Signal: "SIGTERM", Code: -1}})
	if c := hs.send(eventsMsg{gen: 0, sub: hs.sub, evs: e.take()}); c == nil {
		t.Fatal("old session's events did not re-arm its pump")
	}
	if hs.m.pending.InFlight() != 0 {
		t.Fatalf("old session's outcome not applied: %d in flight", hs.m.pending.InFlight())
	}
	if st := hs.status(); strings.Contains(st, "exited") || !strings.Contains(st, "errors 4") {
		t.Fatalf("status bar after the old session's exit: %q", st)
	}
	// The command stops and closes the old session, then starts a new one.
	msg := cmd()
	started, ok := msg.(startedMsg)
	if !ok || started.gen != 1 || started.err != nil || started.sess.Client == nil {
		t.Fatalf("restart command returned %#v", msg)
	}
	if hs.starts != 1 || !closed(hs.sub) {
		t.Fatalf("starts %d, old client closed %v", hs.starts, closed(hs.sub))
	}
	// The old pump ends when its subscription closes.
	if c := waitEvents(0, hs.sub); c() != (subClosedMsg{0}) {
		t.Fatal("the old pump did not end")
	}
	if c := hs.send(started); c == nil || hs.m.sess != started.sess || hs.m.conn.restarting || hs.m.conn.starting {
		t.Fatalf("new session not taken: conn %+v", hs.m.conn)
	}
	if hs.send(subClosedMsg{0}) != nil {
		t.Fatal("subClosedMsg returned a command")
	}
}

func TestPump(t *testing.T) {
	hs := newHarness(t, 80, 24)
	// A never-connected client rejects calls at once, with one event each:
	// real events on the subscription.
	for range 3 {
		if _, err := hs.c.Go(context.Background(), "ping", nil, client.CallOptions{}).Wait(); err == nil {
			t.Fatal("a call without a server succeeded")
		}
	}
	msg := waitEvents(hs.m.gen, hs.sub)()
	em, ok := msg.(eventsMsg)
	if !ok || len(em.evs) != 3 || em.sub != hs.sub || em.gen != hs.m.gen {
		t.Fatalf("pump returned %#v", msg)
	}
	next := hs.send(em)
	if next == nil {
		t.Fatal("the batch did not re-arm the pump")
	}
	if st := hs.status(); !strings.Contains(st, "errors 3") {
		t.Fatalf("rejected calls are not counted: %q", st)
	}
	hs.c.Close()
	if msg := next(); msg != (subClosedMsg{hs.m.gen}) {
		t.Fatalf("re-armed pump returned %#v after the close", msg)
	}
}

func TestPaneRequests(t *testing.T) {
	t.Run("without a session", func(t *testing.T) {
		hs := newHarness(t, 80, 24)
		for _, msg := range []tea.Msg{pending.CancelMsg{ID: 3}, tools.CallMsg{Tool: "echo", Args: []byte(`{}`)}, tools.RefreshMsg{}} {
			if cmd := hs.send(msg); cmd != nil {
				t.Errorf("%T without a session returned a command", msg)
			}
		}
	})
	t.Run("with a session", func(t *testing.T) {
		hs := newHarness(t, 80, 24)
		hs.connect()
		cancel := hs.send(pending.CancelMsg{ID: 3})
		if cancel == nil {
			t.Fatal("CancelMsg returned no command")
		}
		if msg := cancel(); msg != nil {
			t.Fatalf("cancel command returned %#v", msg)
		}
		if hs.send(tools.RefreshMsg{}) == nil {
			t.Fatal("RefreshMsg returned no command")
		}
		call := hs.send(tools.CallMsg{Tool: "echo", Args: []byte(`{"message":"hi"}`)})
		if call == nil {
			t.Fatal("CallMsg returned no command")
		}
		done, ok := call().(toolDoneMsg)
		if res := done.res; !ok || res.Tool != "echo" || res.Err == nil || done.call.Tool != "echo" || done.gen != hs.m.gen {
			t.Fatalf("call command returned %#v", done)
		}
		// The result is routed to the tools pane whatever the focus.
		hs.send(done)
		if s := hs.screen(); !strings.Contains(s, "CLIENT_CLOSED: tools/call: not") {
			t.Fatalf("tools pane does not show the failed call:\n%s", s)
		}
	})
}

func TestShowFrames(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.play()
	hs.send(pending.ShowFramesMsg{ID: jsonrpc.Int(5), Dir: client.Out})
	if hs.m.focus != paneFrames {
		t.Fatalf("focus %d, want frames", hs.m.focus)
	}
	if got := hs.m.frames.Title(); !strings.Contains(got, "filter: id 5") {
		t.Fatalf("frames title %q", got)
	}
}

func TestLessonKeys(t *testing.T) {
	hs := newHarness(t, 120, 40, withLesson)
	hs.play() // the handshake attaches the client to the lesson
	ls := hs.m.lesson.(*lesson.Model)
	if hs.press("space"); ls.Step() != 1 {
		t.Fatalf("space: step %d, want 1", ls.Step())
	}
	if hs.press("o"); !strings.Contains(ls.Title(), "FIFO view") {
		t.Fatalf("o: title %q", ls.Title())
	}
	// Space advances the lesson from any pane.
	if hs.press("1", "space"); ls.Step() != 2 || hs.m.focus != panePending {
		t.Fatalf("space on pending: step %d focus %d", ls.Step(), hs.m.focus)
	}
	// n is also "next problem" in Frames: there the pane's key wins.
	hs.press("2", "g", "n")
	if ls.Step() != 2 {
		t.Fatalf("n in frames advanced the lesson to step %d", ls.Step())
	}
	if sel := selectedRow(hs.m.frames.View()); !strings.Contains(sel, "malformed") {
		t.Fatalf("n in frames did not jump to the next problem; selected %q", sel)
	}
	if hs.press("5", "space"); ls.Step() != 3 {
		t.Fatalf("space in the lesson: step %d, want 3", ls.Step())
	}
	// lesson.RestartMsg (its last step) restarts the server.
	if cmd := hs.send(lesson.RestartMsg{}); cmd == nil || hs.m.gen != 1 {
		t.Fatal("RestartMsg did not restart")
	}
}

// selectedRow is the row of a pane view drawn reversed (the selection in
// NoColor), without styling.
func selectedRow(view string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, "\x1b[7m") || strings.Contains(l, ";7m") {
			return ansi.Strip(l)
		}
	}
	return ""
}

func TestBackgroundColor(t *testing.T) {
	white := tea.BackgroundColorMsg{Color: color.White}
	black := tea.BackgroundColorMsg{Color: color.Black}
	t.Run("follows the terminal", func(t *testing.T) {
		hs := newHarness(t, 80, 24, withPalette(theme.Dark(), false))
		if cmd := hs.send(white); cmd != nil {
			t.Fatal("BackgroundColorMsg returned a command")
		}
		if hs.m.styles.Palette != theme.Light() {
			t.Fatalf("light terminal: palette %+v", hs.m.styles.Palette)
		}
		// The new palette reaches the screen (the status bar's accent).
		if v := hs.m.View().Content; !strings.Contains(v, "38;2;5;80;174") {
			t.Fatal("the light accent is not drawn")
		}
		hs.send(black)
		if hs.m.styles.Palette != theme.Dark() {
			t.Fatalf("dark terminal: palette %+v", hs.m.styles.Palette)
		}
		if v := hs.m.View().Content; !strings.Contains(v, "38;2;122;162;247") {
			t.Fatal("the dark accent is not drawn")
		}
	})
	t.Run("NO_COLOR keeps no colour", func(t *testing.T) {
		hs := newHarness(t, 80, 24)
		hs.send(white)
		if hs.m.styles.Palette != theme.NoColor() {
			t.Fatalf("palette %+v", hs.m.styles.Palette)
		}
		if v := hs.m.View().Content; strings.Contains(v, "38;2;") {
			t.Fatal("colours drawn under NO_COLOR")
		}
	})
}

func TestTick(t *testing.T) {
	hs := newHarness(t, 80, 24)
	var e events
	e.call(0, 1, "tools/call", "slow", "", 10_000)
	hs.feed(e.take()...)
	if cmd := hs.tick(2500); cmd == nil {
		t.Fatal("tick did not re-arm")
	}
	if !hs.m.now.Equal(at(2500)) {
		t.Fatalf("root clock %v", hs.m.now)
	}
	// The pending pane's clock moved with it: the call is 2.5s old.
	if entries := hs.m.pending.Entries(); len(entries) != 1 || entries[0].Age.Seconds() != 2.5 {
		t.Fatalf("pending entries %+v", entries)
	}
}

// With Options.First the UI uses the session its caller already started
// and does not start another.
func TestFirstSessionIsUsed(t *testing.T) {
	var hs *harness
	first := Conn{}
	hs = newHarness(t, 80, 24, func(o *Options) { o.First = &first })
	first.Client = hs.c
	first.Sub = hs.sub
	batch, ok := hs.m.Init()().(tea.BatchMsg)
	if !ok || len(batch) == 0 {
		t.Fatal("Init is not a batch")
	}
	started, ok := batch[0]().(startedMsg) // the first command starts the session
	if !ok || started.sess.Client != hs.c || started.err != nil || hs.starts != 0 {
		t.Fatalf("started %+v, Start called %d times", started, hs.starts)
	}
}

func TestMouseIgnoredUnderHelp(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.press("?")
	before := hs.m.focus
	hs.send(tea.MouseClickMsg{X: 100, Y: 35, Button: tea.MouseLeft}) // over stderr at 120x40
	if hs.m.focus != before || !hs.m.showHelp {
		t.Fatalf("a click under the help screen moved the focus to %d", hs.m.focus)
	}
	hs.press("esc")
	hs.send(tea.MouseClickMsg{X: 100, Y: 35, Button: tea.MouseLeft})
	if hs.m.focus != paneStderr {
		t.Fatalf("focus %d after a click on stderr, want %d", hs.m.focus, paneStderr)
	}
}

// A request that fails with MCP_SESSION_EXPIRED says so in the status bar
// (ctrl+r starts a new session); with Reconnect the UI restarts by itself.
func TestSessionExpired(t *testing.T) {
	expired := func() client.Event {
		return client.Event{Time: at(100), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(3), Method: "tools/list",
			State: client.StateHTTP, Err: &client.Error{Code: client.CodeExpired, Message: "tools/list 3: HTTP 404 for session s"}}}
	}
	t.Run("hint", func(t *testing.T) {
		hs := newHarness(t, 120, 30)
		hs.connect()
		hs.feed(expired())
		if st := hs.status(); !strings.Contains(st, "session expired: ctrl+r starts a new one") {
			t.Fatalf("status bar: %q", st)
		}
		hs.press("ctrl+r")
		if st := hs.status(); strings.Contains(st, "session expired") || hs.m.gen != 1 {
			t.Fatalf("after ctrl+r: gen %d, status %q", hs.m.gen, st)
		}
	})
	t.Run("reconnect", func(t *testing.T) {
		hs := newHarness(t, 120, 30, func(o *Options) { o.Reconnect = true })
		hs.connect()
		if cmd := hs.feed(expired()); cmd == nil || hs.m.gen != 1 || !hs.m.conn.restarting {
			t.Fatalf("no automatic restart: gen %d restarting %v", hs.m.gen, hs.m.conn.restarting)
		}
	})
}
