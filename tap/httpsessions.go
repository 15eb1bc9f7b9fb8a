package tap

import (
	"net/http"

	"github.com/sonde-mcp/sonde/client"
)

// sessionRouter picks the observer of each chunk (ProxyOptions.Sessions)
// and hands the chunk on to handle, which observes with *cur.
type sessionRouter struct {
	p         *Proxy
	def       *client.Observer
	cur       **client.Observer
	handle    func(hchunk)
	observers map[string]*client.Observer // by session id
	waiting   map[*exchange]bool          // exchanges with held chunks
}

func (p *Proxy) router(def *client.Observer, cur **client.Observer, handle func(hchunk)) *sessionRouter {
	return &sessionRouter{p: p, def: def, cur: cur, handle: handle, observers: map[string]*client.Observer{}, waiting: map[*exchange]bool{}}
}

// observer is session id's observer, first seen in ex.
func (r *sessionRouter) observer(id string, ex *exchange) *client.Observer {
	if id == "" {
		return r.def
	}
	o, ok := r.observers[id]
	if !ok {
		if o = r.p.opts.Sessions(id, ex.start); o == nil {
			o = r.def
		}
		r.observers[id] = o
	}
	return o
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
			r.ended(ex.session)
			return
		}
	case ex.endpointStream && ex.obsKnown:
		*r.cur = r.observer(ex.obsSession, ex)
		if c.kind == hkResp && c.end && ex.obsSession != "" {
			// The legacy session's stream ended: the host went away (or
			// the server ended it), and with it the session.
			r.handle(c)
			r.ended(ex.obsSession)
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

// ended closes session id's observer: what of it still comes (the end of
// the DELETE's answer, a stream the server closes) goes to the observer
// of what belongs to no session.
func (r *sessionRouter) ended(id string) {
	r.p.hosts.forget(id)
	if o := r.observers[id]; o != nil && o != r.def && r.p.opts.SessionEnded != nil {
		r.observers[id] = r.def
		r.p.opts.SessionEnded(id)
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
