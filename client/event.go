package client

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// EventKind says what an Event reports.
type EventKind uint8

// The kinds of event.
const (
	// EvFrame: a frame in or out (Frame).
	EvFrame EventKind = iota + 1
	// EvRequest: a lifecycle transition of a request (Req).
	EvRequest
	// EvStderr: a chunk of the server's stderr (Stderr).
	EvStderr
	// EvProcess: the server process started, was signalled, or ended (Proc).
	EvProcess
	// EvNote: something the client noticed that is not a frame (Note).
	EvNote
	// EvHTTP: an HTTP exchange, or a stream event that is not a message
	// (HTTP).
	EvHTTP
	// EvTask: a task-augmented request's task changed status, or ended
	// (Task).
	EvTask
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case EvFrame:
		return "frame"
	case EvRequest:
		return "request"
	case EvStderr:
		return "stderr"
	case EvProcess:
		return "process"
	case EvNote:
		return "note"
	case EvHTTP:
		return "http"
	case EvTask:
		return "task"
	}
	return "?"
}

// Event is one entry of the client's event stream. Exactly one of Frame,
// Req, Stderr, Proc, Note, HTTP or Task is set, according to Kind.
type Event struct {
	// Seq numbers events from 1 in the order they happened; a consumer that
	// sees a gap missed events.
	Seq    uint64
	Time   time.Time
	Kind   EventKind
	Frame  *FrameInfo
	Req    *ReqInfo
	Stderr []byte
	Proc   *ProcInfo
	Note   string
	// Fault, on a note, is what a fault rule of sonde tap --fault did
	// (Note says it in words).
	Fault *Fault
	// Hold, on a note, is a step of a frame a breakpoint held (sonde tap
	// --break, docs/breakpoints.md): held, then released, edited, dropped
	// or answered.
	Hold *Hold
	HTTP *HTTPEvent
	Task *TaskInfo
}

// StartsSession reports whether ev begins a new session: a server process
// started (ProcStart) or an HTTP connection made (ProcConnect). Request ids
// start again after it. This is the one definition every consumer uses.
func (ev Event) StartsSession() bool {
	return ev.Kind == EvProcess && ev.Proc != nil && (ev.Proc.What == ProcStart || ev.Proc.What == ProcConnect)
}

// Verdict is what a frame did, from the pending map's point of view.
type Verdict string

// Frame verdicts.
const (
	VerdictSent          Verdict = "sent"           // out: written to the server
	VerdictResolved      Verdict = "resolved"       // in: a result that settled a pending request
	VerdictRemoteError   Verdict = "error"          // in: a JSON-RPC error that settled a pending request
	VerdictLate          Verdict = "late"           // in: a response for a request already timed out or cancelled
	VerdictDuplicate     Verdict = "duplicate"      // in: a second response for an id already answered
	VerdictUnknown       Verdict = "unknown"        // in: a response for an id sonde never sent
	VerdictMalformed     Verdict = "malformed"      // in: not JSON, or JSON that is not an object
	VerdictInvalid       Verdict = "invalid"        // in: an object that breaks a JSON-RPC rule
	VerdictTooLong       Verdict = "too-long"       // in: a line over the size cap (Raw holds its start)
	VerdictServerRequest Verdict = "server-request" // in: a request from the server
	VerdictNotification  Verdict = "notification"   // in: a notification from the server
	VerdictProgress      Verdict = "progress"       // in: a progress notification for a pending request
	// VerdictUndeclared: in: a request from the server for a client
	// capability sonde did not declare (a protocol violation); it is
	// answered with a JSON-RPC error.
	VerdictUndeclared Verdict = "undeclared"
)

