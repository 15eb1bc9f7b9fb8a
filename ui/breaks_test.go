package ui

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/ui/frames"
	"github.com/sonde-mcp/sonde/ui/pending"
)

// outcomes records what the Engine asked the transport to do.
type outcomes struct {
	mu  sync.Mutex
	out []hold.Outcome
}

func (o *outcomes) deliver(x hold.Outcome) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.out = append(o.out, x)
	return nil
}

func (o *outcomes) got() []hold.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]hold.Outcome(nil), o.out...)
}

const (
	callEcho7   = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"value":"v"}}}`
	answerEcho7 = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"v"}]}}`
)

// breaksHarness is a harness whose session holds frames through a real
// Engine (LocalBreaks, polled), with its clock fixed at the harness's.
func breaksHarness(t *testing.T, timeout time.Duration, exprs ...string) (*harness, *hold.Engine, *outcomes) {
	t.Helper()
	e := hold.New(hold.Options{Timeout: timeout, Now: func() time.Time { return at(nowMS) }})
	if err := e.Load(exprs, "", nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	hs := newHarness(t, 120, 36, func(o *Options) { o.Breaks = LocalBreaks(e, nil) })
	hs.connect()
	return hs, e, &outcomes{}
}

// run runs cmd (a breakpoints command, or a batch of them) and hands its
// messages to Update, as the program would.
func (hs *harness) run(cmd tea.Cmd) {
	hs.t.Helper()
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			hs.run(c)
		}
	case breaksMsg, heldOpenMsg, breakpointsOpenMsg, frames.BreakMsg, pending.BreakMsg:
		hs.run(hs.send(msg))
	default:
		hs.t.Fatalf("unexpected message %T", msg)
	}
}

// list asks the Engine for its state, as a change or a poll does.
func (hs *harness) list() {
	hs.t.Helper()
	hs.run(breaksCmd(hs.m.brk.src, hold.MethodList, nil, "", ""))
}

func wantScreen(t *testing.T, hs *harness, want ...string) {
	t.Helper()
	s := hs.screen()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Fatalf("screen lacks %q:\n%s", w, s)
		}
	}
}

// A held frame opens the Held dialog by itself, with its countdown; f
// forwards it unchanged, and the dialog closes with the last one.
func TestBreaksHeldOpensAndForward(t *testing.T) {
	hs, e, o := breaksHarness(t, 20*time.Second, "dir:in tool:echo")
	e.Offer(client.Out, []byte(callEcho7), o.deliver)
	e.Offer(client.In, []byte(answerEcho7), o.deliver)
	hs.list()
	if _, ok := hs.m.dlg.(*heldDialog); !ok {
		t.Fatalf("no Held dialog: %T", hs.m.dlg)
	}
	wantScreen(t, hs, "held frames · 1", "h1      <-   response      7        20s  tools/call echo", "⏸ 1 held · H")
	hs.run(hs.press("f"))
	if got := o.got(); len(got) != 1 || got[0].Action != client.HoldReleased || got[0].By != client.HoldByUI {
		t.Fatalf("outcomes %+v", got)
	}
	if hs.m.dlg != nil || strings.Contains(hs.status(), "held") {
		t.Fatalf("dialog %T, status %q", hs.m.dlg, hs.status())
	}
}

// Two held frames let go in the order chosen: the second first.
func TestBreaksReleaseOutOfOrder(t *testing.T) {
	hs, e, o := breaksHarness(t, hold.Forever, "dir:in kind:response")
	e.Offer(client.Out, []byte(callEcho7), o.deliver)
	e.Offer(client.Out, []byte(`{"jsonrpc":"2.0","id":8,"method":"ping"}`), o.deliver)
	e.Offer(client.In, []byte(answerEcho7), o.deliver)
	e.Offer(client.In, []byte(`{"jsonrpc":"2.0","id":8,"result":{}}`), o.deliver)
	hs.list()
	wantScreen(t, hs, "held frames · 2", "held  tools/call echo", "held  ping")
	hs.press("down")
	hs.run(hs.press("f"))
	hs.run(hs.press("f"))
	got := o.got()
	if len(got) != 2 || got[0].Handle != "h2" || got[1].Handle != "h1" {
		t.Fatalf("outcomes %+v", got)
	}
}

