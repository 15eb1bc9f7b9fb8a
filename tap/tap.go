// Package tap is the core of sonde tap: a stdio shim that a host launches
// instead of an MCP server. It starts the server (transport.StartProcess:
// its own process group, cleaned up as a driven session's is) and forwards
// bytes verbatim in both directions, host stdin to server stdin, server
// stdout to host stdout, server stderr to host stderr: no framing, no
// re-encoding, no cap, each chunk written on as soon as it is read.
//
// Observation works on a copy of each chunk, handed to one observer
// goroutine through a bounded queue that never blocks a forwarder: a chunk
// that does not fit is not observed, counted, and reported to the
// client.Observer as missed. A forwarder puts the copy in the queue before
// it writes the chunk on (so observation sees each direction in the order
// the bytes went), and wakes the observer only after the write: waking a
// goroutine costs a system call, which the forwarding does not wait for. The observer goroutine frames each direction
// into lines (transport.LineSplitter, whose cap bounds only what is
// decoded) and feeds them to the client.Observer, whose events a
// capture.Recorder writes.
package tap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/transport"
)

// Defaults for Options fields left zero.
const (
	// DefaultQueue is how many chunks observation may fall behind by.
	DefaultQueue = 1024
	// DefaultQueueBytes is how many bytes observation may fall behind by.
	DefaultQueueBytes = 8 << 20
	// DefaultStderrBytes is the stderr tail kept for the exit event.
	DefaultStderrBytes = 64 << 10
	// chunkBytes is the forwarders' read buffer.
	chunkBytes = 64 << 10
	// observeTick is how long the observer waits, while chunks keep
	// coming, before it takes the next ones (see observe).
	observeTick = time.Millisecond
)

// Options configure a tap.
type Options struct {
	// Argv is the server's program and arguments (no shell).
	Argv []string
	// Env is the server's environment; nil passes the tap's own through
	// unchanged (it is the host's), transport.MarkEnv added.
	Env []string
	// Observer receives what went by; nil observes nothing (bytes are
	// still forwarded).
	Observer *client.Observer
	// MaxLineBytes caps the lines observation decodes (default
	// transport.DefaultMaxLineBytes); a longer line is forwarded whole and
	// observed as too long.
	MaxLineBytes int
	// Queue and QueueBytes bound how far observation may fall behind, in
	// chunks and in bytes (DefaultQueue, DefaultQueueBytes).
	Queue      int
	QueueBytes int64
	// KillAfter is how long the server's stdout and stderr may stay open
	// after it exited (held by something it left that could not be
	// stopped) before the tap stops reading them (default
	// transport.DefaultKillAfter).
	KillAfter time.Duration
	// Signals are passed on to the server's process group as they come
	// (Process.Signal); nil passes none.
	Signals <-chan os.Signal
	// Faults, when set, are sonde tap --fault's rules: the host's stdin
	// and the server's stdout are then forwarded a whole line at a time
	// (faults.go), each line through the engine, and the observer sees
	// what the host sent and what the host received (not what the server
	// wrote), with a note for each rule that fired.
	Faults *chaos.Engine
	// Injector, when set, lets a watcher send requests of its own into
	// the session (inject.go); not with Faults.
	Injector *Injector
	// Breaks, when set, are the breakpoints (breaks.go): each direction
	// then goes through them, before Faults and after the Injector takes
	// its answers out, and the observer sees what the host sent and what
	// the host received.
	Breaks *Breaks
}

// Stats is what a tap forwarded and what observation missed.
type Stats struct {
	// Bytes forwarded: host to server, server to host (stdout), stderr.
	In, Out, Err int64
	// MissedChunks and MissedBytes were forwarded but not observed.
	MissedChunks uint64
	MissedBytes  int64
}

// stream names a forwarded stream.
type stream uint8

const (
	streamIn  stream = iota // host stdin → server stdin
	streamOut               // server stdout → host stdout
	streamErr               // server stderr → host stderr
)