// FrameInfo is a frame and what it did.
type FrameInfo struct {
	Frame
	Verdict Verdict
	// Detail explains the verdict in one line ("resolved id 3 after 812ms",
	// "line on stdout is not JSON: servers must log to stderr").
	Detail string
	// VerdictInDetail is true when Detail is a sentence that starts with
	// the verdict's own word and a space ("resolved id 3 after 812ms" for
	// VerdictResolved, "error for id 4 after 2s", "progress 1/2 for id 5"):
	// a consumer that shows one text shows Detail alone, and one that shows
	// the verdict beside it shows DetailAfterVerdict.
	VerdictInDetail bool
	// InputRequired is true for a response of VerdictResolved that is a
	// modern input_required result: it settled the request with
	// StateRetried, and sonde answers the input requests and retries under
	// a new id (ReqInfo.RetryOf).
	InputRequired bool
	// Late is set on a VerdictLate frame answering a request that timed
	// out: how long after the deadline it came, and the --timeout that
	// would have been enough.
	Late *Late
}

// DetailAfterVerdict is Detail without its leading repeat of the verdict
// (VerdictInDetail): "id 3 after 812ms" for "resolved id 3 after 812ms".
func (f *FrameInfo) DetailAfterVerdict() string {
	if f.VerdictInDetail && len(f.Detail) > len(f.Verdict) {
		return f.Detail[len(f.Verdict)+1:]
	}
	return f.Detail
}

// State is a lifecycle state of a request.
type State string

// Request states. Queued, Sent and Progress are transient; the others are
// outcomes, and each request has exactly one.
const (
	StateQueued    State = "queued"    // registered in the pending map, bytes not yet written
	StateSent      State = "sent"      // bytes written
	StateProgress  State = "progress"  // the server reported progress
	StateResolved  State = "resolved"  // outcome: a result
	StateError     State = "error"     // outcome: a JSON-RPC error
	StateTimeout   State = "timeout"   // outcome: deadline passed
	StateCancelled State = "cancelled" // outcome: the caller cancelled
	StateExited    State = "exited"    // outcome: the server process ended
	StateClosed    State = "closed"    // outcome: sonde closed the session
	StateProtocol  State = "protocol"  // outcome: the server broke the protocol
	StateHTTP      State = "http"      // outcome: the HTTP exchange failed (status, network, session)
	StateRejected  State = "rejected"  // outcome: refused before registration (busy, aborted, closed)
	StateReceived  State = "received"  // a request from the server arrived
	StateAnswered  State = "answered"  // sonde answered a request from the server
	StateRetried   State = "retried"   // outcome (modern era): the result was input_required; a retry under a new id continues the call
	StateHeld      State = "held"      // the deadline stands still: a request of the server's is being answered (HoldDeadlines)
)

// Final reports whether s is an outcome.
func (s State) Final() bool {
	switch s {
	case StateQueued, StateSent, StateProgress, StateReceived, StateHeld:
		return false
	}
	return true
}

// Progress is what a progress notification reported.
type Progress struct {
	Progress float64
	Total    *float64
	Message  string
}

// ReqInfo is a lifecycle transition of a request.
type ReqInfo struct {
	// Dir is Out for sonde's requests and In for the server's requests (a
	// separate id space).
	Dir    Direction
	ID     jsonrpc.ID
	Method string
	// Tool is the tool name of a tools/call.
	Tool     string
	State    State
	Deadline time.Time
	// Timeout and MaxEnd are the request's budget, on its queued
	// transition: its own timeout, and with ResetOnProgress the latest its
	// deadline can move to (zero: progress does not move it).
	Timeout time.Duration
	MaxEnd  time.Time
	// Latency is the time since the request was queued (for outcomes).
	Latency  time.Duration
	Progress *Progress
	Err      error
	// Params are the params of a request from the server (on its received
	// transition), for a UI that answers it.
	Params json.RawMessage
	// RetryOf is, for a modern-era retry after input_required, the id of
	// the request it continues.
	RetryOf jsonrpc.ID
}

// ProcKind says what a process event (ProcInfo) reports. It is a string
// type: its values are the words a capture file records (docs/capture-format.md).
type ProcKind string