// enter opens the JSON editor; a malformed edit is refused with the byte
// offset and the frame stays held (the editor open); esc goes back; an
// edit the Engine refuses (an id in flight) says why; a good one is sent.
func TestBreaksEdit(t *testing.T) {
	hs, e, o := breaksHarness(t, hold.Forever, "dir:out tool:echo")
	e.Offer(client.Out, []byte(`{"jsonrpc":"2.0","id":9,"method":"ping"}`), o.deliver) // id 9 in flight
	e.Offer(client.Out, []byte(callEcho7), o.deliver)
	hs.list()
	hs.press("enter")
	d := hs.m.dlg.(*heldDialog)
	if d.step != heldEdit || !d.Capturing() || !strings.Contains(d.editor.Value(), `"name": "echo"`) {
		t.Fatalf("step %v, editor %q", d.step, d.editor.Value())
	}
	hs.send(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if cmd := hs.press("ctrl+s"); cmd != nil {
		t.Fatal("a malformed edit was sent")
	}
	wantScreen(t, hs, "refused at byte 1 (line 1)", "edit h1")
	if len(e.List()) != 1 || d.step != heldEdit {
		t.Fatal("the frame was let go")
	}
	hs.press("esc")
	if d.step != heldList {
		t.Fatal("esc did not go back")
	}
	hs.press("enter")
	d.editor.SetValue(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo"}}`)
	hs.run(hs.press("ctrl+s"))
	if !strings.Contains(hs.screen(), "already has in flight") || len(e.List()) != 1 {
		t.Fatalf("the id collision was not refused:\n%s", hs.screen())
	}
	var be *BreaksError
	if !errors.As(hs.m.brk.err, &be) || be.Code != hold.CodeBadEdit {
		t.Fatalf("err %v", hs.m.brk.err)
	}
	hs.press("enter")
	d.editor.SetValue(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"value":"edited"}}}`)
	hs.run(hs.press("ctrl+s"))
	got := o.got()
	if len(got) != 1 || got[0].Action != client.HoldEdited || !strings.Contains(string(got[0].Frame), "edited") {
		t.Fatalf("outcomes %+v", got)
	}
}

// a answers a held request (an error as CODE:MESSAGE, or a result);
// a response cannot be answered; a malformed result is refused.
func TestBreaksAnswer(t *testing.T) {
	hs, e, o := breaksHarness(t, hold.Forever, "tool:echo")
	e.Offer(client.Out, []byte(callEcho7), o.deliver)
	hs.list()
	hs.press("a")
	d := hs.m.dlg.(*heldDialog)
	if d.step != heldAnswer {
		t.Fatal("a did not ask for the answer")
	}
	d.input.SetValue("{")
	if cmd := hs.press("enter"); cmd != nil {
		t.Fatal("a malformed answer was sent")
	}
	wantScreen(t, hs, "the answer's result is not JSON")
	d.input.SetValue("-32000: not today")
	hs.run(hs.press("enter"))
	got := o.got()
	if len(got) != 1 || got[0].Action != client.HoldAnswered || !strings.Contains(string(got[0].Frame), `"code":-32000,"message":"not today"`) {
		t.Fatalf("outcomes %+v", got)
	}
	e.Offer(client.Out, []byte(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo"}}`), o.deliver)
	e.Offer(client.In, []byte(`{"jsonrpc":"2.0","id":10,"result":{}}`), o.deliver)
	hs.list()
	hs.press("down", "a") // the held response
	wantScreen(t, hs, "only a request can be answered")
	hs.press("up", "a")
	hs.m.dlg.(*heldDialog).input.SetValue(`{"content":[]}`)
	hs.run(hs.press("enter"))
	if got := o.got(); len(got) != 2 || string(got[1].Frame) != `{"jsonrpc":"2.0","id":10,"result":{"content":[]}}` {
		t.Fatalf("outcomes %+v", got)
	}
}

