package chaos

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Hooks are what a Pipe tells its user.
type Hooks struct {
	// Note gets the note of each rule that fired, before what it wrote.
	Note func(n Note)
	// ToHost gets a copy of each write to the host, under the lock that
	// orders them, before it is written (the tap observes it).
	ToHost func(b []byte)
}

// Pipe is the two directions of a session going through the rules a whole
// line at a time: ToServer and ToHost are the writers to feed with what
// the host and the server send (in chunks cut anywhere); they write to the
// outputs given to NewPipe. A line no rule matches keeps its exact bytes
// (with the unmatched lines of one Write in one write); a rule never
// splits a line, and lines the rules add (an error answer, noise) go
// between lines, never inside one. A line longer than max is not held: it
// passes unmatched, in pieces, as it comes.
//
// What it holds is bounded whatever the rules ask (docs/chaos.md,
// "Limits"): the copies of a line are written one batch after another,
// never built at once; reorder rules hold at most MaxHeldBytes a
// direction; copies sent later at most MaxLaterBytes. Close ends every
// wait (a delay, a stall, a copy sent later, frames held).
type Pipe struct {
	ToServer, ToHost *LineWriter
	// HostErr writes the server's stderr to the host's (a stderr rule's
	// text goes between two writes).
	HostErr io.Writer
	dests   []*dest
	sh      *shared
}

// shared is what the two directions of a Pipe share: the end of the
// session, and the copies waiting to be sent later.
type shared struct {
	done chan struct{} // closed by Close
	once sync.Once

	mu          sync.Mutex
	timers      map[*time.Timer]bool // the copies waiting (duplicate ms=)
	laterBytes  int                  // what they hold
	laterCopies int
}

// batchBytes is about how much one write to an output holds when a line
// has copies: a line's copies (and noise before it) up to that go in one
// write; more go in further writes of whole lines (a longer line's copies,
// one write each).
const batchBytes = 1 << 20

// NewPipe returns the pipe of e's rules over server (the server's stdin),
// host (the host's stdout) and hostErr (the host's stderr).
func (e *Engine) NewPipe(server, host, hostErr io.Writer, max int, h Hooks) *Pipe {
	if h.Note == nil {
		h.Note = func(Note) {}
	}
	s, hd, ed := newDest(server, nil), newDest(host, h.ToHost), newDest(hostErr, nil)
	sh := &shared{done: make(chan struct{}), timers: map[*time.Timer]bool{}}
	return &Pipe{
		ToServer: &LineWriter{e: e, h: h, sh: sh, max: max, dir: ToServer, dst: s, back: hd, host: hd, errw: ed},
		ToHost:   &LineWriter{e: e, h: h, sh: sh, max: max, dir: ToHost, dst: hd, back: s, host: hd, errw: ed},
		HostErr:  ed,
		dests:    []*dest{s, hd, ed},
		sh:       sh,
	}
}

// Close makes every output of p write nothing more (the session is over:
// a forwarder still reading the host writes nowhere), and ends every
// wait: a delay or a stall under way ends (its frame is not written, and a
// note says so), copies waiting to be sent later and frames reorder rules
// hold are let go (noted).
func (p *Pipe) Close() {
	p.sh.once.Do(func() { close(p.sh.done) })
	for _, d := range p.dests {
		d.close()
	}
	p.sh.mu.Lock()
	for t := range p.sh.timers {
		t.Stop()
	}
	clear(p.sh.timers)
	p.sh.laterBytes, p.sh.laterCopies = 0, 0
	p.sh.mu.Unlock()
	p.ToServer.dropHeld()
	p.ToHost.dropHeld()
}

// dest is one output. Its lock keeps what two goroutines write there from
// interleaving; mid holds others back while a line longer than the cap
// passes in pieces.
type dest struct {
	mu     sync.Mutex
	cond   *sync.Cond
	w      io.Writer
	wrote  func([]byte)
	mid    bool
	closed bool
}

func newDest(w io.Writer, wrote func([]byte)) *dest {
	d := &dest{w: w, wrote: wrote}
	d.cond = sync.NewCond(&d.mu)
	return d
}

