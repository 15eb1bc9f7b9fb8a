package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// Observer follows a session it does not drive: the lines that another
// client (a host) and a server exchange, seen on their way (sonde tap). It
// tracks the requests of both sides by id, as they are (a host may use
// string ids), and turns what it is fed into the events a Client emits,
// with the same verdicts and lifecycle states, on the same delivery rule
// (Subscribe): a recorder, lint or stats read them as a driven session's.
//
// Out is the host's direction (host to server) and In the server's. What a
// passive observer cannot know it does not claim: a host's request has no
// deadline here (so nothing is ever timed out or late by time), and its
// life starts when its line went by (queued and sent at once). A response
// after the host cancelled the request (notifications/cancelled) is late,
// and a second response a duplicate, as for the client.
//
// Its methods are safe for concurrent use; they are meant to be called from
// one goroutine, in the order the bytes went by.
type Observer struct {
	hub hub

	mu     sync.Mutex
	host   side // the host's requests (Out), answered by the server
	server side // the server's requests (In), answered by the host
	// tokens maps a progress token (its JSON text) to the host's request
	// that carried it.
	tokens map[string]jsonrpc.ID
	pid    int
	ended  bool
}

// side is one direction's requests: those in flight and those recently
// ended (a bounded ring), by id. The ring and its index start empty and
// grow with the requests that end, up to max: a session of a few requests
// costs a few entries, a long one at most max (an HTTP tap keeps one
// observer per session, hundreds at once).
type side struct {
	pending map[jsonrpc.ID]*watched
	retired map[jsonrpc.ID]obsRetired // nil until a request ends
	ring    []jsonrpc.ID              // the retired ids, oldest at next once full
	next    int
	max     int
}

// obsRetired is how a request seen passively ended: what a later
// response for it is told by (late, duplicate).
type obsRetired struct {
	state    State
	at       time.Time
	answered bool // a response arrived for it (so another is a duplicate)
}

// watched is a request in flight, seen passively.
type watched struct {
	method string
	tool   string
	at     time.Time
	token  string // progress token, as JSON text
}

func newSide(n int) side {
	return side{pending: map[jsonrpc.ID]*watched{}, max: n}
}

func (s *side) retire(id jsonrpc.ID, ri obsRetired) {
	delete(s.pending, id)
	if s.retired == nil {
		s.retired = map[jsonrpc.ID]obsRetired{}
	}
	if len(s.ring) < s.max {
		if len(s.ring) == cap(s.ring) {
			// Grown by doubling, never past max.
			grown := make([]jsonrpc.ID, len(s.ring), min(max(2*cap(s.ring), 16), s.max))
			copy(grown, s.ring)
			s.ring = grown
		}
		s.ring = append(s.ring, id)
	} else {
		delete(s.retired, s.ring[s.next])
		s.ring[s.next] = id
		s.next = (s.next + 1) % s.max
	}
	s.retired[id] = ri
}

// NewObserver returns an observer that remembers the last retired ids of
// each side (DefaultRetiredIDs when retired <= 0) to tell a duplicate or
// late response from an unknown one. What it remembers grows with the
// requests that end, up to that bound: a new observer costs about a
// kilobyte.
func NewObserver(retired int) *Observer {
	if retired <= 0 {
		retired = DefaultRetiredIDs
	}
	return &Observer{host: newSide(retired), server: newSide(retired), tokens: map[string]jsonrpc.ID{}}
}

// InFlight is the number of requests of either side in flight (seen, not
// yet answered or ended).
func (o *Observer) InFlight() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.host.pending) + len(o.server.pending)
}

// Subscribe returns a new subscription with a buffer of n events (at least
// 1), under the delivery rule of Subscription.
func (o *Observer) Subscribe(n int) *Subscription { return o.hub.subscribe(n) }

// Close ends the event stream: every subscription's channel is closed once
// its last event has been offered.
func (o *Observer) Close() { o.hub.closeAll() }

