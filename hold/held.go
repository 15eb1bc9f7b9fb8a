package hold

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Deliver carries out the decision on a held frame: the transport frames
// and writes Outcome.Frame (Release, Edit: on toward the frame's
// destination; Answer: back to its sender), or does nothing (Drop). It is
// called exactly once per held frame, outside the Engine's lock, from the
// goroutine that decided (a control call, a timer, Close). An error (the
// stream is gone) is reported to whoever decided and noted.
type Deliver func(o Outcome) error

// Outcome is a decision on a held frame.
type Outcome struct {
	Handle string
	Action client.HoldAction // HoldReleased, HoldEdited, HoldDropped or HoldAnswered
	By     client.HoldBy
	// Dir is the held frame's direction; an Answer goes the other way.
	Dir client.Direction
	// Frame is the message to send, without framing: the original
	// (released), the edit, or the answer; nil when dropped.
	Frame []byte
	// Original is the frame as held.
	Original []byte
}

// Back reports whether Frame goes back to the held frame's sender (an
// answer) rather than on to its destination.
func (o Outcome) Back() bool { return o.Action == client.HoldAnswered }

// held is one held frame.
type held struct {
	handle  string
	bp      int
	f       frame
	raw     []byte
	at      time.Time
	timer   *time.Timer
	deliver Deliver
}

// Held is one held frame as listed (and as sonde breaks --json prints it).
type Held struct {
	Handle     string `json:"handle"`
	Breakpoint int    `json:"breakpoint"`
	Direction  string `json:"direction"`
	Kind       string `json:"kind"`
	Method     string `json:"method,omitempty"`
	Tool       string `json:"tool,omitempty"`
	// ID is the id as sonde shows it (7, or "abc" with its quotes).
	ID     string `json:"id,omitempty"`
	HeldMS int64  `json:"held_ms"`
	// TimeoutMS is the auto-continue timeout (0: held until told); LeftMS
	// what is left of it.
	TimeoutMS int64           `json:"timeout_ms"`
	LeftMS    int64           `json:"left_ms"`
	Frame     json.RawMessage `json:"frame"`
}

// Offer judges one frame of the session (a whole JSON-RPC message without
// its framing, in the order it came on its direction). When no enabled
// breakpoint matches, it returns false: the caller forwards the frame
// itself, exactly as it would without breakpoints. When one matches, the
// frame is held (Offer keeps a copy of raw) and deliver is called later,
// once, with the decision; Offer returns true. A frame past the limits
// (MaxHeld, MaxHeldBytes) or offered after Close is never held.
func (e *Engine) Offer(dir client.Direction, raw []byte, deliver Deliver) bool {
	return e.OfferHandle(dir, raw, deliver) != ""
}

// OfferHandle is Offer that returns the handle the frame is held under
// ("" when it is not held), for a transport that must let go of its own
// held frames when its stream ends (Conn.Close).
func (e *Engine) OfferHandle(dir client.Direction, raw []byte, deliver Deliver) string {
	e.mu.Lock()
	f := e.reqs.judge(dir, raw)
	if e.closed {
		e.mu.Unlock()
		return ""
	}
	b := e.match(&f.item)
	if b == nil {
		e.mu.Unlock()
		return ""
	}
	if len(e.held) >= MaxHeld || e.bytes+len(raw) > MaxHeldBytes {
		e.mu.Unlock()
		e.opts.Note(client.Hold{Breakpoint: b.N, Action: client.HoldReleased, By: client.HoldByEnd, Dir: dir,
			Kind: f.msg.Kind, ID: f.msg.ID, Method: f.item.Method})
		return ""
	}
	b.Hits++
	e.nextH++
	h := &held{handle: "h" + strconv.Itoa(e.nextH), bp: b.N, f: f, raw: bytes.Clone(raw), at: e.opts.Now(), deliver: deliver}
	h.f.item.Payload = h.raw
	e.held[h.handle] = h
	e.order = append(e.order, h.handle)
	e.bytes += len(h.raw)
	if e.opts.Timeout > 0 {
		handle := h.handle
		h.timer = time.AfterFunc(e.opts.Timeout, func() {
			_ = e.finish(handle, client.HoldReleased, client.HoldByTimeout, nil, 0)
		})
	}
	note := e.noteOf(h, client.HoldHeld, "", nil, 0)
	e.mu.Unlock()
	e.opts.Note(note)
	e.opts.Changed()
	return h.handle
}

// noteOf describes a step of h (the caller holds e.mu).
func (e *Engine) noteOf(h *held, a client.HoldAction, by client.HoldBy, sent []byte, order int) client.Hold {
	n := client.Hold{Handle: h.handle, Breakpoint: h.bp, Action: a, By: by, Dir: h.f.dir, Kind: h.f.msg.Kind,
		ID: h.f.msg.ID, Method: h.f.item.Method, Order: order}
	switch a {
	case client.HoldHeld:
	case client.HoldReleased:
		n.Held = e.opts.Now().Sub(h.at)
	default:
		n.Held = e.opts.Now().Sub(h.at)
		n.Original, n.Frame = h.raw, sent
	}
	return n
}

// take removes h from the held frames (the caller holds e.mu).
func (e *Engine) take(handle string) (*held, error) {
	h := e.held[handle]
	if h == nil {
		return nil, noHandle(handle)
	}
	delete(e.held, handle)
	for i, x := range e.order {
		if x == handle {
			e.order = append(e.order[:i], e.order[i+1:]...)
			break
		}
	}
	e.bytes -= len(h.raw)
	if h.timer != nil {
		h.timer.Stop()
	}
	return h, nil
}

