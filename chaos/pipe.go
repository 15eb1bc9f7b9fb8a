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
type Pipe struct {
	ToServer, ToHost *LineWriter
	// HostErr writes the server's stderr to the host's (a stderr rule's
	// text goes between two writes).
	HostErr io.Writer
	dests   []*dest
}

// NewPipe returns the pipe of e's rules over server (the server's stdin),
// host (the host's stdout) and hostErr (the host's stderr).
func (e *Engine) NewPipe(server, host, hostErr io.Writer, max int, h Hooks) *Pipe {
	if h.Note == nil {
		h.Note = func(Note) {}
	}
	s, hd, ed := newDest(server, nil), newDest(host, h.ToHost), newDest(hostErr, nil)
	return &Pipe{
		ToServer: &LineWriter{e: e, h: h, max: max, dir: ToServer, dst: s, back: hd, host: hd, errw: ed},
		ToHost:   &LineWriter{e: e, h: h, max: max, dir: ToHost, dst: hd, back: s, host: hd, errw: ed},
		HostErr:  ed,
		dests:    []*dest{s, hd, ed},
	}
}

// Close makes every output of p write nothing more (the session is over:
// a forwarder still reading the host writes nowhere).
func (p *Pipe) Close() {
	for _, d := range p.dests {
		d.close()
	}
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
	max     int
	dir     Direction
	dst     *dest // this direction's output
	back    *dest // the other direction's (an error answer goes there)
	host    *dest // the host's stdout (noise)
	errw    *dest // the host's stderr
	part    []byte
	passing bool // the rest of a line over the cap is passing through

	holdMu sync.Mutex
	held   map[*Rule]*holding // by reorder rule
}

// holding is what one reorder rule holds: frames (each its lines), and
// the timer that releases them when the first has waited long enough.
type holding struct {
	frames [][][]byte
	timer  *time.Timer
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
	for _, l := range eff.Back {
		_ = f.back.write(lineOf(l), false, false)
	}
	if eff.Delay > 0 {
		time.Sleep(eff.Delay)
	}
	if eff.Close != nil {
		f.dst.shut()
		return nil
	}
	if eff.Hold != nil {
		return f.hold(eff.Hold, eff.Lines)
	}
	var out []byte
	for _, l := range eff.Lines {
		out = append(out, l...)
		out = append(out, '\n')
	}
	err := f.dst.write(out, false, false)
	if len(eff.Later) > 0 {
		var later []byte
		for _, l := range eff.Later {
			later = append(later, l...)
			later = append(later, '\n')
		}
		time.AfterFunc(eff.LaterBy, func() { _ = f.dst.write(later, false, false) })
	}
	if eff.Stall > 0 {
		time.Sleep(eff.Stall)
	}
	return err
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
	for i, l := range lines {
		frame[i] = append([]byte(nil), l...)
	}
	h.frames = append(h.frames, frame)
	if len(h.frames) == 1 {
		h.timer = time.AfterFunc(time.Duration(r.MinMS)*time.Millisecond, func() { _ = f.release(r, h) })
	}
	full := len(h.frames) >= r.Window
	f.holdMu.Unlock()
	if full {
		return f.release(r, h)
	}
	return nil
}

// release writes what r holds (when h still is what it holds), in the
// rule's order.
func (f *LineWriter) release(r *Rule, h *holding) error {
	f.holdMu.Lock()
	if f.held[r] != h {
		f.holdMu.Unlock()
		return nil
	}
	delete(f.held, r)
	h.timer.Stop()
	f.holdMu.Unlock()
	frames := f.e.Release(r, f.dir, h.frames)
	how := "reversed"
	if r.Shuffle {
		how = "shuffled"
	}
	f.h.Note(r.note(f.dir, fmt.Sprintf("released %d held frame(s) %s, %s", len(frames), f.dir, how)))
	var out []byte
	for _, fr := range frames {
		for _, l := range fr {
			out = append(out, l...)
			out = append(out, '\n')
		}
	}
	return f.dst.write(out, false, false)
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
		_ = f.release(r, hs[r])
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