// chunk is a copy of what a forwarder read, for the observer.
type chunk struct {
	s    stream
	data []byte
	t    time.Time
	end  bool // the stream ended (data is empty)
	// note, when set, is a note for the recording (a fault rule fired),
	// and fault what the rule did.
	note  string
	fault *client.Fault
	hold  *client.Hold
	// missed counts the chunks of this stream that were not observed
	// just before this one; missedBytes their size; atLineStart whether
	// the last of them ended with a newline.
	missed      uint64
	missedBytes int64
	atLineStart bool
}

// tap is one run.
type tap struct {
	opts     Options
	proc     *transport.Process
	queue    *queue
	observed chan struct{} // closed when the observer goroutine returns
	inflight atomic.Int64  // bytes queued or being observed
	stats    Stats
	statsMu  sync.Mutex
	// miss is what each stream's observation missed since its last
	// observed chunk; offerMu serializes each stream's offers.
	miss    [3]missState
	offerMu [3]sync.Mutex
	// pipe is the fault rules' path (faults.go), when they are on.
	pipe *chaos.Pipe
}

// missState counts a stream's chunks that were not observed since the
// last one that was.
type missState struct {
	n           uint64
	bytes       int64
	atLineStart bool
}

// Run starts the server and forwards in to its stdin, its stdout to out
// and its stderr to errw until it has exited and its stdout and stderr are
// drained. It returns how the server ended (Ended.Status is the tap's exit
// status) and what was forwarded. A server that cannot start is a
// *transport.SpawnError. Run does not wait for in to end: a forwarder left
// reading it ends with its next read.
func Run(opts Options, in io.Reader, out, errw io.Writer) (transport.Ended, Stats, error) {
	opts = opts.withDefaults()
	p, err := transport.StartProcess(transport.ProcessConfig{Argv: opts.Argv, Env: opts.Env})
	if err != nil {
		return transport.Ended{}, Stats{}, err
	}
	t := &tap{opts: opts, proc: p, queue: newQueue(opts.Queue), observed: make(chan struct{})}
	if o := opts.Observer; o != nil {
		o.Start(p.Pid(), opts.Argv, time.Now())
	}
	endc := make(chan transport.Ended, 1)
	go func() {
		defer close(t.observed)
		t.observe(endc)
	}()

	stopSignals := make(chan struct{})
	signalsDone := make(chan struct{})
	go func() {
		defer close(signalsDone)
		t.passSignals(stopSignals)
	}()

	r := t.route(out, errw)
	if r.filter != nil {
		defer opts.Injector.end()
	}
	// host → server: the host's EOF closes the server's stdin. Run does
	// not wait for it (the host may never close its end).
	go func() {
		n, _ := t.forward(streamIn, in, r.toServer, nil, r.observeIn)
		p.Stdin.Close()
		t.count(streamIn, n)
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		// A host that stopped reading is gone: the server's next write
		// fails as it would have, had the host started it.
		n, _ := t.forward(streamOut, p.Stdout, r.toHost, func() { p.Stdout.Close() }, r.observeOut)
		t.count(streamOut, n)
	}()
	go func() {
		defer wg.Done()
		n, _ := t.forward(streamErr, p.Stderr, r.toErr, func() { p.Stderr.Close() }, true)
		t.count(streamErr, n)
	}()

	ended := p.Wait() // and what it left behind is stopped
	t.drain(&wg)
	p.Stdout.Close()
	p.Stderr.Close()
	if r.filter != nil {
		r.filter.flush()
		opts.Injector.end()
	}
	if r.breaks != nil {
		if r.filter != nil {
			_ = r.breaks.toHost.End()
		}
		r.breaks.finish(opts.Breaks)
	}
	if t.pipe != nil {
		t.pipe.Close()
	}
	close(stopSignals)
	<-signalsDone
	endc <- ended
	<-t.observed
	t.statsMu.Lock()
	defer t.statsMu.Unlock()
	return ended, t.stats, nil
}

// withDefaults is opts with each limit left at zero (or below) set to
// its default.
func (opts Options) withDefaults() Options {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = transport.DefaultMaxLineBytes
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	if opts.KillAfter <= 0 {
		opts.KillAfter = transport.DefaultKillAfter
	}
	return opts
}