// write writes b, which ends a line unless mid (the first pieces of a
// line over the cap: nobody else writes until its end); own is the
// writer of those pieces.
func (d *dest) write(b []byte, mid, own bool) error {
	if len(b) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.mid && !own && !d.closed {
		d.cond.Wait()
	}
	if d.closed {
		return nil
	}
	if d.wrote != nil { // before the write: the host may answer at once
		d.wrote(b)
	}
	_, err := d.w.Write(b)
	if d.mid != mid {
		d.mid = mid
		d.cond.Broadcast()
	}
	return err
}

// Write makes dest an io.Writer of whole chunks.
func (d *dest) Write(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return len(b), nil
	}
	return d.w.Write(b)
}

// shut closes d's writer (a close rule); what comes after is discarded.
func (d *dest) shut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.closed = true
	d.cond.Broadcast()
	if c, ok := d.w.(io.Closer); ok {
		_ = c.Close()
	}
}

func (d *dest) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.cond.Broadcast()
}

// LineWriter is one direction of a Pipe.
type LineWriter struct {
	e       *Engine
	h       Hooks
	sh      *shared
	max     int
	dir     Direction
	dst     *dest // this direction's output
	back    *dest // the other direction's (an error answer goes there)
	host    *dest // the host's stdout (noise)
	errw    *dest // the host's stderr
	part    []byte
	passing bool // the rest of a line over the cap is passing through

	bq backQueue // what it writes to the server, from the server-to-host direction

	holdMu    sync.Mutex
	held      map[*Rule]*holding // by reorder rule
	heldBytes int                // what they hold, at most MaxHeldBytes
}

// holding is what one reorder rule holds: frames (each its lines), their
// bytes, and the timer that releases them when the first has waited long
// enough.
type holding struct {
	frames [][][]byte
	bytes  int
	timer  *time.Timer
}

// closed reports whether the pipe is closed.
func (f *LineWriter) closed() bool {
	select {
	case <-f.sh.done:
		return true
	default:
		return false
	}
}

// sleep waits d, or until the pipe closes; it reports whether the whole d
// went by.
func (f *LineWriter) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-f.sh.done:
		return false
	}
}

