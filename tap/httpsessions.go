package tap

import (
	"container/list"
	"net/http"
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// SessionEnd says why a session's observer gets nothing more
// (ProxyOptions.SessionEnded).
type SessionEnd int

const (
	// EndDeleted: the host's DELETE of the session was answered 2xx.
	EndDeleted SessionEnd = iota
	// EndStream: a legacy session's SSE stream ended.
	EndStream
	// EndIdle: nothing of the session went by for SessionIdle, and no
	// request of it was in flight.
	EndIdle
	// EndEvicted: MaxSessions were observed, and a new one came; this
	// one was idle the longest.
	EndEvicted
)

func (e SessionEnd) String() string {
	switch e {
	case EndDeleted:
		return "deleted"
	case EndStream:
		return "stream-ended"
	case EndIdle:
		return "idle"
	case EndEvicted:
		return "evicted"
	}
	return "SessionEnd(" + strconv.Itoa(int(e)) + ")"
}

// DefaultMaxSessions is how many sessions an HTTP tap observes at once
// (ProxyOptions.MaxSessions) unless told otherwise.
const DefaultMaxSessions = 1024

// maxEndedSessions bounds the sessions the host ended that the router
// remembers (what of them still comes goes to Observer); past it the
// oldest is forgotten, and what of it still comes is observed anew.
const maxEndedSessions = 1024

// sessionRouter picks the observer of each chunk (ProxyOptions.Sessions)
// and hands the chunk on to handle, which observes with *cur. It keeps
// at most MaxSessions sessions, the most recently active first, and
// closes those idle past SessionIdle.
type sessionRouter struct {
	p       *Proxy
	def     *client.Observer
	cur     **client.Observer
	handle  func(hchunk)
	live    map[string]*list.Element // of *routedSession, by session id
	lru     list.List                // most recently active at the front
	max     int
	idle    time.Duration // 0: never
	every   time.Duration // how often idle sessions are looked for
	swept   time.Time
	now     time.Time // of the chunk being routed
	ended   map[string]bool
	endedQ  []string           // the keys of ended, oldest first
	waiting map[*exchange]bool // exchanges with held chunks
}

// routedSession is a session the router observes.
type routedSession struct {
	id   string
	obs  *client.Observer // def when it has no observer of its own
	last time.Time        // when something of it last went by
}

func (p *Proxy) router(def *client.Observer, cur **client.Observer, handle func(hchunk)) *sessionRouter {
	r := &sessionRouter{p: p, def: def, cur: cur, handle: handle, live: map[string]*list.Element{}, max: p.opts.MaxSessions,
		idle: p.opts.SessionIdle, ended: map[string]bool{}, waiting: map[*exchange]bool{}}
	if r.max <= 0 {
		r.max = DefaultMaxSessions
	}
	if r.idle > 0 {
		r.every = min(max(r.idle/4, 10*time.Millisecond), 30*time.Second)
	}
	return r
}

// observer is session id's observer, first seen in ex: a session not
// observed yet (or closed idle or evicted since) gets a new one, and
// when MaxSessions are observed, the one idle the longest is closed
// first.
func (r *sessionRouter) observer(id string, ex *exchange) *client.Observer {
	if id == "" {
		return r.def
	}
	if e := r.live[id]; e != nil {
		s := e.Value.(*routedSession)
		s.last = r.now
		r.lru.MoveToFront(e)
		return s.obs
	}
	if r.ended[id] {
		return r.def
	}
	for r.lru.Len() >= r.max {
		r.close(r.lru.Back(), EndEvicted)
	}
	o := r.p.opts.Sessions(id, ex.start)
	if o == nil {
		o = r.def
	}
	r.live[id] = r.lru.PushFront(&routedSession{id: id, obs: o, last: r.now})
	return o
}

// close stops observing session e (idle or evicted): what of it comes
// later is observed anew.
func (r *sessionRouter) close(e *list.Element, why SessionEnd) {
	s := e.Value.(*routedSession)
	r.lru.Remove(e)
	delete(r.live, s.id)
	if s.obs != r.def && r.p.opts.SessionEnded != nil {
		r.p.opts.SessionEnded(s.id, why)
	}
}

// sweep closes the sessions nothing went by in for SessionIdle, but for
// those with a request in flight.
func (r *sessionRouter) sweep(now time.Time) {
	r.swept = now
	for e := r.lru.Back(); e != nil; {
		s := e.Value.(*routedSession)
		if now.Sub(s.last) < r.idle {
			return // the others are more recent
		}
		prev := e.Prev()
		if s.obs == r.def || s.obs.InFlight() == 0 {
			r.close(e, EndIdle)
		}
		e = prev
	}
}

// next routes c, a chunk from the queue, after closing the idle sessions
// when it is time to look for them.
func (r *sessionRouter) next(c hchunk) {
	if r.p.opts.Sessions != nil {
		r.now = time.Now()
		if r.idle > 0 && r.now.Sub(r.swept) >= r.every {
			r.sweep(r.now)
		}
	}
	r.chunk(c)
}

// chunk observes c in its session. The request of an exchange the host
// sent without a session id waits (up to MaxMessageBytes of it, still
// counted in the queue's bytes) for its answer's headers, which may name
// the session it started.
func (r *sessionRouter) chunk(c hchunk) {
	if c.waited {
		// Off the count as it leaves the queue (held or not).
		r.p.ends.Add(-1)
		c.waited = false
	}
	ex := c.ex
	switch {
	case r.p.opts.Sessions == nil:
		*r.cur = r.def
	case ex.session != "":
		*r.cur = r.observer(ex.session, ex)
		if c.kind == hkHTTP && ex.method == http.MethodDelete && c.http != nil && c.http.Status/100 == 2 {
			// The host ended its session.
			r.handle(c)
			r.end(ex.session, EndDeleted)
			return
		}
	case ex.endpointStream && ex.obsKnown:
		*r.cur = r.observer(ex.obsSession, ex)
		if c.kind == hkResp && c.end && ex.obsSession != "" {
			// The legacy session's stream ended: the host went away (or
			// the server ended it), and with it the session.
			r.handle(c)
			r.end(ex.obsSession, EndStream)
			return
		}
	case c.kind == hkHTTP && ex.endpointStream && c.session == "":
		// A legacy SSE stream: its session is known once its endpoint
		// event went by; until then what comes of it waits.
		ex.legacyWait = true
		r.hold(ex, c)
		return
	case ex.legacyWait:
		if k := ex.legacyKey.Load(); k != nil {
			ex.legacyWait = false
			ex.obsSession, ex.obsKnown = *k, true
			r.release(ex)
			*r.cur = r.observer(*k, ex)
			break
		}
		if ex.heldBytes+len(c.data) <= r.p.opts.MaxMessageBytes && !c.end {
			r.hold(ex, c)
			return
		}
		// No endpoint event: the stream belongs to no session.
		ex.legacyWait, ex.obsKnown = false, true
		r.release(ex)
		*r.cur = r.def
	case c.kind == hkHTTP:
		ex.obsSession, ex.obsKnown = c.session, true
		*r.cur = r.observer(c.session, ex)
		r.handle(c)
		r.release(ex)
		return
	case ex.obsKnown:
		*r.cur = r.observer(ex.obsSession, ex)
	case c.kind == hkReq && ex.heldBytes+len(c.data) <= r.p.opts.MaxMessageBytes:
		r.hold(ex, c)
		return
	case c.kind == hkReq:
		// No answer yet, and the request is longer than a message
		// can be: what waits, and this, go to the observer of what
		// belongs to no session.
		ex.obsKnown = true
		r.release(ex)
		*r.cur = r.def
	default:
		// A note before the answer, or an answer whose headers were
		// not observed.
		*r.cur = r.def
	}
	r.handle(c)
}

// end closes session id's observer, which the host (or the server) ended:
// what of it still comes (the end of the DELETE's answer, a stream the
// server closes) goes to the observer of what belongs to no session.
func (r *sessionRouter) end(id string, why SessionEnd) {
	r.p.hosts.forget(id)
	if !r.ended[id] {
		if len(r.endedQ) >= maxEndedSessions {
			delete(r.ended, r.endedQ[0])
			r.endedQ = r.endedQ[1:]
		}
		r.ended[id] = true
		r.endedQ = append(r.endedQ, id)
	}
	if e := r.live[id]; e != nil {
		r.close(e, why)
	}
}

// hold keeps c until ex's session is known.
func (r *sessionRouter) hold(ex *exchange, c hchunk) {
	ex.held = append(ex.held, c)
	ex.heldBytes += len(c.data)
	r.waiting[ex] = true
}

// release observes what of ex waited for its session.
func (r *sessionRouter) release(ex *exchange) {
	held := ex.held
	ex.held, ex.heldBytes = nil, 0
	delete(r.waiting, ex)
	for _, c := range held {
		r.chunk(c)
	}
}

// releaseAll observes, with no session, what still waits for an answer
// when the proxy closes.
func (r *sessionRouter) releaseAll() {
	for ex := range r.waiting {
		ex.obsKnown = true
		r.release(ex)
	}
}