// routes are where the forwarders write each stream, and which of them
// offer what they read to the observer: straight through, through the
// breakpoints, through the fault rules' pipe, or through the injector's
// filters.
type routes struct {
	toServer, toHost, toErr io.Writer
	observeOut, observeIn   bool
	// filter is the host's stdout filter of an injector (nil without one).
	filter *hostFilter
	// breaks is the breakpoints' path (nil without breakpoints).
	breaks *breakPath
}

// route sets up the writers of Run's forwarders for t's options (the
// server's stdin, the host's stdout out and stderr errw).
func (t *tap) route(out, errw io.Writer) routes {
	opts, p := t.opts, t.proc
	r := routes{toServer: p.Stdin, toHost: out, toErr: errw, observeOut: true, observeIn: true}
	switch {
	case opts.Faults != nil:
		r.toServer, r.toHost, r.toErr = t.faultWriters(p.Stdin, out, errw)
		r.observeOut = false // the host's stdout is observed as written
	case opts.Injector != nil:
		opts.Injector.attach(t, p.Stdin)
		r.filter = &hostFilter{in: opts.Injector, w: out, max: opts.MaxLineBytes}
		sw := serverWriter{in: opts.Injector, quiet: opts.Breaks != nil}
		r.toServer, r.toHost = sw, r.filter
		r.observeIn = opts.Breaks != nil // serverWriter offers what it writes, unless breakpoints come first
	}
	if opts.Breaks != nil {
		// The host's stdout is observed as written (the fault rules'
		// writer does it already).
		r.breaks = t.newBreakPath(r.toServer, out, opts.Faults == nil)
		if opts.Faults != nil {
			r.breaks.host.w = r.toHost
		}
		r.toServer = r.breaks.toServer
		if r.filter != nil {
			r.filter.w = r.breaks.toHost
			r.filter.taken = r.breaks.host.observe
		} else {
			r.toHost = r.breaks.toHost
		}
		r.observeOut = false
	}
	return r
}

// drain waits for the forwarders of the server's stdout and stderr (wg)
// once the server ended, for KillAfter at most: then it closes the pipes
// and the fault rules' pipe, and waits for them to return.
func (t *tap) drain(wg *sync.WaitGroup) {
	p := t.proc
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(t.opts.KillAfter):
		// Something outside the server's reach still holds a pipe, or a
		// fault rule still holds a frame (a delay): both end now.
		p.Stdout.Close()
		p.Stderr.Close()
		if t.pipe != nil {
			t.pipe.Close()
		}
		<-drained
	}
}

func (t *tap) count(s stream, n int64) {
	t.statsMu.Lock()
	defer t.statsMu.Unlock()
	switch s {
	case streamIn:
		t.stats.In += n
	case streamOut:
		t.stats.Out += n
	case streamErr:
		t.stats.Err += n
	}
}

// forward copies src to dst a chunk at a time, writing each chunk on as
// soon as it is read, and offers a copy of each to the observer first
// (without waiting: the copy is dropped, and counted, when the queue is
// full). A failed write calls onWriteErr (when set) and ends the copy.
// Without observe, the chunks read are not offered (dst offers what it
// writes: the fault rules' writer of the host's stdout).
func (t *tap) forward(s stream, src io.Reader, dst io.Writer, onWriteErr func(), observe bool) (int64, error) {
	buf := make([]byte, chunkBytes)
	var total int64
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			staged := false
			if t.opts.Observer != nil && observe {
				staged = t.stage(chunk{s: s, data: append([]byte(nil), buf[:n]...), t: time.Now()})
			}
			_, err := dst.Write(buf[:n])
			if staged {
				t.queue.wake()
			}
			if err != nil {
				if onWriteErr != nil {
					onWriteErr()
				}
				return total, err
			}
			total += int64(n)
		}
		if rerr != nil {
			if f, ok := dst.(ender); ok {
				// The last line, without its newline, goes as it is.
				if err := f.End(); err != nil && onWriteErr != nil {
					onWriteErr()
				}
			}
			if t.opts.Observer != nil {
				// The end marker waits for room: the stream is over, so
				// waiting slows no forwarding, and it carries the count
				// of what was missed last.
				t.offerMu[s].Lock()
				m := t.miss[s]
				t.offerMu[s].Unlock()
				t.queue.putWait(chunk{s: s, t: time.Now(), end: true, missed: m.n, missedBytes: m.bytes, atLineStart: m.atLineStart}, t.observed)
			}
			if errors.Is(rerr, io.EOF) || errors.Is(rerr, os.ErrClosed) {
				return total, nil
			}
			return total, rerr
		}
	}
}

