package tap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Breaks are the breakpoints of one stdio tap run (sonde tap --break,
// docs/breakpoints.md): a hold.Engine whose notes go into the run's
// recording in the order of its frames. Every whole line of each
// direction is offered to the Engine while a breakpoint is enabled; a held
// line's Deliver writes it later, as one line, to its destination (an
// answer to its sender), under the lock that orders that destination's
// writes. While no breakpoint is enabled, chunks pass as they come (the
// tap's fast path), so a tap started without one can take `sonde breaks
// add` later at no cost: the first line judged is the first to begin
// after the breakpoint was added.
//
// Order with fault rules (--fault): breakpoints come first in both
// directions. A frame is held as its sender wrote it, and what is let go
// (released, edited) then goes through the fault rules; an answer to a
// held request goes through the rules of the way it travels.
type Breaks struct {
	*hold.Engine

	mu sync.Mutex
	t  *tap
}

// NewBreaks returns the breakpoints of a run with opts (its Note is
// replaced: the run records every step); add breakpoints with Load or
// Add, and pass it as Options.Breaks.
func NewBreaks(opts hold.Options) *Breaks {
	b := &Breaks{}
	opts.Note = b.noted
	b.Engine = hold.New(opts)
	return b
}

// attach wires b to the run t (its notes then go to t's recording).
func (b *Breaks) attach(t *tap) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.t = t
}

// noted hands a step of a held frame to the run's observer, in order with
// its frames.
func (b *Breaks) noted(h client.Hold) {
	b.mu.Lock()
	t := b.t
	b.mu.Unlock()
	if t == nil || t.opts.Observer == nil {
		return
	}
	t.queue.putWait(chunk{s: streamOut, note: HoldText(h), hold: &h, t: time.Now()}, t.observed)
}

// HoldText is a step of a held frame in words, as the recording's note
// says it ("breakpoint 1 held h1: the response to id 3 (tools/call) from
// the server").
func HoldText(h client.Hold) string {
	what := "a frame"
	switch {
	case h.ID.IsValid() && h.Kind == jsonrpc.KindResponse:
		what = "the response to id " + h.ID.String()
	case h.ID.IsValid():
		what = "the request id " + h.ID.String()
	case h.Method != "":
		what = "a notification"
	}
	if h.Method != "" {
		what += " (" + h.Method + ")"
	}
	way := "to the server"
	if h.Dir == client.In {
		way = "from the server"
	}
	if h.Handle == "" { // past the limits: not held
		return fmt.Sprintf("breakpoint %d matched %s %s, but %d frames (or %d MiB) are held already: it passed", h.Breakpoint, what, way, hold.MaxHeld, hold.MaxHeldBytes>>20)
	}
	s := fmt.Sprintf("breakpoint %d %s %s: %s %s", h.Breakpoint, h.Action, h.Handle, what, way)
	if h.By != "" {
		s += " by " + string(h.By)
	}
	if h.Action != client.HoldHeld {
		s += fmt.Sprintf(", after %v held", h.Held.Round(time.Millisecond))
	}
	if h.Order > 0 {
		s += fmt.Sprintf(" (release order %d)", h.Order)
	}
	if len(h.Frame) > 0 && (h.Action == client.HoldEdited || h.Action == client.HoldAnswered) {
		s += ", sent instead: " + shorten(h.Frame, holdTextFrame)
	}
	return s
}

// holdTextFrame is how much of an edit or an answer a note quotes (the
// whole is in the hold record).
const holdTextFrame = 240

// shorten is b as text, cut to n bytes (on a rune boundary) with "…".
func shorten(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "…"
}

// errSessionEnded is what a held frame's Deliver returns once the run
// has ended.
var errSessionEnded = errors.New("the tapped session has ended")

// holdOut is a destination of the breakpoints' path (the server's stdin,
// the host's stdout): its lock orders what the forwarder of its direction
// and the Delivers of held frames write there, so lines never interleave.
// mid holds a Deliver back while a line the forwarder began is passing in
// pieces (a chunk that ended inside a line, a line over the cap).
type holdOut struct {
	mu     sync.Mutex
	cond   *sync.Cond
	w      io.Writer
	mid    bool
	closed bool
	// open: the last byte written did not end a line although nothing
	// more of it is coming (a last line without its newline, at the end
	// of its stream): a held frame written after it starts a line of its
	// own.
	open bool
	// t stages what is written for observation as stream s, when set
	// (the host's stdout without fault rules: what the host received).
	t *tap
	s stream
}

func newHoldOut(w io.Writer, observe *tap, s stream) *holdOut {
	o := &holdOut{w: w, t: observe, s: s}
	o.cond = sync.NewCond(&o.mu)
	return o
}

// write writes b; mid says b ends inside a line (its forwarder will write
// the rest), own that the forwarder of this direction writes it (a
// Deliver waits for the end of a line begun).
func (o *holdOut) write(b []byte, mid, own bool) error {
	if len(b) == 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.mid && !own && !o.closed {
		o.cond.Wait()
	}
	if o.closed && !own {
		return errSessionEnded
	}
	if o.open && !own {
		b = append([]byte{'\n'}, b...)
	}
	o.open = false
	staged := false
	if o.t != nil {
		staged = o.t.stage(chunk{s: o.s, data: append([]byte(nil), b...), t: time.Now()})
	}
	_, err := o.w.Write(b)
	if staged {
		o.t.queue.wake()
	}
	if o.mid != mid {
		o.mid = mid
		o.cond.Broadcast()
	}
	return err
}

