package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// ProcStat is one process of the server's as the OS reported it (state,
// CPU time); ProcState its state.
type (
	ProcStat  = transport.ProcStat
	ProcState = transport.ProcState
)

// SnapshotKind is what a timeout snapshot concludes the server was doing
// when the deadline passed.
type SnapshotKind string

// The kinds of snapshot (docs/errors.md, "Reading a timeout snapshot").
const (
	// SnapBlocked: the request was not fully written: sonde's write to the
	// server's stdin was still waiting (the pipe was full: the server had
	// stopped reading), or the request waited behind such a write.
	SnapBlocked SnapshotKind = "blocked"
	// SnapBusy: the server's processes used CPU for much of the time since
	// the request was sent: computing (or looping).
	SnapBusy SnapshotKind = "busy"
	// SnapSleeping: the server runs but used next to no CPU: it waits for
	// something (a lock, a network call, a sleep, a lost request).
	SnapSleeping SnapshotKind = "sleeping"
	// SnapStopped: the server process is stopped (SIGSTOP, a debugger,
	// Ctrl-Z): it cannot run until continued.
	SnapStopped SnapshotKind = "stopped"
	// SnapDead: the server process is gone or a zombie.
	SnapDead SnapshotKind = "dead"
	// SnapNoHeaders (HTTP): the POST was sent but no response headers came.
	SnapNoHeaders SnapshotKind = "no-headers"
	// SnapStreamOpen (HTTP): the response is an SSE stream that stayed open
	// without the answer.
	SnapStreamOpen SnapshotKind = "stream-open"
	// SnapUnknown: nothing tells (the OS does not report the process, or
	// an HTTP response that is neither).
	SnapUnknown SnapshotKind = "unknown"
)

// busyShare is the share of one CPU used (or, for a server ready to run,
// used and waited for) over the snapshot's CPU window from which the
// server counts as busy.
const busyShare = 0.3

// snapStderrTail bounds the stderr a snapshot keeps (the last bytes
// written since its request was sent).
const snapStderrTail = 1024

// Snapshot is what sonde saw of the server when a request timed out
// (Error.Snapshot of an MCP_TIMEOUT): enough to tell a server that is
// computing from one that waits, one that stopped reading, and one that is
// gone.
type Snapshot struct {
	Kind SnapshotKind
	// At is when it was taken (the deadline); Queued and Sent when the
	// request was queued and handed to the connection (Sent zero: never).
	At, Queued, Sent time.Time
	// Written says whether the request's bytes went out: "written",
	// "blocked" (the write to the server's stdin had not returned), or
	// "queued" (never started: an earlier write was stuck, or the request
	// was held). BlockedFor is how long the stuck write had waited.
	Written    string
	BlockedFor time.Duration
	// LastStdout is when the server last sent a message (a line on stdout;
	// over HTTP, a message on any stream); LastStderr when it last wrote on
	// stderr. Zero: never.
	LastStdout, LastStderr time.Time
	// Progress counts the progress notifications for the request;
	// LastProgress is when the last came.
	Progress     int
	LastProgress time.Time
	// StderrBytes is what the server wrote on stderr since the request was
	// queued, and Stderr its last bytes (at most 1 KiB; server text).
	StderrBytes uint64
	Stderr      []byte
	// Procs are the server's processes (its process group on Linux and
	// macOS, the server alone on Windows), the server first; ProcErr says
	// why they are missing. CPU is the CPU time they used over CPUWindow,
	// a span that ends at At and starts at the reading taken for the
	// request: at most 1 s before it was queued, or just after (at most
	// 100 ms, or a quarter of its timeout, and the reading's own time;
	// zero CPUWindow: no reading).
	Procs     []ProcStat
	ProcErr   string
	CPU       time.Duration
	CPUWindow time.Duration
	// CPUWait is the time, over CPUWindow, that they were ready to run but
	// waited for a CPU (Linux): wanting CPU is being busy, on a machine
	// too loaded to give it.
	CPUWait time.Duration
	// HTTP is set for a request sent over HTTP.
	HTTP *HTTPSnapshot
}

// HTTPSnapshot is what became of a request's POST by its deadline.
type HTTPSnapshot struct {
	// Status is the response's HTTP status (0: no headers arrived), and
	// Headers when they arrived.
	Status  int
	Headers time.Time
	// SSE: the response is an event stream, still open at the deadline
	// unless StreamEnded; LastEvent is when its last event came.
	SSE         bool
	StreamEnded bool
	LastEvent   time.Time
}

