package lint

import (
	"encoding/json"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// doneTokens bounds the progress tokens of answered requests a Linter
// remembers (for progress-after-response).
const doneTokens = 4096

// maxTasks bounds the task statuses a Linter remembers (for
// task-terminal-changed).
const maxTasks = 4096

// Finding is one violation and the event that shows it.
type Finding struct {
	Rule string
	// Seq and Time are those of the event (a frame, or an HTTP exchange).
	Seq  uint64
	Time time.Time
	Dir  client.Direction
	// ID and Method are the message's (for an HTTP exchange, the request it
	// carried and the HTTP method).
	ID     jsonrpc.ID
	Method string
	// Raw is the frame's bytes (an HTTP header line for an exchange); it is
	// the event's own slice: read-only.
	Raw []byte
	// Detail says what was seen, in words.
	Detail string
}

// pend is a request in flight, from the point of view of the wire.
type pend struct {
	method string
	seq    uint64
	token  jsonrpc.ID // its progress token, if any
	// modern: the request (one of sonde's) carried a 2026-07-28 or later
	// protocol version in its _meta; version is that version.
	modern  bool
	version string
	// target is a tools/call's or prompts/get's name, a resources/read's
	// uri ("" for other methods).
	target string
	// state is the requestState a modern request carried (nil for none).
	state json.RawMessage
	// exts are the extensions a modern request's client capabilities
	// declared.
	exts []string
	// cacheKey names a modern list or read request's result (cacherules.go;
	// "" for other requests).
	cacheKey string
}

// side indexes the requester: 0 for sonde's requests (out), 1 for the
// server's (in).
type side uint8

func sideOf(requester client.Direction) side {
	if requester == client.In {
		return 1
	}
	return 0
}

// Linter follows one client's event stream. Use New; it is not safe for
// concurrent use.
type Linter struct {
	seen    bool   // an event was checked since New or a session start
	started bool   // the stream began at the session's start, with no gap since
	lastSeq uint64 // of the last event checked
	modern  bool   // a modern-era session (no initialize)

	initID      jsonrpc.ID
	initDone    bool // the initialize result arrived
	initialized bool // notifications/initialized was sent
	version     string

	pending [2]map[jsonrpc.ID]pend
	tokens  [2]map[jsonrpc.ID]jsonrpc.ID // progress token -> request id
	done    [2]recent                    // tokens of answered requests
	// tasks is the last status the server reported for each of its tasks
	// (at most maxTasks: beyond, it starts over and the rule is silent for
	// the tasks it forgot).
	tasks map[string]string
	// held are the ids of frames a breakpoint held (sonde tap --break):
	// a response late because of the hold is not the server's (at most
	// maxHeld; beyond, it starts over).
	held map[jsonrpc.ID]bool
	// schemas are the tools' output schemas, by tool name (toolrules.go).
	schemas map[string]*outSchema
	// mrtr is the requestState each open MRTR chain must carry next
	// (mrtr.go); serverExts the extensions server/discover advertised (nil
	// until one was seen).
	mrtr       map[string]mrtrRound
	serverExts []string
	// fresh are the list and read results whose ttlMs has not run out, by
	// cache key (cacherules.go).
	fresh map[string]freshResult
	// appVis is the _meta.ui.visibility of the tools that set one;
	// clientUI whether the client's initialize (initSeen) declared the MCP
	// Apps extension (appsrules.go).
	appVis             map[string][]string
	clientUI, initSeen bool

	out []Finding
}

// maxHeld bounds the held ids a Linter remembers.
const maxHeld = 4096

// New returns a Linter at the start of a stream.
func New() *Linter {
	l := &Linter{}
	l.reset(false)
	l.seen = false // the first event says whether the stream starts the session
	return l
}

func (l *Linter) reset(started bool) {
	pending, tokens, done, out, tasks, held := l.pending, l.tokens, l.done, l.out[:0], l.tasks, l.held
	*l = Linter{seen: true, started: started, out: out, tasks: tasks, held: held,
		schemas: map[string]*outSchema{}, mrtr: map[string]mrtrRound{}, fresh: map[string]freshResult{}, appVis: map[string][]string{}}
	if l.tasks == nil {
		l.tasks = map[string]string{}
	}
	clear(l.tasks)
	if l.held == nil {
		l.held = map[jsonrpc.ID]bool{}
	}
	clear(l.held)
	for i := range pending { // the maps are kept, emptied: a restart costs no allocation
		if pending[i] == nil {
			pending[i], tokens[i] = map[jsonrpc.ID]pend{}, map[jsonrpc.ID]jsonrpc.ID{}
			done[i].init(doneTokens)
		}
		clear(pending[i])
		clear(tokens[i])
		done[i].reset()
	}
	l.pending, l.tokens, l.done = pending, tokens, done
}

// Check folds one event into the linter and returns the findings it shows
// (nil for none). The slice is reused by the next call: copy what you keep.
// A process start (or HTTP connect) begins a new session; so does the first
// event of a stream when its Seq is 1.
func (l *Linter) Check(ev client.Event) []Finding {
	l.out = l.out[:0]
	switch {
	case !l.seen:
		l.reset(ev.Seq == 1)
	case ev.Seq != 0 && l.lastSeq != 0 && ev.Seq != l.lastSeq+1:
		l.gap()
	}
	l.lastSeq = ev.Seq
	switch ev.Kind {
	case client.EvProcess:
		if ev.StartsSession() {
			l.reset(true)
		}
	case client.EvRequest:
		if q := ev.Req; q != nil && q.Dir == client.Out && q.State.Final() {
			l.forget(q.ID) // the client gave up on it (timeout, cancel, exit…)
		}
	case client.EvNote:
		if h := ev.Hold; h != nil && h.ID.IsValid() {
			if len(l.held) >= maxHeld {
				clear(l.held)
			}
			l.held[h.ID] = true
		}
	case client.EvHTTP:
		if ev.HTTP != nil {
			l.checkHTTP(ev)
		}
	case client.EvFrame:
		if ev.Frame != nil {
			l.checkFrame(ev)
		}
	}
	if len(l.out) == 0 {
		return nil
	}
	return l.out
}

func (l *Linter) add(ev client.Event, rule, detail string) {
	f := Finding{Rule: rule, Seq: ev.Seq, Time: ev.Time, Detail: detail}
	if fr := ev.Frame; fr != nil {
		f.Dir, f.ID, f.Method, f.Raw = fr.Dir, fr.Msg.ID, fr.Msg.Method, fr.Raw
		if !fr.Time.IsZero() {
			f.Time = fr.Time
		}
	}
	l.out = append(l.out, f)
}

// checkFrame runs every frame rule against the state before the frame,
// then updates the state.
func (l *Linter) checkFrame(ev client.Event) {
	f := ev.Frame
	m := &f.Msg
	if f.Err != nil {
		l.malformed(ev)
	}
	l.verdicts(ev)
	if f.Err == nil && m.Kind == jsonrpc.KindRequest {
		l.notificationWithID(ev)
		l.idReused(ev)
		l.beforeInitialize(ev)
		l.callBeforeInitialized(ev)
	}
	if f.Err == nil && m.Kind == jsonrpc.KindNotification && m.Method == mcp.MethodProgress {
		l.progressAfterResponse(ev)
	}
	if f.Err == nil && f.Dir == client.In {
		l.taskTerminal(ev)
		l.cacheHint(ev)
		l.listItemType(ev)
		l.toolResult(ev)
		l.resultType(ev)
		l.serverExtensions(ev)
		l.cacheChanged(ev)
		l.appTools(ev)
		if m.Kind == jsonrpc.KindNotification {
			l.cacheNotified(ev)
		}
	}
	if f.Err == nil && f.Dir == client.Out && m.Kind == jsonrpc.KindRequest {
		l.clientExtensions(ev)
		l.requestState(ev)
		l.cacheRefetch(ev)
		l.appCall(ev)
	}
	l.versionInFrame(ev)
	l.track(ev.Seq, f)
}

// track updates the handshake, pending requests and progress tokens.
func (l *Linter) track(seq uint64, f *client.FrameInfo) {
	m := &f.Msg
	switch m.Kind {
	case jsonrpc.KindRequest:
		s := sideOf(f.Dir)
		p := pend{method: m.Method, seq: seq}
		if tok, ok := progressToken(m.Params); ok {
			p.token = tok
			l.tokens[s][tok] = m.ID
		}
		if f.Dir == client.Out {
			p.modern = modernRequest(f)
			if p.modern {
				params := requestParams(f)
				p.target, p.state, p.exts = target(m.Method, params), requestStateOf(params), clientExts(params)
				p.version, _ = metaVersion(params)
				if cached(m.Method) {
					p.cacheKey = cacheKey(m.Method, params)
				}
			} else if m.Method == mcp.MethodToolsCall {
				p.target = target(m.Method, requestParams(f))
			}
		}
		l.pending[s][m.ID] = p
		switch {
		case f.Dir == client.Out && m.Method == mcp.MethodInitialize:
			l.initID = m.ID
		case f.Dir == client.Out && isModern(m):
			l.modern = true
		}
	case jsonrpc.KindNotification:
		if f.Dir == client.Out && m.Method == mcp.MethodInitialized {
			l.initialized = true
		}
	case jsonrpc.KindResponse:
		if !m.ID.IsValid() {
			return
		}
		requester := client.Out
		if f.Dir == client.Out {
			requester = client.In
		}
		s := sideOf(requester)
		p, ok := l.pending[s][m.ID]
		if !ok {
			return
		}
		delete(l.pending[s], m.ID)
		if p.token.IsValid() {
			delete(l.tokens[s], p.token)
			l.done[s].add(p.token)
		}
		if requester == client.Out && p.method == mcp.MethodInitialize && m.ID == l.initID {
			if v, ok := resultVersion(m.Result); ok && m.Error == nil {
				l.initDone, l.version = true, v
			}
		}
	}
}

// gap forgets what missed events may have changed (a subscriber that fell
// behind, a capture with a missed record, another client's events): the
// pending ids and progress tokens, and the handshake's state. Rules that
// need them stay silent until the next session, rather than guess.
func (l *Linter) gap() {
	for i := range l.pending {
		clear(l.pending[i])
		clear(l.tokens[i])
		l.done[i].reset()
	}
	l.started = false
}

// forget drops a request of sonde's that ended without a response.
func (l *Linter) forget(id jsonrpc.ID) {
	p, ok := l.pending[0][id]
	if !ok {
		return
	}
	delete(l.pending[0], id)
	if p.token.IsValid() {
		delete(l.tokens[0], p.token)
	}
}

// recent is a bounded set: the oldest key goes when it is full.
type recent struct {
	set  map[jsonrpc.ID]struct{}
	ring []jsonrpc.ID // grows to max, then wraps
	max  int
	next int
}

func (r *recent) init(n int) {
	*r = recent{set: map[jsonrpc.ID]struct{}{}, max: n}
}

func (r *recent) reset() {
	clear(r.set)
	r.ring, r.next = r.ring[:0], 0
}

func (r *recent) add(id jsonrpc.ID) {
	if _, ok := r.set[id]; ok {
		return
	}
	if len(r.ring) < r.max {
		r.ring = append(r.ring, id)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % len(r.ring)
	}
	r.set[id] = struct{}{}
}

func (r *recent) has(id jsonrpc.ID) bool {
	_, ok := r.set[id]
	return ok
}
