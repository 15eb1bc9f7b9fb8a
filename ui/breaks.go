package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Breaks is what the UI drives a session's breakpoints and held frames
// through (docs/breakpoints.md): the Engine of sonde's own session
// (LocalBreaks), or a tapped session's socket (sonde watch). Every call
// is one of hold's control methods and answers the state after it.
type Breaks interface {
	// Control runs method (hold.MethodList, hold.MethodRelease, …) with
	// params (nil: none) and returns the state after it; a refusal is an
	// error whose text says why (an edit's with the byte offset).
	Control(ctx context.Context, method string, params any) (hold.State, error)
	// Changed is signalled when the state may have changed; nil means
	// the UI asks again at each tick of its clock.
	Changed() <-chan struct{}
}

// localBreaks drives an Engine in this process.
type localBreaks struct {
	e       *hold.Engine
	changed <-chan struct{}
}

// LocalBreaks drives e, the Engine of sonde's own session, for the UI;
// changed is signalled by e's Options.Changed (nil: the UI polls).
func LocalBreaks(e *hold.Engine, changed <-chan struct{}) Breaks {
	return &localBreaks{e: e, changed: changed}
}

// Control runs the method on the Engine, decided by the UI.
func (l *localBreaks) Control(_ context.Context, method string, params any) (hold.State, error) {
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return hold.State{}, err
		}
		raw = b
	}
	st, jerr := l.e.Control(client.HoldByUI, method, raw)
	if jerr != nil {
		return hold.State{}, &BreaksError{Code: jerr.Code, Message: jerr.Message}
	}
	return st, nil
}

// Changed is signalled by the Engine's Changed.
func (l *localBreaks) Changed() <-chan struct{} { return l.changed }

// BreaksError is a refusal of a control method, with its code
// (hold.CodeNoHandle, …; docs/breakpoints.md, "Errors").
type BreaksError struct {
	Code    int64
	Message string
}

func (e *BreaksError) Error() string { return e.Message }

// breaksWait bounds one control call.
const breaksWait = 10 * time.Second

// breaksState is what the UI knows of the session's breakpoints: the
// state last listed, when, and what became of the frames it saw held.
type breaksState struct {
	src Breaks
	st  hold.State
	at  time.Time // when st was listed
	// seen are the handles shown held; put off: the Held dialog was closed
	// with esc while these were held (it opens again for a new one).
	seen   map[string]hold.Held
	putOff bool
	mine   map[string]bool // handles the UI let go itself (not auto-continued)
	note   string          // the last outcome or refusal, for the status bar
	err    error           // the last call that failed
	now    func() time.Time
	polled time.Time // when a polled source was last asked (breaksPoll)
}

// breaksPoll is how often a source without Changed is asked for its state
// (besides when a hold note comes in the session's events).
const breaksPoll = time.Second

// Messages of the breakpoints' commands.
type (
	// breaksMsg carries the state after a control call (op says which,
	// for the status bar; handle the frame it was about).
	breaksMsg struct {
		st     hold.State
		err    error
		op     string
		handle string
		at     time.Time
	}
	// breaksChangedMsg: the source said the state changed.
	breaksChangedMsg struct{}
)

// breaksCmd runs one control method.
func breaksCmd(src Breaks, method string, params any, op, handle string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), breaksWait)
		defer cancel()
		st, err := src.Control(ctx, method, params)
		return breaksMsg{st: st, err: err, op: op, handle: handle}
	}
}

// waitBreaks waits for the source's next change (the re-armed command of
// the breakpoints; none when the source is polled).
func waitBreaks(src Breaks) tea.Cmd {
	ch := src.Changed()
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		<-ch
		return breaksChangedMsg{}
	}
}

// breaksInit lists the state once and arms the wait.
func (b *breaksState) init() tea.Cmd {
	return tea.Batch(breaksCmd(b.src, hold.MethodList, nil, "", ""), waitBreaks(b.src))
}

// handleParams name the frame a control call is about.
type handleParams struct {
	Handle string `json:"handle"`
}

// applyBreaks takes the state a call answered: what the UI did is said in
// the status bar, a frame let go by the timeout too, and the Held dialog
// opens on a frame newly held (unless put off) or follows the state.
func (m *Model) applyBreaks(msg breaksMsg) {
	b := m.brk
	msg.at = m.now // the countdowns run on the UI's clock
	if msg.err != nil {
		b.err = msg.err
		b.note = msg.op + ": " + msg.err.Error()
		if d, ok := m.dlg.(*heldDialog); ok {
			d.refused(msg.handle, msg.err)
		}
		if d, ok := m.dlg.(*breakpointsDialog); ok {
			d.err = msg.err
		}
		return
	}
	b.err = nil
	if msg.op != "" {
		b.note = msg.op
		if msg.handle != "" {
			b.mine[msg.handle] = true
		}
	}
	now := map[string]hold.Held{}
	fresh := false
	for _, h := range msg.st.Held {
		now[h.Handle] = h
		if _, ok := b.seen[h.Handle]; !ok {
			fresh = true
		}
	}
	for handle, h := range b.seen {
		if _, ok := now[handle]; !ok && !b.mine[handle] && msg.op == "" {
			b.note = gone(h, b.at, msg.at)
		}
		if _, ok := now[handle]; !ok {
			delete(b.mine, handle)
		}
	}
	hadHeld := len(b.seen) > 0
	b.st, b.at, b.seen = msg.st, msg.at, now
	if c := m.sess.Client; m.lv != nil && c != nil {
		// sonde's own requests do not time out while their frames (or
		// any) are held: the time held is not the server's.
		c.HoldForFrames(len(now) > 0)
	}
	if fresh {
		b.putOff = false
	}
	switch d := m.dlg.(type) {
	case *heldDialog:
		d.follow(b)
		if hadHeld && len(now) == 0 && d.step == heldList {
			m.dlg = nil // the last one let go: back to the panes
			m.openNextAsk()
		}
	case *breakpointsDialog:
		d.follow(b)
	case nil:
		if len(now) > 0 && !b.putOff {
			m.openDialog(newHeldDialog(m.styles, b))
		}
	}
}