// offer hands a copy of a chunk of stream c.s to the observer without
// waiting: when the queue is full it is counted as missed instead.
func (t *tap) offer(c chunk) {
	if t.stage(c) {
		t.queue.wake()
	}
}

// stage puts a copy of a chunk of stream c.s in the observer's queue
// without waking the observer (the caller calls t.queue.wake once it has
// written the chunk on), and reports whether it did: when the queue is
// full the chunk is counted as missed instead.
func (t *tap) stage(c chunk) bool {
	if t.opts.Observer == nil || len(c.data) == 0 {
		return false
	}
	t.offerMu[c.s].Lock()
	defer t.offerMu[c.s].Unlock()
	miss := &t.miss[c.s]
	c.missed, c.missedBytes, c.atLineStart = miss.n, miss.bytes, miss.atLineStart
	if t.inflight.Load()+int64(len(c.data)) <= t.opts.QueueBytes && t.queue.put(c) {
		t.inflight.Add(int64(len(c.data)))
		miss.n, miss.bytes = 0, 0
		return true
	}
	miss.n++
	miss.bytes += int64(len(c.data))
	miss.atLineStart = c.data[len(c.data)-1] == '\n'
	t.statsMu.Lock()
	t.stats.MissedChunks++
	t.stats.MissedBytes += int64(len(c.data))
	t.statsMu.Unlock()
	return false
}

// note hands the observer a note (a fault rule fired). It waits for room:
// with fault rules, the record of what they did matters more than speed.
func (t *tap) note(text string) {
	if t.opts.Observer == nil {
		return
	}
	t.queue.putWait(chunk{s: streamOut, note: text, t: time.Now()}, t.observed)
}

// fault is note for what a fault rule did, with its fields.
func (t *tap) fault(n chaos.Note) {
	if t.opts.Observer == nil {
		return
	}
	t.queue.putWait(chunk{s: streamOut, note: n.Text, fault: faultOf(n), t: time.Now()}, t.observed)
}

// passSignals passes each signal of opts.Signals on to the server's group
// until stop is closed.
func (t *tap) passSignals(stop <-chan struct{}) {
	if t.opts.Signals == nil {
		return
	}
	for {
		select {
		case <-stop:
			return
		case sig := <-t.opts.Signals:
			if t.opts.Observer != nil {
				t.opts.Observer.Signal(signalName(sig), time.Now())
			}
			_ = t.proc.Signal(sig)
		}
	}
}

// observe is the observer goroutine: it frames the chunks of each stream
// into lines for the client.Observer, until Run hands it the server's end
// (after every forwarder of stdout and stderr has finished); it then
// takes what is left in the queue and reports the exit.
func (t *tap) observe(endc <-chan transport.Ended) {
	o := t.opts.Observer
	if o == nil {
		<-endc
		return
	}
	ob := &observation{
		t:     t,
		o:     o,
		split: [2]*transport.LineSplitter{transport.NewLineSplitter(t.opts.MaxLineBytes), transport.NewLineSplitter(t.opts.MaxLineBytes)},
		dirs:  [2]client.Direction{client.Out, client.In},
		tail:  transport.NewTail(DefaultStderrBytes),
	}
	var batch []chunk
	// busy: the last look found chunks, so the next is a tick later (no
	// forwarder wakes the observer while it is busy: a wake costs the
	// tap a context switch for each read, a tick one for many); idle: the
	// observer sleeps until a forwarder wakes it.
	busy := false
	tick := time.NewTimer(observeTick)
	tick.Stop()
	defer tick.Stop()
	for {
		var wake <-chan time.Time
		ready := t.queue.ready
		if busy {
			tick.Reset(observeTick)
			wake, ready = tick.C, nil
		}
		select {
		case <-ready:
		case <-wake:
		case ended := <-endc:
			for _, c := range t.queue.take(batch) {
				ob.handle(c)
			}
			stderr, dropped := ob.tail.Snapshot()
			o.Exit(client.Exit{Pid: t.proc.Pid(), Code: ended.Code, Signal: ended.Signal, Stderr: stderr, StderrDropped: dropped, Time: time.Now()})
			return
		}
		batch = t.queue.take(batch)
		busy = len(batch) > 0
		for i := range batch {
			ob.handle(batch[i])
			batch[i] = chunk{} // its data is not kept past its handling
		}
		t.queue.roomMade()
	}
}