// MarshalJSON writes the snapshot with times as RFC 3339 (omitted when
// zero) and spans in milliseconds.
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	ts := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	procs := make([]map[string]any, 0, len(s.Procs))
	for _, p := range s.Procs {
		procs = append(procs, map[string]any{"pid": p.Pid, "name": p.Name, "state": p.State, "cpu_ms": p.CPU.Milliseconds()})
	}
	m := map[string]any{
		"kind": s.Kind, "summary": s.Summary(), "at": ts(s.At), "queued": ts(s.Queued), "sent": ts(s.Sent),
		"written": s.Written, "blocked_ms": s.BlockedFor.Milliseconds(),
		"last_stdout": ts(s.LastStdout), "last_stderr": ts(s.LastStderr),
		"progress": s.Progress, "last_progress": ts(s.LastProgress),
		"stderr_bytes": s.StderrBytes, "stderr": string(s.Stderr),
		"processes": procs, "cpu_ms": s.CPU.Milliseconds(), "cpu_wait_ms": s.CPUWait.Milliseconds(), "cpu_window_ms": s.CPUWindow.Milliseconds(),
	}
	if s.ProcErr != "" {
		m["process_error"] = s.ProcErr
	}
	if h := s.HTTP; h != nil {
		m["http"] = map[string]any{"status": h.Status, "headers": ts(h.Headers), "sse": h.SSE, "stream_ended": h.StreamEnded, "last_event": ts(h.LastEvent)}
	}
	return json.Marshal(m)
}

// TimeoutSnapshot returns the snapshot of an MCP_TIMEOUT error, or nil.
func TimeoutSnapshot(err error) *Snapshot {
	var e *Error
	if errors.As(err, &e) {
		return e.Snapshot
	}
	return nil
}

// watchState is what the client follows for timeout snapshots: guarded by
// Client.mu except the atomics of the write in progress (the writer sets
// them without the lock). Only the Client calls it: the methods named
// *Locked with c.mu held (start, the reader, the observer, expiry);
// readCPU runs on its own goroutine and takes c.mu.
type watchState struct {
	c          *Client // the client it belongs to
	pid        int
	http       bool
	lastStdout time.Time
	lastStderr time.Time
	stderr     []byte // the last snapStderrTail bytes of stderr

	// The write in progress: its start (unix ns; 0: none) and the first
	// and last request it carries (a batch of queued messages goes in one
	// write; 0: only notifications or responses).
	writeSince atomic.Int64
	writeFrom  atomic.Int64
	writeTo    atomic.Int64

	// The last CPU reading (reused for cpuReuse), whether one is due or
	// being taken, the timer that takes it (cpuDefer; nil once it fired),
	// the requests waiting for it, and the goroutines taking it (Close
	// waits for them).
	cpu      cpuReading
	reading  bool
	cpuTimer *time.Timer
	cpuDue   time.Time
	awaiting []*pending
	readers  sync.WaitGroup
}

// cpuReading is the server's group CPU time at a moment.
type cpuReading struct {
	at        time.Time
	cpu, wait time.Duration
	ready     bool // taken after the handshake
}

// cpuReuse is how long one CPU reading serves as the baseline of new
// requests: reading the process group costs a scan of /proc (a ps on
// macOS), about 1 ms, so it is done at most this often, not per request.
const cpuReuse = time.Second

// cpuDefer is how long after a request is queued (at most a quarter of
// its timeout) the reading it waits for is taken: most requests are
// answered sooner, and a reading no pending request waits for is not
// taken (a one-call session reads none).
const cpuDefer = 100 * time.Millisecond

// baselineLocked gives p the CPU reading its snapshot will compare with:
// the last one when it is fresh, else the next, which a timer takes
// after cpuDefer (never the caller: the reading costs a millisecond) and
// hands to every request waiting for it. A reading from before the
// handshake is not reused after it: the server's start-up would count as
// work.
func (w *watchState) baselineLocked(p *pending, now time.Time) {
	c := w.c
	if w.pid == 0 {
		return
	}
	if r := w.cpu; !r.at.IsZero() && now.Sub(r.at) < cpuReuse && r.ready == c.initialized {
		p.cpuBase = r
		return
	}
	w.awaiting = append(w.awaiting, p)
	delay := min(cpuDefer, p.timeout/4)
	if w.reading && (w.cpuTimer == nil || !w.cpuDue.After(now.Add(delay)) || !w.cpuTimer.Stop()) {
		return // due soon enough for p, or under way
	}
	if !w.reading {
		w.reading = true
		w.readers.Add(1)
	}
	w.cpuDue = now.Add(delay)
	w.cpuTimer = time.AfterFunc(delay, w.deferredRead)
}

