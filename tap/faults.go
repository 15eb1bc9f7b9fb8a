package tap

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
)

// dest is one of the tap's outputs when fault rules are on: the server's
// stdin, the host's stdout or the host's stderr. Its lock keeps what two
// goroutines write there from interleaving (the forwarder of the stream,
// and the other direction's forwarder when a rule answers a request or
// writes noise); mid holds others back while a line longer than the cap
// passes in pieces. With observe, what is written is offered to the
// observer as stream s (the host's stdout: observation sees what the host
// received).
type dest struct {
	mu      sync.Mutex
	cond    *sync.Cond
	w       io.Writer
	s       stream
	observe bool
	mid     bool
	closed  bool // Run has returned: nothing more is written
}

func newDest(w io.Writer, s stream, observe bool) *dest {
	d := &dest{w: w, s: s, observe: observe}
	d.cond = sync.NewCond(&d.mu)
	return d
}

// write writes b, which ends a line unless mid (the first pieces of a
// line over the cap: nobody else writes until its end).
func (d *dest) write(t *tap, b []byte, mid bool, own bool) error {
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
	if d.observe { // before the write: the host may answer at once
		t.offer(chunk{s: d.s, data: append([]byte(nil), b...), t: time.Now()})
	}
	_, err := d.w.Write(b)
	if d.mid != mid {
		d.mid = mid
		d.cond.Broadcast()
	}
	return err
}

// Write makes dest an io.Writer of whole chunks (the server's stderr to
// the host's stderr).
func (d *dest) Write(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return len(b), nil
	}
	return d.w.Write(b)
}

// shut closes d's writer (a close rule: the host sees the end of the
// server's stdout, or the server the end of its stdin); what comes after
// is discarded.
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

// close ends d: the other direction's forwarder, still reading the host,
// writes nothing there once Run has returned.
func (d *dest) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.cond.Broadcast()
}

// faultWriter forwards one direction a whole line at a time, each line
// through the fault rules: a line no rule matches is written with its
// exact bytes (with the unmatched lines before it in one write); a rule
// never splits a line. A line longer than the tap's MaxLineBytes is not
// held: it passes unmatched, in pieces, as it comes.
type faultWriter struct {
	t       *tap
	dir     chaos.Direction
	dst     *dest // this direction's output
	back    *dest // the other direction's (an error answer goes there)
	host    *dest // the host's stdout (noise)
	errw    *dest // the host's stderr
	part    []byte
	passing bool // the rest of a line over the cap is passing through

	holdMu sync.Mutex
	held   map[*chaos.Rule]*holding // by reorder rule
}

// holding is what one reorder rule holds: frames (each its lines), and
// the timer that releases them when the first has waited long enough.
type holding struct {
	frames [][][]byte
	timer  *time.Timer
}

// faultWriters returns the writers of the three streams with fault rules
// on.
func (t *tap) faultWriters(stdin io.Writer, out, errw io.Writer) (toServer, toHost, toErr io.Writer) {
	server := newDest(stdin, streamIn, false) // observed as the host wrote it
	host := newDest(out, streamOut, true)
	errd := newDest(errw, streamErr, false)
	t.dests = []*dest{server, host, errd}
	return &faultWriter{t: t, dir: chaos.ToServer, dst: server, back: host, host: host, errw: errd},
		&faultWriter{t: t, dir: chaos.ToHost, dst: host, back: server, host: host, errw: errd},
		errd
}

func (f *faultWriter) Write(p []byte) (int, error) {
	n := len(p)
	var batch []byte // unmatched whole lines, written together
	flush := func() error {
		err := f.dst.write(f.t, batch, false, false)
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
			if err := f.dst.write(f.t, seg, i < 0, true); err != nil {
				return 0, err
			}
			f.passing = i < 0
			p = rest
			continue
		}
		if i < 0 {
			if len(f.part)+len(p) > f.t.opts.MaxLineBytes {
				// Too long to hold: it goes as it comes, unmatched.
				if err := flush(); err != nil {
					return 0, err
				}
				head := append(f.part, p...)
				f.part = nil
				if err := f.dst.write(f.t, head, true, false); err != nil {
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
		eff := f.t.opts.Faults.Apply(f.dir, line)
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

// apply carries out what the rules made of one line: notes first (so the
// recording says why before it shows the result), stderr text, noise and
// answers, the delay, then the line's own copies.
func (f *faultWriter) apply(eff chaos.Effect) error {
	for _, n := range eff.Notes {
		f.t.note(n)
	}
	if len(eff.Stderr) > 0 {
		_ = f.errw.write(f.t, eff.Stderr, false, false)
	}
	for _, l := range eff.ToHost {
		_ = f.host.write(f.t, lineOf(l), false, false)
	}
	for _, l := range eff.Back {
		_ = f.back.write(f.t, lineOf(l), false, false)
	}
	if eff.Delay > 0 {
		time.Sleep(eff.Delay)
	}
	if eff.Close {
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
	err := f.dst.write(f.t, out, false, false)
	if eff.Stall > 0 {
		time.Sleep(eff.Stall)
	}
	return err
}

// hold keeps a frame for reorder rule r; the frame that fills its window
// releases them all at once.
func (f *faultWriter) hold(r *chaos.Rule, lines [][]byte) error {
	f.holdMu.Lock()
	if f.held == nil {
		f.held = map[*chaos.Rule]*holding{}
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
func (f *faultWriter) release(r *chaos.Rule, h *holding) error {
	f.holdMu.Lock()
	if f.held[r] != h {
		f.holdMu.Unlock()
		return nil
	}
	delete(f.held, r)
	h.timer.Stop()
	f.holdMu.Unlock()
	frames := f.t.opts.Faults.Release(r, f.dir, h.frames)
	how := "reversed"
	if r.Shuffle {
		how = "shuffled"
	}
	f.t.note(fmt.Sprintf("fault rule %d (%s) released %d held frame(s) %s, %s", r.N, r.Text, len(frames), f.dir, how))
	var out []byte
	for _, fr := range frames {
		for _, l := range fr {
			out = append(out, l...)
			out = append(out, '\n')
		}
	}
	return f.dst.write(f.t, out, false, false)
}

// releaseAll writes whatever the reorder rules hold (the stream ended).
func (f *faultWriter) releaseAll() {
	f.holdMu.Lock()
	var rules []*chaos.Rule
	hs := map[*chaos.Rule]*holding{}
	for r, h := range f.held {
		rules = append(rules, r)
		hs[r] = h
	}
	f.holdMu.Unlock()
	slices.SortFunc(rules, func(a, b *chaos.Rule) int { return a.N - b.N })
	for _, r := range rules {
		_ = f.release(r, hs[r])
	}
}

func lineOf(l []byte) []byte { return append(append([]byte(nil), l...), '\n') }

// end writes what is left of a last line without a newline, as it is.
func (f *faultWriter) end() error {
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
	return f.dst.write(f.t, part, false, false)
}
