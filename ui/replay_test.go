package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturegen"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/theme"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// sampleCapture is the sample capture of the docs: out-of-order answers, a
// timeout with its late answer, a crash with a call in flight.
const sampleCapture = "../testdata/captures/out-of-order-late-crash.jsonl"

// replayClock is the fake clock of the replay harness (playback ticks are
// sent by the tests with times after it).
var replayClock = time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)

// replayHarness is a root model over a capture; commands are run by the
// test (run), so every load is applied before the next step.
type replayHarness struct {
	t  testing.TB
	m  *Model
	tl *replay.Timeline
}

func newReplayHarness(t testing.TB, path string, w, h int) *replayHarness {
	t.Helper()
	tl, err := replay.Open(path, replay.DefaultLinger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	m := New(Options{Replay: tl, Palette: theme.NoColor(), NoColor: true, Command: path,
		Now: func() time.Time { return replayClock }})
	rh := &replayHarness{t: t, m: m, tl: tl}
	rh.send(tea.WindowSizeMsg{Width: w, Height: h})
	rh.run(m.Init())
	return rh
}

// send delivers msg and runs what it returns.
func (rh *replayHarness) send(msg tea.Msg) {
	rh.t.Helper()
	_, cmd := rh.m.Update(msg)
	rh.run(cmd)
}

// run runs cmd and delivers the loads it produces (and the loads those
// start); playback ticks are dropped: the tests send their own, with fake
// times.
func (rh *replayHarness) run(cmd tea.Cmd) {
	rh.t.Helper()
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			rh.run(c)
		}
	case replayLoadedMsg:
		rh.send(msg)
	}
}

// keys presses each key ("left" and "right" are the arrows).
func (rh *replayHarness) keys(keys ...string) {
	rh.t.Helper()
	for _, k := range keys {
		switch k {
		case "left":
			rh.send(tea.KeyPressMsg{Code: tea.KeyLeft})
		case "right":
			rh.send(tea.KeyPressMsg{Code: tea.KeyRight})
		case "backspace":
			rh.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
		default:
			rh.send(keyMsg(k))
		}
	}
}

// typeText types s one character at a time.
func (rh *replayHarness) typeText(s string) {
	for _, r := range s {
		rh.keys(string(r))
	}
}

func (rh *replayHarness) screen() string {
	rh.t.Helper()
	return screen(rh.t, rh.m)
}

func (rh *replayHarness) status() string { return ansi.Strip(rh.m.statusBar()) }

// foldPending is the pending map built by applying events [0, k) at once,
// at time d, sorted by direction and id.
func foldPending(tl *replay.Timeline, all []client.Event, k int, d time.Duration) []pending.Entry {
	p := pending.New(theme.New(theme.NoColor()))
	p.Apply(all[:k])
	p.SetNow(tl.Header().Start.Add(d))
	return sortedRows(p.Entries())
}

func sortedRows(es []pending.Entry) []pending.Entry {
	slices.SortStableFunc(es, func(a, b pending.Entry) int {
		if a.Dir != b.Dir {
			return int(a.Dir) - int(b.Dir)
		}
		return strings.Compare(a.ID.String(), b.ID.String())
	})
	return es
}

func rowsText(es []pending.Entry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.ID.String() + " " + e.Method + " " + string(e.State) + " age " + e.Age.String() + " left " + e.Remaining.String() + "\n")
	}
	return b.String()
}

// checkPendingAt checks the pane's pending map against the fold of the
// events up to the cursor.
func (rh *replayHarness) checkPendingAt(all []client.Event, k int) {
	rh.t.Helper()
	rh.checkPendingAtTime(all, k, rh.tl.Time(k))
}

// checkPendingAtTime is checkPendingAt with the panes' clock at d (during
// playback, the clock runs between events).
func (rh *replayHarness) checkPendingAtTime(all []client.Event, k int, d time.Duration) {
	rh.t.Helper()
	if rh.m.rp.pos != k {
		rh.t.Fatalf("cursor at %d, want %d", rh.m.rp.pos, k)
	}
	got, want := rowsText(sortedRows(rh.m.pending.Entries())), rowsText(foldPending(rh.tl, all, k, d))
	if got != want {
		rh.t.Fatalf("position %d: pending map\n%s\nwant (the events up to there applied at once)\n%s", k, got, want)
	}
}