// deferredRead is the timer of baselineLocked: it takes the reading when
// a request still waits for one.
func (w *watchState) deferredRead() {
	c := w.c
	c.mu.Lock()
	w.cpuTimer = nil
	if !c.closed && slices.ContainsFunc(w.awaiting, func(p *pending) bool { return c.pending[p.id] == p }) {
		pid, ready := w.pid, c.initialized
		c.mu.Unlock()
		w.readCPU(pid, ready)
		return
	}
	w.cancelReadLocked()
	c.mu.Unlock()
}

// stopReadLocked stops a reading that is due and not yet under way
// (Close: no request waits for it any more).
func (w *watchState) stopReadLocked() {
	if w.cpuTimer != nil && w.cpuTimer.Stop() {
		w.cpuTimer = nil
		w.cancelReadLocked()
	}
}

// cancelReadLocked drops the reading that was due.
func (w *watchState) cancelReadLocked() {
	w.reading = false
	clear(w.awaiting)
	w.awaiting = w.awaiting[:0]
	w.readers.Done()
}

// readCPU takes a CPU reading of process group pid and hands it to the
// requests waiting for one.
func (w *watchState) readCPU(pid int, ready bool) {
	c := w.c
	defer w.readers.Done()
	procs, err := transport.StatGroup(pid)
	at := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	w.reading = false
	if err == nil && len(procs) > 0 {
		cpu, wait := transport.GroupCPU(procs)
		w.cpu = cpuReading{at: at, cpu: cpu, wait: wait, ready: ready}
		for _, p := range w.awaiting {
			if c.pending[p.id] == p {
				p.cpuBase = w.cpu
			}
		}
	}
	clear(w.awaiting)
	w.awaiting = w.awaiting[:0]
}

// seenStderr records a chunk of stderr (c.mu held).
func (w *watchState) seenStderr(t time.Time, b []byte) {
	w.lastStderr = t
	if len(b) >= snapStderrTail {
		w.stderr = append(w.stderr[:0], b[len(b)-snapStderrTail:]...)
		return
	}
	if over := len(w.stderr) + len(b) - snapStderrTail; over > 0 {
		w.stderr = append(w.stderr[:0], w.stderr[over:]...)
	}
	w.stderr = append(w.stderr, b...)
}

// writeStarted and writeEnded bracket each write of the writer goroutine
// (of one message, or of a batch of them).
func (w *watchState) writeStarted(items ...outItem) {
	var from, to int64
	for _, it := range items {
		if it.p == nil {
			continue
		}
		if from == 0 {
			from = it.p.id
		}
		to = it.p.id
	}
	w.writeFrom.Store(from)
	w.writeTo.Store(to)
	w.writeSince.Store(time.Now().UnixNano())
}

func (w *watchState) writeEnded() { w.writeSince.Store(0) }

// httpSeen is what a request's POST did (HTTP only; c.mu held).
type httpSeen struct {
	status      int
	headers     time.Time
	sse         bool
	streamEnded bool
	lastEvent   time.Time
}

// seenHTTPLocked follows the HTTP events of pending requests.
func (w *watchState) seenHTTPLocked(t time.Time, ev *transport.HTTPEvent) {
	c := w.c
	n, ok := ev.ReqID.Int64()
	if !ok {
		return
	}
	p := c.pending[n]
	if p == nil {
		return
	}
	if p.http == nil {
		p.http = &httpSeen{}
	}
	h := p.http
	switch {
	case ev.Method == "POST" && ev.Status != 0:
		h.status, h.headers = ev.Status, t
		for _, line := range ev.Header {
			if strings.HasPrefix(line, "< ") && strings.Contains(strings.ToLower(line), "text/event-stream") {
				h.sse = true
			}
		}
	case ev.Method == "":
		h.lastEvent = t
		if ev.Problem {
			h.streamEnded = true
		}
	}
}