// observe stages b (a line its forwarder took out: an injected request's
// answer) for observation as if written, in order with what was written.
// Its forwarder calls it at a line's start, so no line is mid-way.
func (o *holdOut) observe(b []byte) {
	if o.t == nil {
		return
	}
	o.mu.Lock()
	staged := o.t.stage(chunk{s: o.s, data: append([]byte(nil), b...), t: time.Now()})
	o.mu.Unlock()
	if staged {
		o.t.queue.wake()
	}
}

// settle ends a line left unfinished (its forwarder is done): Delivers
// waiting go on.
func (o *holdOut) settle() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mid = false
	o.cond.Broadcast()
}

// close makes every later Deliver fail (the run is over).
func (o *holdOut) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.cond.Broadcast()
}

// end passes End on to a line-based writer behind o (fault rules).
func (o *holdOut) end() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if e, ok := o.w.(ender); ok {
		return e.End()
	}
	return nil
}

// ender is a writer that holds a partial last line until End.
type ender interface{ End() error }

// holdWriter is one direction of the breakpoints' path: what the
// forwarder of that direction writes. It is used by that forwarder only.
type holdWriter struct {
	e         *hold.Engine
	dir       client.Direction
	dst, back *holdOut // where its lines go; where an answer to one goes
	max       int
	part      []byte // the start of a line not yet whole
	passing   bool   // the rest of a line already begun passes as it comes
	batch     []byte
}

// Write takes the next chunk of the direction's stream. While no
// breakpoint is enabled and no line is begun, the chunk goes on as it is.
func (w *holdWriter) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	if len(w.part) == 0 && (!w.e.Armed() || (w.passing && bytes.IndexByte(p, '\n') < 0)) {
		mid := p[n-1] != '\n'
		err := w.dst.write(p, mid, true)
		w.passing = mid
		if err != nil {
			return 0, err
		}
		return n, nil
	}
	if err := w.lines(p); err != nil {
		return 0, err
	}
	return n, nil
}

// lines cuts p into lines and offers each whole one to the Engine: the
// ones not held go on together, in one write.
func (w *holdWriter) lines(p []byte) error {
	w.batch = w.batch[:0]
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if w.passing {
			seg, rest := p, []byte(nil)
			if i >= 0 {
				seg, rest = p[:i+1], p[i+1:]
			}
			w.batch = append(w.batch, seg...)
			w.passing, p = i < 0, rest
			continue
		}
		if i < 0 {
			if len(w.part)+len(p) > w.max {
				// Too long to hold: it goes as it comes, never held.
				w.batch = append(append(w.batch, w.part...), p...)
				w.part, w.passing = w.part[:0], true
				break
			}
			w.part = append(w.part, p...)
			break
		}
		raw := p[:i+1]
		p = p[i+1:]
		if len(w.part) > 0 {
			w.part = append(w.part, raw...)
			raw = w.part
		}
		if !w.e.Offer(w.dir, raw[:len(raw)-1], w.deliver) {
			w.batch = append(w.batch, raw...)
		}
		w.part = w.part[:0]
	}
	err := w.dst.write(w.batch, w.passing, true)
	if cap(w.batch) > 4*chunkBytes {
		w.batch = nil
	}
	if cap(w.part) > 4*chunkBytes && len(w.part) == 0 {
		w.part = nil
	}
	return err
}

// deliver carries out the decision on one of w's held lines: on to its
// destination (released, edited), back to its sender (answered), or
// nowhere (dropped); one line with its newline.
func (w *holdWriter) deliver(o hold.Outcome) error {
	if o.Frame == nil {
		return nil
	}
	to := w.dst
	if o.Back() {
		to = w.back
	}
	line := make([]byte, 0, len(o.Frame)+1)
	line = append(append(line, o.Frame...), '\n')
	return to.write(line, false, false)
}

// End is the end of the direction's stream: a last line without a
// newline goes as it is, never held (a held frame released after it
// starts a line of its own).
func (w *holdWriter) End() error {
	part := w.part
	w.part = nil
	open := w.passing || len(part) > 0
	w.passing = false
	err := w.dst.write(part, false, true)
	if open {
		w.dst.mu.Lock()
		w.dst.open, w.dst.mid = true, false
		w.dst.cond.Broadcast()
		w.dst.mu.Unlock()
	}
	if e := w.dst.end(); err == nil {
		err = e
	}
	return err
}

// breakPath is the breakpoints' path of a run: a writer for each
// direction, and their destinations.
type breakPath struct {
	toServer, toHost *holdWriter
	server, host     *holdOut
}

// newBreakPath puts the breakpoints in front of server (what goes to the
// server's stdin) and host (what goes to the host's stdout); with
// observeHost, what host gets is observed as written.
func (t *tap) newBreakPath(server, host io.Writer, observeHost bool) *breakPath {
	b := t.opts.Breaks
	b.attach(t)
	var obs *tap
	if observeHost {
		obs = t
	}
	bp := &breakPath{server: newHoldOut(server, nil, streamIn), host: newHoldOut(host, obs, streamOut)}
	bp.toServer = &holdWriter{e: b.Engine, dir: client.Out, dst: bp.server, back: bp.host, max: t.opts.MaxLineBytes}
	bp.toHost = &holdWriter{e: b.Engine, dir: client.In, dst: bp.host, back: bp.server, max: t.opts.MaxLineBytes}
	return bp
}

// finish ends the path once the server's stdout is drained: what is held
// is released (to the host while it still reads; the server has exited),
// then every later Deliver fails.
func (bp *breakPath) finish(b *Breaks) {
	bp.server.close()
	bp.host.settle()
	b.Close()
	bp.host.close()
}