func TestReplayOpensAtEndPaused(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	n := rh.tl.Len()
	if rh.m.rp.pos != n || rh.m.rp.playing {
		t.Fatalf("opened at %d (playing %v), want the end %d, paused", rh.m.rp.pos, rh.m.rp.playing, n)
	}
	st := rh.status()
	for _, want := range []string{"sonde replay", "⏸ paused 1x", "event 36/36", "sonde-fixture 0.1.0", "stdio", "pending 0"} {
		if !strings.Contains(st, want) {
			t.Errorf("status bar %q lacks %q", st, want)
		}
	}
	rh.checkPendingAt(capturetest.Events(t, sampleCapture), n)
	golden.Assert(t, "replay_end_120x40", rh.screen())
}

func TestReplayStepAndSeek(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	all := capturetest.Events(t, sampleCapture)
	n := rh.tl.Len()
	rh.keys("left", ",", "left", "left", "left")
	rh.checkPendingAt(all, n-5)
	if !strings.Contains(rh.status(), "event 31/36") || !strings.Contains(rh.status(), "pending 1") {
		t.Fatalf("status %q", rh.status())
	}
	golden.Assert(t, "replay_event31_120x40", rh.screen())
	rh.keys("right", ".")
	rh.checkPendingAt(all, n-3)
	rh.keys("<")
	rh.checkPendingAt(all, 0)
	if !strings.Contains(rh.status(), "event 0/36") || !strings.Contains(rh.status(), "+0µs / 365.2ms") {
		t.Fatalf("status at the start %q", rh.status())
	}
	rh.keys(",") // at the start: stays
	rh.checkPendingAt(all, 0)
	rh.keys(">")
	rh.checkPendingAt(all, n)
	rh.keys(".") // at the end: stays
	rh.checkPendingAt(all, n)
}

// TestReplayPendingAtEveryMoment jumps (t #k) to every position of the
// sample, forwards then backwards, and compares the pending map with the
// fold of the events up to there.
func TestReplayPendingAtEveryMoment(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	all := capturetest.Events(t, sampleCapture)
	n := rh.tl.Len()
	order := make([]int, 0, 2*n+2)
	for k := 0; k <= n; k++ {
		order = append(order, k)
	}
	for k := n; k >= 0; k-- {
		order = append(order, k)
	}
	inFlight := 0
	for _, k := range order {
		rh.keys("t")
		rh.typeText("#" + strconv.Itoa(k))
		rh.keys("enter")
		rh.checkPendingAt(all, k)
		inFlight = max(inFlight, rh.m.pending.InFlight())
	}
	if inFlight < 2 {
		t.Fatalf("at most %d requests in flight at once: the sample proves nothing", inFlight)
	}
}

// TestReplayLongCapture steps back and forth across checkpoints of a
// capture longer than the warm-up, with slow calls in flight across them.
func TestReplayLongCapture(t *testing.T) {
	path := capturegen.Temp(t, "long.jsonl", capturegen.Options{Events: 9000, Step: 5 * time.Millisecond, SlowEvery: 40, SlowFor: 5000, TimeoutEvery: 90})
	rh := newReplayHarness(t, path, 120, 40)
	all := capturetest.Events(t, path)
	n := rh.tl.Len()
	rh.checkPendingAt(all, n)
	rh.keys("left")
	rh.checkPendingAt(all, n-1)
	for _, d := range []string{"10", "30.5", "2s", "21s"} {
		rh.keys("t")
		rh.typeText(d)
		rh.keys("enter")
		off, _ := parseOffset(d)
		rh.checkPendingAt(all, rh.tl.At(off))
	}
	if rh.m.pending.InFlight() < 2 {
		t.Fatalf("%d in flight: no slow call across a checkpoint", rh.m.pending.InFlight())
	}
	rh.keys("left", "left", "right")
	rh.checkPendingAt(all, rh.tl.At(21*time.Second)-1)
}