// snapshotLocked builds the snapshot of p at now from what the client saw
// and procs, the server's processes read just before (c.mu held).
func (w *watchState) snapshotLocked(p *pending, now time.Time, procs []ProcStat, procErr error) *Snapshot {
	c := w.c
	s := &Snapshot{At: now, Queued: p.queuedAt, Sent: p.sentAt, LastStdout: w.lastStdout, LastStderr: w.lastStderr,
		Progress: p.progressN, LastProgress: p.lastProgress, StderrBytes: c.stats.StderrBytes - p.stderrMark}
	if s.StderrBytes > 0 && len(w.stderr) > 0 {
		keep := min(uint64(len(w.stderr)), s.StderrBytes)
		s.Stderr = append([]byte(nil), w.stderr[uint64(len(w.stderr))-keep:]...)
	}
	since := w.writeSince.Load()
	stuck := time.Duration(0)
	if since != 0 {
		stuck = now.Sub(time.Unix(0, since))
	}
	switch {
	case p.wstate == notWritten:
		s.Written, s.BlockedFor = "queued", stuck
	case since != 0 && w.writeFrom.Load() != 0 && w.writeFrom.Load() <= p.id && p.id <= w.writeTo.Load():
		s.Written, s.BlockedFor = "blocked", stuck
	default:
		s.Written = "written"
	}
	s.Procs = procs
	if procErr != nil {
		s.ProcErr = procErr.Error()
	}
	if len(procs) > 0 && !p.cpuBase.at.IsZero() {
		cpu, wait := transport.GroupCPU(procs)
		s.CPU, s.CPUWait = max(cpu-p.cpuBase.cpu, 0), max(wait-p.cpuBase.wait, 0)
		s.CPUWindow = now.Sub(p.cpuBase.at)
	}
	if w.http {
		h := p.http
		if h == nil {
			h = &httpSeen{}
		}
		s.HTTP = &HTTPSnapshot{Status: h.status, Headers: h.headers, SSE: h.sse, StreamEnded: h.streamEnded, LastEvent: h.lastEvent}
		if s.HTTP.LastEvent.IsZero() && h.sse {
			s.HTTP.LastEvent = p.lastProgress
		}
	}
	s.Kind = classify(s, stuck)
	return s
}

// classify concludes what the server was doing.
func classify(s *Snapshot, stuck time.Duration) SnapshotKind {
	if s.Written == "blocked" || (s.Written == "queued" && stuck > 0) {
		return SnapBlocked
	}
	if s.HTTP != nil {
		switch {
		case s.HTTP.Status == 0 && s.Written == "written":
			return SnapNoHeaders
		case s.HTTP.SSE && !s.HTTP.StreamEnded:
			return SnapStreamOpen
		}
		return SnapUnknown
	}
	if len(s.Procs) == 0 {
		return SnapUnknown
	}
	switch s.Procs[0].State {
	case transport.ProcGone, transport.ProcZombie:
		return SnapDead
	case transport.ProcStopped:
		return SnapStopped
	}
	running := false // one of its processes is on a CPU or ready for one
	for _, p := range s.Procs {
		running = running || p.State == transport.ProcRunning
	}
	if s.CPUWindow > 0 {
		// Used a CPU for much of the time; or, on a machine too loaded to
		// give it one, ready to run now and waiting for one much of the
		// time (an idle process's threads wait too when they wake, but do
		// not stay ready to run).
		share := func(d time.Duration) bool { return float64(d) >= busyShare*float64(s.CPUWindow) }
		if share(s.CPU) || (running && share(s.CPU+s.CPUWait)) {
			return SnapBusy
		}
		return SnapSleeping
	}
	if running {
		return SnapBusy
	}
	if s.Procs[0].State == transport.ProcSleeping || s.Procs[0].State == transport.ProcDiskWait {
		return SnapSleeping
	}
	return SnapUnknown
}

// expiry is a timeout in progress (pending.expiring): the response that
// came meanwhile, if any.
type expiry struct {
	held *transport.Frame
}