// The kinds of process event.
const (
	// ProcStart: the server process started (Pid, Argv).
	ProcStart ProcKind = "start"
	// ProcSignal: sonde took a step to stop the server's processes (Pid,
	// Signal names it: SIGTERM, SIGKILL, CTRL_BREAK_EVENT, ...).
	ProcSignal ProcKind = "signal"
	// ProcExit: the server process ended (Pid, Exit).
	ProcExit ProcKind = "exit"
	// ProcConnect: an HTTP connection was set up (Argv holds the URL, Pid
	// is 0); it plays the part of ProcStart for a server sonde does not run.
	ProcConnect ProcKind = "connect"
	// ProcSpawnFailed: Connect could not start the server (or, over HTTP,
	// the first exchange failed): no process runs (Pid is 0), and Err is the
	// *Error Connect returned (MCP_SPAWN, or the exchange's code over HTTP).
	// No other process event follows for that connection.
	ProcSpawnFailed ProcKind = "spawn-failed"
)

// ProcInfo is a process event.
type ProcInfo struct {
	// What says what happened (see ProcKind for the fields each sets).
	What   ProcKind
	Pid    int
	Argv   []string
	Signal string
	Exit   *Exit
	Err    error
}

// Subscription receives the client's events on C, in Seq order.
//
// Delivery rule: the client never waits for a subscriber. Each event is
// offered to each subscription's buffered channel; when the buffer is full
// the event is not delivered to that subscriber and its Missed count goes up
// (the gap also shows in Seq). C is closed after the client is closed and
// its last event has been offered, or when the subscription is closed.
type Subscription struct {
	C      <-chan Event
	ch     chan Event
	missed atomic.Uint64
	owner  *hub
	grow   *overflow // SubscribeGrowing's; nil for Subscribe's
}

// Missed returns how many events this subscriber did not receive because
// its buffer was full.
func (s *Subscription) Missed() uint64 { return s.missed.Load() }

// Close unsubscribes and closes C. It is idempotent.
func (s *Subscription) Close() { s.owner.unsubscribe(s) }

// Subscribe returns a new subscription with a buffer of n events (at least
// 1). Subscribe before Connect to see every event.
func (c *Client) Subscribe(n int) *Subscription { return c.hub.subscribe(n) }

// hub numbers events and offers them to subscribers under the delivery
// rule (see Subscription): the Client's event stream, and the Observer's.
type hub struct {
	emitMu     sync.Mutex
	seq        uint64
	subs       []*Subscription
	subsClosed bool
}

func (h *hub) subscribe(n int) *Subscription {
	ch := make(chan Event, max(n, 1))
	return h.add(&Subscription{C: ch, ch: ch, owner: h})
}

// add registers s, or closes its channel at once when the hub's
// subscriptions are closed already.
func (h *hub) add(s *Subscription) *Subscription {
	h.emitMu.Lock()
	defer h.emitMu.Unlock()
	if h.subsClosed {
		close(s.ch)
		return s
	}
	h.subs = append(h.subs, s)
	return s
}

func (h *hub) unsubscribe(s *Subscription) {
	h.emitMu.Lock()
	defer h.emitMu.Unlock()
	for i, x := range h.subs {
		if x == s {
			h.subs = append(h.subs[:i], h.subs[i+1:]...)
			if s.grow != nil {
				s.grow.close(s)
				return
			}
			close(s.ch)
			return
		}
	}
}

// emit stamps ev and offers it to every subscriber without blocking. It may
// be called with Client.mu held (lock order: mu, then emitMu).
func (h *hub) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	h.emitMu.Lock()
	h.seq++
	ev.Seq = h.seq
	for _, s := range h.subs {
		if s.grow != nil {
			s.grow.offer(s, ev)
			continue
		}
		select {
		case s.ch <- ev:
		default:
			s.missed.Add(1)
		}
	}
	h.emitMu.Unlock()
}

// skip leaves a gap of n in Seq: n events that happened were never
// emitted (a consumer sees them as missed).
func (h *hub) skip(n uint64) {
	h.emitMu.Lock()
	h.seq += n
	h.emitMu.Unlock()
}

func (h *hub) closeAll() {
	h.emitMu.Lock()
	defer h.emitMu.Unlock()
	for _, s := range h.subs {
		if s.grow != nil {
			s.grow.close(s)
			continue
		}
		close(s.ch)
	}
	h.subs = nil
	h.subsClosed = true
}