// TestReplayPlay drives playback with a fake clock: each tick advances the
// cursor by the time elapsed times the speed.
func TestReplayPlay(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	all := capturetest.Events(t, sampleCapture)
	rh.keys("<", "space")
	rp := rh.m.rp
	if !rp.playing || !strings.Contains(rh.status(), "▶ playing 1x") {
		t.Fatalf("not playing: %q", rh.status())
	}
	gen := rp.tickGen
	tick := func(ms int) {
		rh.send(replayTickMsg{gen: gen, t: replayClock.Add(time.Duration(ms) * time.Millisecond)})
	}
	tick(150) // 150ms at 1x
	rh.checkPendingAtTime(all, rh.tl.At(150*time.Millisecond), 150*time.Millisecond)
	if rp.now != 150*time.Millisecond {
		t.Fatalf("clock %v, want 150ms", rp.now)
	}
	rh.keys("+") // 2x: 20ms of ticks are 40ms of capture
	tick(170)
	if rp.now != 190*time.Millisecond {
		t.Fatalf("clock %v at 2x, want 190ms", rp.now)
	}
	rh.checkPendingAtTime(all, rh.tl.At(190*time.Millisecond), 190*time.Millisecond)
	// A tick of an earlier play is ignored.
	rh.send(replayTickMsg{gen: gen - 1, t: replayClock.Add(time.Hour)})
	if rp.now != 190*time.Millisecond {
		t.Fatalf("a stale tick moved the clock to %v", rp.now)
	}
	for range 8 {
		rh.keys("+")
	}
	if !strings.Contains(rh.status(), "instant") {
		t.Fatalf("status %q, want instant", rh.status())
	}
	rh.keys("-", "-", "-", "-", "-", "-", "-", "-", "-")
	if !strings.Contains(rh.status(), "0.25x") {
		t.Fatalf("status %q, want 0.25x", rh.status())
	}
	rh.keys("+", "+", "+", "+", "+", "+") // 20x
	tick(1170)                            // 1s at 20x: past the end
	if rp.playing || rp.pos != rh.tl.Len() {
		t.Fatalf("after the end: playing %v at %d", rp.playing, rp.pos)
	}
	rh.checkPendingAt(all, rh.tl.Len())
	rh.keys("space") // at the end, play starts again from the start
	if !rp.playing || rp.pos != 0 {
		t.Fatalf("replay from the start: playing %v at %d", rp.playing, rp.pos)
	}
	rh.keys("space")
	if rp.playing {
		t.Fatal("space did not pause")
	}
}

func TestReplayJumps(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	all := capturetest.Events(t, sampleCapture)
	rh.keys("<", "e")
	first := rh.m.rp.pos - 1
	if ev := all[first]; ev.Kind != client.EvFrame || ev.Frame.Verdict != client.VerdictMalformed {
		t.Fatalf("e stopped after event %d %+v, want the first malformed frame", first, ev)
	}
	rh.keys("e")
	if rh.m.rp.pos-1 <= first {
		t.Fatal("e did not move on")
	}
	rh.keys("E")
	if rh.m.rp.pos-1 != first {
		t.Fatalf("E went to %d, want %d", rh.m.rp.pos-1, first)
	}
	rh.keys(">", "e")
	if !strings.Contains(rh.status(), "no error or violation after the cursor") {
		t.Fatalf("status %q", rh.status())
	}
	// i: the next frame of the pending pane's selection (here, after a seek
	// to the start, typed).
	rh.keys("<", "i")
	rh.typeText("4")
	rh.keys("enter")
	ev := all[rh.m.rp.pos-1]
	if id, _ := ev.Frame.Msg.ID.Int64(); ev.Kind != client.EvFrame || id != 4 || ev.Frame.Dir.String() != "out" {
		t.Fatalf("i 4 stopped after %+v", ev)
	}
	if rh.m.focus != paneFrames {
		t.Errorf("focus %d, want Frames", rh.m.focus)
	}
	// From the selection: id 4 is in flight here; the next frame of id 4 is
	// its late answer.
	rh.keys("1", "g", "i")
	if v := rh.m.rp.prompt.Value(); v != "4" {
		t.Fatalf("prompt %q, want the selected id 4", v)
	}
	rh.keys("enter")
	if ev := all[rh.m.rp.pos-1]; ev.Frame == nil || ev.Frame.Verdict != client.VerdictLate {
		t.Fatalf("i from the selection stopped after %+v", ev)
	}
	rh.keys("i", "backspace") // the selection's id is offered: replace it
	rh.typeText(`"x"`)
	rh.keys("enter")
	if !strings.Contains(rh.status(), `no frame with id "x"`) {
		t.Fatalf("status %q", rh.status())
	}
	rh.keys("t")
	rh.typeText("soon")
	rh.keys("enter")
	if !strings.Contains(rh.status(), `"soon" is not a time`) {
		t.Fatalf("status %q", rh.status())
	}
	rh.keys("t", "esc")
	if rh.m.rp.asking != promptNone {
		t.Fatal("esc did not close the prompt")
	}
}