// gone says what became of a frame the UI did not let go: the timeout
// (auto-continue), or someone else (another watcher, the session's end).
func gone(h hold.Held, listed, now time.Time) string {
	if h.TimeoutMS > 0 && now.Sub(listed).Milliseconds() >= h.LeftMS-500 {
		return fmt.Sprintf("%s auto-continued after %s (--break-timeout)", h.Handle, time.Duration(h.TimeoutMS)*time.Millisecond)
	}
	return h.Handle + " was let go elsewhere (another watcher, or the session ended)"
}

// left is what is left of h's auto-continue timeout now ("" when held
// until told).
func (b *breaksState) left(h hold.Held, now time.Time) string {
	if h.TimeoutMS <= 0 {
		return "held"
	}
	ms := max(h.LeftMS-now.Sub(b.at).Milliseconds(), 0)
	return fmt.Sprintf("%ds", (ms+999)/1000)
}

// add sets a breakpoint from a row (b in Frames or Pending).
func (b *breaksState) add(expr string) tea.Cmd {
	return breaksCmd(b.src, hold.MethodAdd, map[string]string{"expr": expr}, "breakpoint set: "+expr, "")
}

// answerParams is an answer's params: a result, or an error.
type answerParams struct {
	Handle string          `json:"handle"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// handleBreaks handles the breakpoints' messages: a state listed, a
// change to list, the dialogs opened from each other or a key, and what
// $EDITOR left.
func (m *Model) handleBreaks(msg tea.Msg) tea.Cmd {
	b := m.brk
	if b == nil {
		return nil
	}
	switch msg := msg.(type) {
	case breaksMsg:
		m.applyBreaks(msg)
	case breaksChangedMsg:
		return tea.Batch(breaksCmd(b.src, hold.MethodList, nil, "", ""), waitBreaks(b.src))
	case heldOpenMsg:
		if _, ok := m.dlg.(*heldDialog); !ok && canSwap(m.dlg) {
			b.putOff = false
			m.openDialog(newHeldDialog(m.styles, b))
		}
	case breakpointsOpenMsg:
		if _, ok := m.dlg.(*breakpointsDialog); !ok && canSwap(m.dlg) {
			m.openDialog(newBreakpointsDialog(m.styles, b))
		}
	case editorDoneMsg:
		if d, ok := m.dlg.(*heldDialog); ok {
			_, cmd := d.Update(msg)
			return cmd
		}
	}
	return nil
}

// canSwap reports whether a breakpoints dialog may open over d: none is
// open, or the open one is the other breakpoints dialog (they swap).
func canSwap(d dialog) bool {
	switch d.(type) {
	case nil, *heldDialog, *breakpointsDialog:
		return true
	}
	return false
}

// part is the status bar's word on breakpoints: how many frames are
// held (H shows them), and the last outcome or refusal.
func (b *breaksState) part(st *theme.Styles) []statusPart {
	var parts []statusPart
	if n := len(b.st.Held); n > 0 {
		parts = append(parts, statusPart{text: st.Warn.Render(fmt.Sprintf("⏸ %d held · H", n))})
	} else if on := enabledBreaks(b.st.Breakpoints); on > 0 {
		parts = append(parts, statusPart{text: fmt.Sprintf("%d breakpoints", on), drop: 2})
	}
	if b.note != "" {
		style := st.Info
		if b.err != nil {
			style = st.Error
		}
		parts = append(parts, statusPart{text: style.Render(textfmt.Clean(b.note))})
	}
	return parts
}

func enabledBreaks(bps []hold.Breakpoint) int {
	n := 0
	for _, bp := range bps {
		if bp.Enabled {
			n++
		}
	}
	return n
}

// noted asks a polled source for its state at once when evs hold a note
// of a held frame (the tap recorded a step of one); now is the UI's clock.
func (b *breaksState) noted(evs []client.Event, now time.Time) tea.Cmd {
	if b == nil || b.src.Changed() != nil {
		return nil
	}
	for _, ev := range evs {
		if ev.Hold != nil {
			b.polled = now
			return breaksCmd(b.src, hold.MethodList, nil, "", "")
		}
	}
	return nil
}