// Start reports the server process's start.
func (o *Observer) Start(pid int, argv []string, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pid = pid
	o.hub.emit(Event{Time: t, Kind: EvProcess, Proc: &ProcInfo{What: ProcStart, Pid: pid, Argv: argv}})
}

// SpawnFailed reports that the server could not be started: err (a
// *transport.SpawnError) becomes the event's MCP_SPAWN error, as a
// Client's Connect reports it. It returns that error.
func (o *Observer) SpawnFailed(err error, t time.Time) *Error {
	e := spawnErr(err)
	o.hub.emit(Event{Time: t, Kind: EvProcess, Proc: &ProcInfo{What: ProcSpawnFailed, Err: e}})
	return e
}

// Signal reports a signal passed on to the server (Signal names it).
func (o *Observer) Signal(name string, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hub.emit(Event{Time: t, Kind: EvProcess, Proc: &ProcInfo{What: ProcSignal, Pid: o.pid, Signal: name}})
}

// Stderr reports a chunk of the server's stderr (kept, not copied).
func (o *Observer) Stderr(chunk []byte, t time.Time) {
	o.hub.emit(Event{Time: t, Kind: EvStderr, Stderr: chunk})
}

// Note reports something the observer's feeder noticed.
func (o *Observer) Note(text string, t time.Time) {
	o.hub.emit(Event{Time: t, Kind: EvNote, Note: text})
}

// Replay emits an event read back from a recording, as it was recorded
// (its time kept; Seq numbered again): a recording followed as it grows
// (sonde watch) exported as the session it was.
func (o *Observer) Replay(ev Event) { o.hub.emit(ev) }

// Fault reports a note about what a fault rule did, with its fields.
func (o *Observer) Fault(text string, f *Fault, t time.Time) {
	o.hub.emit(Event{Time: t, Kind: EvNote, Note: text, Fault: f})
}

// Hold reports a note about a step of a frame a breakpoint held (sonde
// tap --break), with its fields.
func (o *Observer) Hold(text string, h *Hold, t time.Time) {
	o.hub.emit(Event{Time: t, Kind: EvNote, Note: text, Hold: h})
}

// Missed reports that n events could not be observed (the bytes went by
// while the observer was behind): a gap of n in Seq, which a recorder
// writes as a missed record, after a note saying why.
func (o *Observer) Missed(n uint64, why string, t time.Time) {
	if n == 0 {
		return
	}
	o.hub.emit(Event{Time: t, Kind: EvNote, Note: why})
	o.hub.skip(n)
}

// Exit reports the server's end: every request still in flight on either
// side ends with StateExited (MCP_PROCESS_EXIT), then the exit event.
func (o *Observer) Exit(x Exit) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return
	}
	o.ended = true
	err := exitErr(x, x.What())
	for _, s := range []*side{&o.host, &o.server} {
		dir := Out
		if s == &o.server {
			dir = In
		}
		for id, w := range s.pending {
			s.retire(id, obsRetired{state: StateExited, at: x.Time})
			o.hub.emit(Event{Time: x.Time, Kind: EvRequest, Req: &ReqInfo{
				Dir: dir, ID: id, Method: w.method, Tool: w.tool, State: StateExited, Latency: x.Time.Sub(w.at), Err: err,
			}})
		}
	}
	o.hub.emit(Event{Time: x.Time, Kind: EvProcess, Proc: &ProcInfo{What: ProcExit, Pid: x.Pid, Exit: &x}})
}

// Line reports one line (without its "\n") that went by in dir at t: Out
// from the host to the server, In from the server to the host. last marks
// the final line of a stream that ended without a newline.
func (o *Observer) Line(dir Direction, raw []byte, t time.Time, last bool) {
	o.frame(dir, raw, t, last, "", "")
}

// Message reports one message that went by over HTTP in dir at t: a
// request or response body (or one element of a batch), or the data of an
// SSE event; stream names the HTTP exchange that carried it ("POST 7",
// "GET", "SSE") and eventID is its SSE event id ("" when none).
func (o *Observer) Message(dir Direction, raw []byte, t time.Time, stream, eventID string) {
	o.frame(dir, raw, t, false, stream, eventID)
}