// finish takes handle and delivers the decision: sent is the edit or the
// answer (nil: the original, or nothing when dropped).
func (e *Engine) finish(handle string, a client.HoldAction, by client.HoldBy, sent []byte, order int) error {
	e.mu.Lock()
	h, err := e.take(handle)
	if err != nil {
		e.mu.Unlock()
		return err
	}
	switch a {
	case client.HoldAnswered, client.HoldDropped:
		// The request never reaches its receiver: it is not in flight.
		if h.f.msg.Kind == jsonrpc.KindRequest {
			delete(e.reqs.m, reqKey{h.f.dir, h.f.item.ID})
		}
	}
	note := e.noteOf(h, a, by, sent, order)
	e.mu.Unlock()
	return e.deliver(h, a, by, sent, note)
}

// deliver runs h's Deliver for the decision and notes it.
func (e *Engine) deliver(h *held, a client.HoldAction, by client.HoldBy, sent []byte, note client.Hold) error {
	o := Outcome{Handle: h.handle, Action: a, By: by, Dir: h.f.dir, Original: h.raw, Frame: sent}
	if a == client.HoldReleased {
		o.Frame = h.raw
	}
	var err error
	if h.deliver != nil {
		err = h.deliver(o)
	}
	e.opts.Note(note)
	e.opts.Changed()
	if err != nil && a != client.HoldDropped {
		return &Error{Code: CodeUndelivered, Msg: fmt.Sprintf("%s was %s but could not be sent: %v", h.handle, a, err), Err: err}
	}
	return nil
}

// handles are the handles held, oldest first.
func (e *Engine) handles() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.order...)
}

// List returns the frames held, oldest first.
func (e *Engine) List() []Held {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opts.Now()
	out := make([]Held, 0, len(e.order))
	for _, handle := range e.order {
		h := e.held[handle]
		x := Held{Handle: h.handle, Breakpoint: h.bp, Direction: h.f.dir.String(), Kind: h.f.item.Kind,
			Method: h.f.item.Method, Tool: h.f.item.Tool, ID: h.f.item.ID, HeldMS: now.Sub(h.at).Milliseconds(),
			Frame: json.RawMessage(h.raw)}
		if !h.f.ok {
			x.Kind = jsonrpc.KindInvalid.String()
		}
		if !json.Valid(h.raw) {
			x.Frame, _ = json.Marshal(string(h.raw)) // not JSON: shown as a string
		}
		if e.opts.Timeout > 0 {
			x.TimeoutMS = e.opts.Timeout.Milliseconds()
			x.LeftMS = max(0, (e.opts.Timeout - now.Sub(h.at)).Milliseconds())
		}
		out = append(out, x)
	}
	return out
}

// Release forwards the frames held as handles, unchanged, in the order
// given. Every handle is checked first: one that names no held frame
// releases none.
func (e *Engine) Release(by client.HoldBy, handles ...string) error {
	e.mu.Lock()
	for _, handle := range handles {
		if e.held[handle] == nil {
			e.mu.Unlock()
			return noHandle(handle)
		}
	}
	e.mu.Unlock()
	var first error
	for i, handle := range handles {
		order := 0
		if len(handles) > 1 {
			order = i + 1
		}
		if err := e.finish(handle, client.HoldReleased, by, nil, order); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ReleaseAll forwards every held frame unchanged, oldest first.
func (e *Engine) ReleaseAll(by client.HoldBy) error {
	e.mu.Lock()
	handles := append([]string(nil), e.order...)
	e.mu.Unlock()
	var first error
	for _, handle := range handles {
		if err := e.finish(handle, client.HoldReleased, by, nil, 0); err != nil && first == nil && !isNoHandle(err) {
			first = err
		}
	}
	return first
}

func isNoHandle(err error) bool {
	x, ok := err.(*Error)
	return ok && x.Code == CodeNoHandle
}

// Drop lets the frame held as handle go unsent: its receiver never sees
// it (a dropped request leaves its sender waiting, a dropped answer too).
func (e *Engine) Drop(by client.HoldBy, handle string) error {
	return e.finish(handle, client.HoldDropped, by, nil, 0)
}

// Attach counts a watcher (the UI, a socket connection that asked to
// watch). When the last one detaches, everything held is released
// unchanged at once, so a host is never left waiting on a watcher that
// went away. detach is idempotent.
func (e *Engine) Attach() (detach func()) {
	e.mu.Lock()
	e.watchers++
	e.mu.Unlock()
	done := false
	return func() {
		e.mu.Lock()
		if done {
			e.mu.Unlock()
			return
		}
		done = true
		e.watchers--
		last := e.watchers == 0
		e.mu.Unlock()
		if last {
			_ = e.ReleaseAll(client.HoldByDetach)
		}
	}
}

// Close ends the session's holding: every frame held is released
// unchanged (its Deliver may fail: the session is ending), and nothing is
// held after it. Timers stop. Close is idempotent.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	_ = e.ReleaseAll(client.HoldByEnd)
}

// noHandle is the refusal of a handle that names no held frame.
func noHandle(handle string) error {
	return &Error{Code: CodeNoHandle, Msg: fmt.Sprintf("no frame is held as %s (it was let go, or never held; sonde breaks lists what is held)", handle)}
}