// Write takes the next chunk of the direction's stream.
func (f *LineWriter) Write(p []byte) (int, error) {
	n := len(p)
	var batch []byte // unmatched whole lines, written together
	flush := func() error {
		err := f.dst.write(batch, false, false)
		batch = batch[:0]
		return err
	}
	for len(p) > 0 {
		if f.closed() {
			return n, nil // the session is over: written nowhere, as dest does
		}
		i := bytes.IndexByte(p, '\n')
		if f.passing {
			seg, rest := p, []byte(nil)
			if i >= 0 {
				seg, rest = p[:i+1], p[i+1:]
			}
			if err := f.dst.write(seg, i < 0, true); err != nil {
				return 0, err
			}
			f.passing = i < 0
			p = rest
			continue
		}
		if i < 0 {
			if len(f.part)+len(p) > f.max {
				// Too long to hold: it goes as it comes, unmatched.
				if err := flush(); err != nil {
					return 0, err
				}
				head := append(f.part, p...)
				f.part = nil
				if err := f.dst.write(head, true, false); err != nil {
					return 0, err
				}
				f.passing = true
				break
			}
			f.part = append(f.part, p...)
			break
		}
		raw := p[:i+1]
		p = p[i+1:]
		line := raw[:i]
		if len(f.part) > 0 {
			line = append(f.part, line...)
			raw = append(line[:len(line):len(line)], '\n')
			f.part = nil
		}
		eff := f.e.Apply(f.dir, line)
		if !eff.Matched() {
			batch = append(batch, raw...)
			continue
		}
		if err := flush(); err != nil {
			return 0, err
		}
		if err := f.apply(eff); err != nil {
			return 0, err
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return n, nil
}

// apply carries out what the rules made of one line: notes first (so a
// recording says why before it shows the result), stderr text, noise and
// answers, the delay, then the line's own copies.
func (f *LineWriter) apply(eff Effect) error {
	for _, n := range eff.Notes {
		f.h.Note(n)
	}
	if len(eff.Stderr) > 0 {
		_ = f.errw.write(eff.Stderr, false, false)
	}
	for _, l := range eff.ToHost {
		_ = f.host.write(lineOf(l), false, false)
	}
	f.sendBack(eff)
	if eff.Delay > 0 && !f.sleep(eff.Delay) {
		f.ended(eff, Delay, "delay")
		return nil
	}
	if eff.Close != nil {
		f.dst.shut()
		return nil
	}
	if eff.Hold != nil {
		return f.hold(eff.Hold, eff.Lines)
	}
	err := f.dst.writeLines(eff.Lines)
	if len(eff.Later) > 0 {
		f.later(eff)
	}
	if eff.Stall > 0 && !f.sleep(eff.Stall) {
		f.ended(eff, Stall, "stall")
	}
	return err
}

// ended notes that the pipe closed during a wait that the rule of action
// a (the last of eff's notes) made: what it held is not written.
func (f *LineWriter) ended(eff Effect, a Action, what string) {
	for i := len(eff.Notes) - 1; i >= 0; i-- {
		if n := eff.Notes[i]; n.Action == a {
			text := fmt.Sprintf("fault rule %d: the session ended during its %s: not written", n.Rule, what)
			if a == Stall {
				text = fmt.Sprintf("fault rule %d: the session ended during its %s", n.Rule, what)
			}
			n.Text = text
			f.h.Note(n)
			return
		}
	}
}

// later sends eff.Later eff.LaterBy from now, while the direction carries
// on, unless the copies waiting already hold MaxLaterBytes or number
// MaxLaterCopies: then they are not sent, and a note says so.
func (f *LineWriter) later(eff Effect) {
	r := eff.LaterRule
	// The copies are few distinct lines (the line, and a corrupted one):
	// each is kept once.
	var lines [][]byte
	size := 0
	for i, l := range eff.Later {
		if i > 0 && same(l, eff.Later[i-1]) {
			lines = append(lines, lines[i-1])
			continue
		}
		c := append([]byte(nil), l...)
		size += len(c) + 1
		lines = append(lines, c)
	}
	sh := f.sh
	sh.mu.Lock()
	if f.closed() || sh.laterBytes+size > MaxLaterBytes || sh.laterCopies+len(lines) > MaxLaterCopies {
		held, copies := sh.laterBytes, sh.laterCopies
		sh.mu.Unlock()
		if r != nil && !f.closed() {
			n := r.note(f.dir, fmt.Sprintf("did not send %d later cop(ies) %s: the copies waiting hold %d bytes in %d, at most %d bytes and %d copies (docs/chaos.md, \"Limits\")", len(lines), f.dir, held, copies, MaxLaterBytes, MaxLaterCopies))
			f.h.Note(n)
		}
		return
	}
	sh.laterBytes += size
	sh.laterCopies += len(lines)
	var t *time.Timer
	t = time.AfterFunc(eff.LaterBy, func() {
		sh.mu.Lock()
		if !sh.timers[t] {
			sh.mu.Unlock()
			return // let go by Close
		}
		delete(sh.timers, t)
		sh.mu.Unlock()
		_ = f.dst.writeLines(lines)
		sh.mu.Lock()
		sh.laterBytes -= size
		sh.laterCopies -= len(lines)
		sh.mu.Unlock()
	})
	sh.timers[t] = true
	sh.mu.Unlock()
}

// writeLines writes lines, each followed by "\n", in writes of about
// batchBytes of whole lines (a longer line alone, its copies each in a
// write of its own): what is built at once is one batch, however many
// copies there are.
func (d *dest) writeLines(lines [][]byte) error {
	var buf []byte
	flush := func() error {
		err := d.write(buf, false, false)
		buf = buf[:0]
		return err
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		if len(l)+1 > batchBytes {
			if err := flush(); err != nil {
				return err
			}
			one := append(append(make([]byte, 0, len(l)+1), l...), '\n')
			for ; i < len(lines) && same(lines[i], l); i++ {
				if err := d.write(one, false, false); err != nil {
					return err
				}
			}
			continue
		}
		if len(buf)+len(l)+1 > batchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		buf = append(append(buf, l...), '\n')
		i++
	}
	return flush()
}

// hold keeps a frame for reorder rule r; the frame that fills its window
// releases them all at once.
func (f *LineWriter) hold(r *Rule, lines [][]byte) error {
	f.holdMu.Lock()
	if f.held == nil {
		f.held = map[*Rule]*holding{}
	}
	h := f.held[r]
	if h == nil {
		h = &holding{}
		f.held[r] = h
	}
	frame := make([][]byte, len(lines))
	size := 0
	for i, l := range lines {
		if i > 0 && same(l, lines[i-1]) {
			frame[i] = frame[i-1] // a copy: kept once
			continue
		}
		frame[i] = append([]byte(nil), l...)
		size += len(l) + 1
	}
	h.frames = append(h.frames, frame)
	h.bytes += size
	f.heldBytes += size
	if len(h.frames) == 1 {
		h.timer = time.AfterFunc(time.Duration(r.MinMS)*time.Millisecond, func() { _ = f.release(r, h, "") })
	}
	full := len(h.frames) >= r.Window
	heavy := f.heldBytes > MaxHeldBytes
	f.holdMu.Unlock()
	switch {
	case full:
		return f.release(r, h, "")
	case heavy:
		return f.release(r, h, fmt.Sprintf(" early: the frames held %s came to over %d bytes (docs/chaos.md, \"Limits\")", f.dir, MaxHeldBytes))
	}
	return nil
}

// dropHeld lets go of what the reorder rules hold, unwritten (the pipe is
// closed), with a note for each.
func (f *LineWriter) dropHeld() {
	f.holdMu.Lock()
	held := f.held
	f.held, f.heldBytes = nil, 0
	f.holdMu.Unlock()
	for r, h := range held {
		h.timer.Stop()
		f.h.Note(r.note(f.dir, fmt.Sprintf("held %d frame(s) %s when the session ended: not written", len(h.frames), f.dir)))
	}
}

// release writes what r holds (when h still is what it holds), in the
// rule's order; why, when not "", says why now.
func (f *LineWriter) release(r *Rule, h *holding, why string) error {
	f.holdMu.Lock()
	if f.held[r] != h {
		f.holdMu.Unlock()
		return nil
	}
	delete(f.held, r)
	f.heldBytes -= h.bytes
	h.timer.Stop()
	f.holdMu.Unlock()
	frames := f.e.Release(r, f.dir, h.frames)
	how := "reversed"
	if r.Shuffle {
		how = "shuffled"
	}
	f.h.Note(r.note(f.dir, fmt.Sprintf("released %d held frame(s) %s, %s%s", len(frames), f.dir, how, why)))
	var lines [][]byte
	for _, fr := range frames {
		lines = append(lines, fr...)
	}
	return f.dst.writeLines(lines)
}

// releaseAll writes whatever the reorder rules hold.
func (f *LineWriter) releaseAll() {
	f.holdMu.Lock()
	var rules []*Rule
	hs := map[*Rule]*holding{}
	for r, h := range f.held {
		rules = append(rules, r)
		hs[r] = h
	}
	f.holdMu.Unlock()
	slices.SortFunc(rules, func(a, b *Rule) int { return a.N - b.N })
	for _, r := range rules {
		_ = f.release(r, hs[r], "")
	}
}

func lineOf(l []byte) []byte { return append(append([]byte(nil), l...), '\n') }

// End is the end of the direction's stream: what reorder rules hold is
// written, then what is left of a last line without a newline, as it is.
func (f *LineWriter) End() error {
	f.releaseAll()
	part := f.part
	f.part = nil
	if f.passing {
		f.passing = false
		f.dst.mu.Lock()
		f.dst.mid = false
		f.dst.cond.Broadcast()
		f.dst.mu.Unlock()
	}
	return f.dst.write(part, false, false)
}