// HTTP reports an HTTP exchange, or a stream event that is not a message,
// seen on its way (Event.HTTP).
func (o *Observer) HTTP(e HTTPEvent, t time.Time) {
	o.hub.emit(Event{Time: t, Kind: EvHTTP, HTTP: &e})
}

func (o *Observer) frame(dir Direction, raw []byte, t time.Time, last bool, stream, eventID string) {
	msg, err := jsonrpc.Decode(raw)
	f := Frame{Dir: dir, Time: t, Raw: raw, Msg: msg, Err: err, Stream: stream, EventID: eventID}
	if last && err != nil {
		f.Err = &jsonrpc.DecodeError{Class: jsonrpc.ClassNotJSON, Reason: "incomplete line at the end of the stream (it stopped mid-message)"}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if f.Err != nil {
		o.badFrame(f, last)
		return
	}
	switch {
	case f.Msg.Kind == jsonrpc.KindRequest:
		o.request(f)
	case f.Msg.Kind == jsonrpc.KindNotification:
		o.notification(f)
	case f.Msg.Kind == jsonrpc.KindResponse:
		o.response(f)
	}
}

// TooLong reports a line over the observer's decoding cap (its bytes went
// on; Prefix holds the start).
func (o *Observer) TooLong(dir Direction, e *LineTooLongError, t time.Time) {
	f := Frame{Dir: dir, Time: t, Raw: e.Prefix, Err: e}
	from := "the server"
	if dir == Out {
		from = "the host"
	}
	o.emitFrame(f, VerdictTooLong, fmt.Sprintf("line from %s exceeds %d bytes (--max-line-bytes): forwarded whole, not decoded; the first %d bytes are shown", from, e.Limit, len(e.Prefix)))
}

func (o *Observer) emitFrame(f Frame, v Verdict, detail string) {
	o.hub.emit(Event{Time: f.Time, Kind: EvFrame, Frame: &FrameInfo{Frame: f, Verdict: v, Detail: detail}})
}

func (o *Observer) emitSentence(f Frame, v Verdict, rest string) {
	o.hub.emit(Event{Time: f.Time, Kind: EvFrame, Frame: &FrameInfo{Frame: f, Verdict: v, Detail: string(v) + " " + rest, VerdictInDetail: true}})
}

func (o *Observer) req(t time.Time, q *ReqInfo) { o.hub.emit(Event{Time: t, Kind: EvRequest, Req: q}) }

// sides returns the side whose requests a frame in dir makes (the
// requester's) and the side it answers.
func (o *Observer) sides(dir Direction) (own, answered *side) {
	if dir == Out {
		return &o.host, &o.server
	}
	return &o.server, &o.host
}

// badFrame: a line that is not a valid message. A response whose id can
// be read (one that breaks a rule, or one Decode could not read but whose
// top-level id scans) ends the request it answers with StateProtocol,
// unless it is the cut last line of a stream (the end of the stream is
// what ends the request, as for the client).
func (o *Observer) badFrame(f Frame, last bool) {
	var de *jsonrpc.DecodeError
	errors.As(f.Err, &de)
	v, reason := VerdictMalformed, f.Err.Error()
	if de != nil {
		reason = de.Reason
		if de.Class == jsonrpc.ClassInvalid {
			v = VerdictInvalid
		}
	}
	id := f.Msg.ID
	if !id.IsValid() && f.Msg.Kind == jsonrpc.KindInvalid {
		if sid, method := jsonrpc.ScanID(f.Raw); !method {
			id = sid
		}
	}
	_, answered := o.sides(f.Dir)
	if w := answered.pending[id]; !last && id.IsValid() && w != nil && (f.Msg.Kind == jsonrpc.KindResponse || f.Msg.Kind == jsonrpc.KindInvalid) {
		o.emitFrame(f, v, reason+"; ends "+idWord(id)+" with MCP_PROTOCOL")
		o.settle(reverse(f.Dir), answered, id, w, f.Time, StateProtocol,
			newErr(CodeProtocol, "%s %s: the response could not be read: %s", w.method, idWord(id), reason), true)
		return
	}
	if f.Dir == Out && de != nil && de.Class == jsonrpc.ClassNotJSON && len(f.Raw) > 0 && f.Raw[0] != '{' && f.Raw[0] != '[' {
		reason = "line from the host is not JSON" // the decoder's words are about a server's stdout
	}
	o.emitFrame(f, v, reason)
}

// request: a request from either side starts its life.
func (o *Observer) request(f Frame) {
	own, _ := o.sides(f.Dir)
	id := f.Msg.ID
	if own.pending[id] != nil {
		o.emitFrame(f, VerdictInvalid, idWord(id)+" is reused while a request with that id is still in flight")
		return
	}
	var p struct {
		Name string `json:"name"`
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(f.Msg.Params, &p)
	w := &watched{method: f.Msg.Method, at: f.Time}
	if f.Msg.Method == mcp.MethodToolsCall {
		w.tool = p.Name
	}
	own.pending[id] = w
	if f.Dir == Out {
		if tok := bytes.TrimSpace(p.Meta.ProgressToken); len(tok) > 0 && string(tok) != "null" {
			w.token = string(tok)
			o.tokens[w.token] = id
		}
		o.req(f.Time, &ReqInfo{Dir: Out, ID: id, Method: w.method, Tool: w.tool, State: StateQueued})
		o.emitFrame(f, VerdictSent, f.Msg.Method)
		o.req(f.Time, &ReqInfo{Dir: Out, ID: id, Method: w.method, Tool: w.tool, State: StateSent})
		return
	}
	o.emitFrame(f, VerdictServerRequest, f.Msg.Method)
	o.req(f.Time, &ReqInfo{Dir: In, ID: id, Method: w.method, State: StateReceived, Params: f.Msg.Params})
}

// notification: progress for a host's request, a cancellation by either
// side, or anything else.
func (o *Observer) notification(f Frame) {
	switch {
	case f.Msg.Method == mcp.MethodCancelled:
		var cp struct {
			RequestID jsonrpc.ID `json:"requestId"`
			Reason    string     `json:"reason"`
		}
		if json.Unmarshal(f.Msg.Params, &cp) == nil {
			own, _ := o.sides(f.Dir)
			if w := own.pending[cp.RequestID]; w != nil {
				who := "the host"
				if f.Dir == In {
					who = "the server"
				}
				detail := "cancels " + idWord(cp.RequestID)
				if cp.Reason != "" {
					detail += ": " + bounded(cp.Reason, 80)
				}
				o.emitFrame(f, plainVerdict(f.Dir), detail)
				o.settle(f.Dir, own, cp.RequestID, w, f.Time, StateCancelled,
					newErr(CodeAborted, "%s %s: cancelled by %s", w.method, idWord(cp.RequestID), who), false)
				return
			}
		}
	case f.Msg.Method == mcp.MethodProgress && f.Dir == In:
		var pp mcp.ProgressParams
		if err := json.Unmarshal(f.Msg.Params, &pp); err != nil {
			o.emitFrame(f, VerdictInvalid, "progress notification with invalid params: "+err.Error())
			return
		}
		id, ok := o.tokens[string(bytes.TrimSpace(pp.ProgressToken))]
		w := o.host.pending[id]
		if !ok || w == nil {
			o.emitFrame(f, VerdictNotification, "progress for token "+string(pp.ProgressToken)+", which matches no request in flight")
			return
		}
		o.emitSentence(f, VerdictProgress, fmt.Sprintf("%s for %s", progressText(pp), idWord(id)))
		o.req(f.Time, &ReqInfo{Dir: Out, ID: id, Method: w.method, Tool: w.tool, State: StateProgress, Latency: f.Time.Sub(w.at),
			Progress: &Progress{Progress: pp.Progress, Total: pp.Total, Message: pp.Message}})
		return
	}
	o.emitFrame(f, plainVerdict(f.Dir), f.Msg.Method)
}

// plain is the verdict of a frame in dir that touches no request: sent for
// the host's, notification for the server's.
func plainVerdict(d Direction) Verdict {
	if d == Out {
		return VerdictSent
	}
	return VerdictNotification
}

// reverse is the other direction.
func reverse(d Direction) Direction {
	if d == Out {
		return In
	}
	return Out
}

// response: an answer to the other side's request.
func (o *Observer) response(f Frame) {
	_, answered := o.sides(f.Dir)
	reqDir := reverse(f.Dir)
	id := f.Msg.ID
	asked, answerer := "the host", "server"
	if f.Dir == Out {
		asked, answerer = "the server", "host"
	}
	if w := answered.pending[id]; w != nil {
		lat := f.Time.Sub(w.at)
		switch {
		case f.Dir == Out:
			// The host answered a request of the server's.
			o.emitFrame(f, VerdictSent, "answers "+idWord(id))
			o.settle(reqDir, answered, id, w, f.Time, StateAnswered, nil, true)
		case f.Msg.Error != nil:
			o.emitSentence(f, VerdictRemoteError, fmt.Sprintf("for %s after %s", idWord(id), roundDur(lat)))
			o.settle(reqDir, answered, id, w, f.Time, StateError, remoteErr(f.Msg.Error), true)
		default:
			o.emitSentence(f, VerdictResolved, fmt.Sprintf("%s after %s", idWord(id), roundDur(lat)))
			o.settle(reqDir, answered, id, w, f.Time, StateResolved, nil, true)
		}
		return
	}
	if ri, ok := answered.retired[id]; ok {
		ago := roundDur(f.Time.Sub(ri.at))
		if ri.answered {
			o.emitFrame(f, VerdictDuplicate, fmt.Sprintf("second response for %s (already %s %s ago); ignored by a correct %s", idWord(id), ri.state, ago, otherOf(answerer)))
			return
		}
		ri.answered = true
		answered.retired[id] = ri
		o.emitFrame(f, VerdictLate, fmt.Sprintf("response for %s arrived %s after it ended (%s)", idWord(id), ago, ri.state))
		return
	}
	detail := idWord(id) + " was never sent by " + asked
	if s, ok := id.Str(); ok && f.Dir == In {
		if k, err := strconv.ParseInt(s, 10, 64); err == nil && o.hostUsed(jsonrpc.Int(k)) {
			detail = fmt.Sprintf("id %s is a string; the host sent the integer %d (ids keep their JSON type)", id, k)
		}
	} else if !id.IsValid() && f.Msg.Error != nil {
		detail = "error response without an id: " + f.Msg.Error.Error()
	}
	o.emitFrame(f, VerdictUnknown, detail)
}

// hostUsed reports whether id is one of the host's requests in flight or
// recently ended (what the observer remembers: its memory stays bounded
// whatever the session's length).
func (o *Observer) hostUsed(id jsonrpc.ID) bool {
	_, retired := o.host.retired[id]
	return retired || o.host.pending[id] != nil
}

func otherOf(answerer string) string {
	if answerer == "server" {
		return "host"
	}
	return "server"
}

// settle ends request id of side s (whose requests go in dir) with state.
func (o *Observer) settle(dir Direction, s *side, id jsonrpc.ID, w *watched, t time.Time, state State, err error, answered bool) {
	s.retire(id, obsRetired{state: state, at: t, answered: answered})
	if w.token != "" {
		delete(o.tokens, w.token)
	}
	o.req(t, &ReqInfo{Dir: dir, ID: id, Method: w.method, Tool: w.tool, State: state, Latency: t.Sub(w.at), Err: err})
}

// idWord names an id as frames do: id 3, id "3".
func idWord(id jsonrpc.ID) string {
	if !id.IsValid() {
		return "id null"
	}
	return "id " + id.String()
}