// observation is what the observer goroutine keeps from one chunk to the
// next: a line splitter for each of stdout and stdin, and stderr's tail.
type observation struct {
	t     *tap
	o     *client.Observer
	split [2]*transport.LineSplitter
	dirs  [2]client.Direction
	tail  *transport.Tail
}

// handle hands one chunk to the client.Observer: a note or a fault, a
// miss, stderr's bytes, or the lines a chunk of stdout or stdin completes.
func (ob *observation) handle(c chunk) {
	o, split, dirs, tail := ob.o, &ob.split, &ob.dirs, ob.tail
	ob.t.inflight.Add(-int64(len(c.data)))
	if c.note != "" && c.fault != nil {
		o.Fault(c.note, c.fault, c.t)
		return
	}
	if c.note != "" && c.hold != nil {
		o.Hold(c.note, c.hold, c.t)
		return
	}
	if c.note != "" {
		o.Note(c.note, c.t)
		return
	}
	if c.missed > 0 {
		o.Missed(c.missed, fmt.Sprintf("observation fell behind: %d bytes of %s (%d reads) were forwarded but not observed", c.missedBytes, c.s, c.missed), c.t)
		if c.s != streamErr {
			split[c.s].Skip(c.atLineStart)
		}
	}
	if c.s == streamErr {
		if len(c.data) > 0 {
			tail.Write(c.data)
			o.Stderr(c.data, c.t)
		}
		return
	}
	emit := func(line []byte, err error) {
		var tl *transport.LineTooLongError
		switch {
		case errors.As(err, &tl):
			o.TooLong(dirs[c.s], tl, c.t)
		default:
			o.Line(dirs[c.s], line, c.t, err != nil)
		}
	}
	if c.end {
		split[c.s].End(emit)
		return
	}
	split[c.s].Feed(c.data, emit)
}

// String names a stream as the note of a miss does.
func (s stream) String() string {
	switch s {
	case streamIn:
		return "the host's stdin"
	case streamOut:
		return "the server's stdout"
	}
	return "the server's stderr"
}

// queue is the observer's queue: chunks in the order they were put, at
// most max of them waiting (what the observer is handling is no longer
// waiting; the tap's QueueBytes bounds both together).
type queue struct {
	mu    sync.Mutex
	c     []chunk
	max   int
	ready chan struct{} // a token when chunks wait and the observer may sleep
	room  chan struct{} // a token when the observer has handled a batch
}

func newQueue(max int) *queue {
	return &queue{max: max, ready: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// put adds c unless max chunks already wait; it does not wake the
// observer (wake does).
func (q *queue) put(c chunk) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.c) >= q.max {
		return false
	}
	q.c = append(q.c, c)
	return true
}

// wake tells the observer that chunks wait; it never blocks.
func (q *queue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// putWait puts c, waiting for room (the observer handling a batch) unless
// done is closed first (the observer has finished: c is dropped), and
// wakes the observer.
func (q *queue) putWait(c chunk, done <-chan struct{}) {
	for !q.put(c) {
		select {
		case <-q.room:
		case <-done:
			return
		}
	}
	q.wake()
	// Another waiter may have been passed the token this one took.
	q.roomMade()
}

// take moves every waiting chunk into buf (emptied first) and returns it.
func (q *queue) take(buf []chunk) []chunk {
	q.mu.Lock()
	defer q.mu.Unlock()
	buf = append(buf[:0], q.c...)
	clear(q.c)
	q.c = q.c[:0]
	return buf
}

// roomMade tells a putWait waiting for room to try again.
func (q *queue) roomMade() {
	select {
	case q.room <- struct{}{}:
	default:
	}
}