// expireLocked settles p with MCP_TIMEOUT and its snapshot. Reading the
// server's processes takes a scan of /proc (a ps on macOS), so it runs
// with c.mu released: p is marked expiring meanwhile, and a response that
// comes then does not settle it (the deadline has passed) but is held and
// reported late afterwards. A settle by another path meanwhile (cancel,
// exit, close) wins, and the snapshot is dropped. cause is the error's
// Err (the caller's deadline). It reports whether it settled p. c.mu is
// held on entry and on return.
func (c *Client) expireLocked(p *pending, msg string, cause error) bool {
	p.expiring = &expiry{}
	pid := c.watch.pid
	var procs []ProcStat
	var procErr error
	if pid != 0 {
		c.watch.readers.Add(1) // Close waits for it
		c.mu.Unlock()
		procs, procErr = transport.StatGroup(pid)
		c.mu.Lock()
		c.watch.readers.Done()
	}
	if c.pending[p.id] != p {
		return false
	}
	s := c.watch.snapshotLocked(p, time.Now(), procs, procErr)
	c.settleLocked(p, outcome{state: StateTimeout, err: &Error{Code: CodeTimeout, Message: msg + "; " + s.Summary(), Snapshot: s, Err: cause}})
	if f := p.expiring.held; f != nil {
		c.responseLocked(*f) // now retired: a late response
	}
	return true
}

// heldResponseLocked keeps the first response that comes while p's
// timeout is being settled; another is a duplicate.
func (w *watchState) heldResponseLocked(p *pending, f transport.Frame) {
	c := w.c
	if p.expiring.held == nil {
		p.expiring.held = &f
		return
	}
	c.stats.Duplicate++
	c.hub.emitFrame(f, VerdictDuplicate, fmt.Sprintf("second response for %s while it timed out; ignored", idText(p.id)))
}

// Late is a response that came after its request had timed out
// (FrameInfo.Late).
type Late struct {
	ID     jsonrpc.ID
	Method string
	Tool   string
	// AfterDeadline is how long after the timeout it came; Latency the
	// time since the request was queued.
	AfterDeadline, Latency time.Duration
	// Enough is the --timeout that would have been enough: Latency rounded
	// up (to 100 ms under 10 s, to whole seconds above).
	Enough time.Duration
	// Error is true for an error answer.
	Error bool
}

// enoughTimeout rounds a latency up to a --timeout worth typing.
func enoughTimeout(lat time.Duration) time.Duration {
	unit := time.Second
	if lat < 10*time.Second {
		unit = 100 * time.Millisecond
	}
	return (lat/unit + 1) * unit
}

// UnmarshalJSON reads what MarshalJSON wrote (a capture's error record):
// spans come back to the millisecond, and Summary is recomputed.
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	var v struct {
		Kind             SnapshotKind
		At, Queued, Sent *time.Time
		Written          string
		BlockedMS        int64      `json:"blocked_ms"`
		LastStdout       *time.Time `json:"last_stdout"`
		LastStderr       *time.Time `json:"last_stderr"`
		Progress         int
		LastProgress     *time.Time `json:"last_progress"`
		StderrBytes      uint64     `json:"stderr_bytes"`
		Stderr           string
		CPUMS            int64  `json:"cpu_ms"`
		CPUWaitMS        int64  `json:"cpu_wait_ms"`
		CPUWindowMS      int64  `json:"cpu_window_ms"`
		ProcessError     string `json:"process_error"`
		Processes        []struct {
			Pid   int
			Name  string
			State ProcState
			CPUMS int64 `json:"cpu_ms"`
		}
		HTTP *struct {
			Status      int
			Headers     *time.Time
			SSE         bool
			StreamEnded bool       `json:"stream_ended"`
			LastEvent   *time.Time `json:"last_event"`
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	t := func(p *time.Time) time.Time {
		if p == nil {
			return time.Time{}
		}
		return *p
	}
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	*s = Snapshot{Kind: v.Kind, At: t(v.At), Queued: t(v.Queued), Sent: t(v.Sent), Written: v.Written, BlockedFor: ms(v.BlockedMS),
		LastStdout: t(v.LastStdout), LastStderr: t(v.LastStderr), Progress: v.Progress, LastProgress: t(v.LastProgress),
		StderrBytes: v.StderrBytes, ProcErr: v.ProcessError, CPU: ms(v.CPUMS), CPUWait: ms(v.CPUWaitMS), CPUWindow: ms(v.CPUWindowMS)}
	if v.Stderr != "" {
		s.Stderr = []byte(v.Stderr)
	}
	for _, p := range v.Processes {
		s.Procs = append(s.Procs, ProcStat{Pid: p.Pid, Name: p.Name, State: p.State, CPU: ms(p.CPUMS)})
	}
	if h := v.HTTP; h != nil {
		s.HTTP = &HTTPSnapshot{Status: h.Status, Headers: t(h.Headers), SSE: h.SSE, StreamEnded: h.StreamEnded, LastEvent: t(h.LastEvent)}
	}
	return nil
}