// d drops; esc puts the dialog off (H opens it again, a new frame too).
func TestBreaksDropAndPutOff(t *testing.T) {
	hs, e, o := breaksHarness(t, hold.Forever, "tool:echo")
	e.Offer(client.Out, []byte(callEcho7), o.deliver)
	hs.list()
	hs.press("esc")
	if hs.m.dlg != nil || !hs.m.brk.putOff {
		t.Fatalf("esc: dialog %T", hs.m.dlg)
	}
	hs.list()
	if hs.m.dlg != nil {
		t.Fatal("the put-off dialog opened again on its own")
	}
	hs.run(hs.press("H"))
	if _, ok := hs.m.dlg.(*heldDialog); !ok {
		t.Fatalf("H: %T", hs.m.dlg)
	}
	hs.run(hs.press("d"))
	if got := o.got(); len(got) != 1 || got[0].Action != client.HoldDropped {
		t.Fatalf("outcomes %+v", got)
	}
	e.Offer(client.Out, []byte(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo"}}`), o.deliver)
	hs.press("esc")
	e.Offer(client.Out, []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo"}}`), o.deliver)
	hs.list()
	if _, ok := hs.m.dlg.(*heldDialog); !ok {
		t.Fatal("a frame newly held did not open the dialog")
	}
}

// B lists the breakpoints: space turns one off, a adds one (a bad query
// is refused with why), d deletes; H goes to the held frames.
func TestBreaksBreakpointsDialog(t *testing.T) {
	hs, e, _ := breaksHarness(t, hold.Forever, "tool:echo")
	hs.list()
	hs.run(hs.press("B"))
	if _, ok := hs.m.dlg.(*breakpointsDialog); !ok {
		t.Fatalf("B: %T", hs.m.dlg)
	}
	wantScreen(t, hs, "breakpoints · 1", "on        0  tool:echo")
	hs.run(hs.press("space"))
	if bps := e.Breakpoints(); bps[0].Enabled {
		t.Fatal("space did not turn it off")
	}
	wantScreen(t, hs, "off       0  tool:echo")
	hs.press("a")
	d := hs.m.dlg.(*breakpointsDialog)
	d.input.SetValue("methd:x")
	hs.run(hs.press("enter"))
	wantScreen(t, hs, "unknown field")
	hs.press("a")
	d.input.SetValue("dir:in kind:notification")
	hs.run(hs.press("enter"))
	if bps := e.Breakpoints(); len(bps) != 2 || bps[1].Expr != "dir:in kind:notification" {
		t.Fatalf("breakpoints %+v", bps)
	}
	hs.run(hs.press("x"))
	if bps := e.Breakpoints(); len(bps) != 1 || bps[0].N != 2 {
		t.Fatalf("after delete %+v", bps)
	}
	hs.run(hs.press("H"))
	if _, ok := hs.m.dlg.(*heldDialog); !ok {
		t.Fatalf("H: %T", hs.m.dlg)
	}
	hs.run(hs.press("B"))
	hs.press("esc")
	if hs.m.dlg != nil {
		t.Fatalf("esc: %T", hs.m.dlg)
	}
}

// b on a frame in Frames, and on a row in Pending, sets a breakpoint
// from it.
func TestBreaksFromRows(t *testing.T) {
	hs, e, _ := breaksHarness(t, hold.Forever)
	var ev events
	ev.call(100, 3, "tools/call", "search", `{"name":"search"}`, 30000)
	hs.feed(ev.take()...)
	hs.press("1")
	hs.run(hs.press("b"))
	hs.press("2")
	hs.run(hs.press("b"))
	got := e.Breakpoints()
	if len(got) != 2 || got[0].Expr != "dir:in tool:search" || got[1].Expr != "dir:out kind:request tool:search" {
		t.Fatalf("breakpoints %+v", got)
	}
	if !strings.Contains(hs.status(), "breakpoint set: dir:out kind:request tool:search") {
		t.Fatalf("status %q", hs.status())
	}
}

// A frame let go by the timeout, not by the UI, is said in the status bar.
func TestBreaksAutoContinueSaid(t *testing.T) {
	hs, e, o := breaksHarness(t, time.Hour, "tool:echo")
	e.Offer(client.Out, []byte(callEcho7), o.deliver)
	hs.list()
	hs.press("esc")
	h := hs.m.brk.seen["h1"]
	h.LeftMS = 0 // the timeout is due
	hs.m.brk.seen["h1"] = h
	if err := e.Release(client.HoldByTimeout, "h1"); err != nil {
		t.Fatal(err)
	}
	hs.list()
	if !strings.Contains(hs.status(), "h1 auto-continued after 1h0m0s") {
		t.Fatalf("status %q", hs.status())
	}
}

// Without breakpoints (no Options.Breaks), H and B are refused with the
// reason, and b is not a key of Frames or Pending.
func TestBreaksRefused(t *testing.T) {
	hs := newHarness(t, 120, 36)
	hs.connect()
	hs.press("H")
	if hs.m.dlg != nil || !strings.Contains(hs.status(), "H: this session holds no frames") {
		t.Fatalf("dialog %T, status %q", hs.m.dlg, hs.status())
	}
	hs.press("2")
	if cmd := hs.press("b"); cmd != nil {
		if _, ok := cmd().(frames.BreakMsg); ok {
			t.Fatal("b set a breakpoint")
		}
	}
	if ok, why := (&replayState{}).Can(actBreaks); ok || why == "" {
		t.Fatal("a replay allowed breakpoints")
	}
	if ok, _ := (&fleet{}).Can(actBreak); ok {
		t.Fatal("the fleet allowed breakpoints")
	}
}