func TestReplayPromptGolden(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 80, 24)
	rh.keys("t")
	rh.typeText("0.2")
	golden.Assert(t, "replay_prompt_80x24", rh.screen())
	rh.keys("enter")
	if rh.m.rp.pos != rh.tl.At(200*time.Millisecond) || rh.m.rp.now != 200*time.Millisecond {
		t.Fatalf("cursor at %d, clock %v; want the events up to 0.2s, the clock at 0.2s", rh.m.rp.pos, rh.m.rp.now)
	}
	// The pending map is that of 0.2s: ages count to then.
	rh.checkPendingAtTime(capturetest.Events(t, sampleCapture), rh.m.rp.pos, 200*time.Millisecond)
}

func TestReplayReadOnly(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	rh.send(tools.CallMsg{Tool: "echo", Args: []byte(`{}`)})
	if !strings.Contains(rh.status(), "read-only") {
		t.Fatalf("status %q", rh.status())
	}
	rh.keys("ctrl+r")
	if rh.m.conn.restarting {
		t.Fatal("ctrl+r restarted something in a replay")
	}
}

func TestReplayTruncatedWarns(t *testing.T) {
	path := capturegen.Temp(t, "cut.jsonl", capturegen.Options{Events: 30, Truncate: true})
	rh := newReplayHarness(t, path, 120, 40)
	if !strings.Contains(rh.status(), "⚠ truncated capture") {
		t.Fatalf("status %q", rh.status())
	}
}

func TestReplayHelpScreen(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	rh.keys("?")
	s := rh.screen()
	for _, want := range []string{"Replay", "space play/pause", "←/, step back", "t jump to time", "i next frame of id", "E prev error"} {
		if !strings.Contains(s, want) {
			t.Errorf("help screen lacks %q", want)
		}
	}
	if strings.Contains(s, "restart server") || strings.Contains(s, "record on/off") || strings.Contains(s, "edit roots") {
		t.Error("the help screen offers restart, record or roots in a replay")
	}
	rh.keys("esc")
	if rh.m.showHelp {
		t.Fatal("esc did not close the help")
	}
}

// TestReplayEmptyCapture: a capture with a header and nothing else opens
// (event 0/0), and every key is harmless.
func TestReplayEmptyCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	header := `{"type":"header","format":"sonde-capture","version":"1.0","sonde":"v0.1.0","start":"2026-01-01T00:00:00Z","transport":"stdio"}` + "\n"
	if err := os.WriteFile(path, []byte(header), 0o600); err != nil {
		t.Fatal(err)
	}
	rh := newReplayHarness(t, path, 120, 24)
	rh.keys("space", "left", "right", "<", ">", "e", "E", "+", "-")
	rh.keys("t")
	rh.typeText("5s")
	rh.keys("enter")
	rh.keys("i")
	rh.typeText("1")
	rh.keys("enter")
	if st := rh.status(); !strings.Contains(st, "+0µs / 0µs │ event 0/0") || !strings.Contains(st, `no frame with id 1`) {
		t.Fatalf("status %q", st)
	}
	rh.screen()
}

// In a replay the Timeline follows the cursor: at the start nothing has
// happened; at the end the calls are there, the crash's call in flight
// until the exit; stepping back moves the window with the cursor.
func TestReplayTimelineFollowsCursor(t *testing.T) {
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	rh.keys("7")
	end := rh.screen()
	for _, want := range []string{"7 Timeline 10s", "2 tools/call echo", "5 tools/call crash", "latency in this window"} {
		if !strings.Contains(end, want) {
			t.Fatalf("at the end the timeline lacks %q:\n%s", want, end)
		}
	}
	rh.keys("<")
	if s := rh.screen(); !strings.Contains(s, "no request in this window") {
		t.Fatalf("at the start the timeline shows requests:\n%s", s)
	}
	rh.keys("t")
	for _, r := range "#20" {
		rh.keys(string(r))
	}
	rh.keys("enter")
	s := rh.screen()
	if !strings.Contains(s, "2 tools/call echo") || strings.Contains(s, "5 tools/call crash") {
		t.Fatalf("at event 20 the timeline shows:\n%s", s)
	}
}
