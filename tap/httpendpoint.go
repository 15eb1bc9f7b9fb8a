package tap

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// maxEndpointHold bounds what the endpoint rewriter holds back while it
// waits for the end of an event; past it, the stream passes unchanged.
const maxEndpointHold = 64 << 10

// endpointRewriter passes an SSE stream through, rewriting the data of
// its first dispatched event when that is an `endpoint` event (the legacy
// transport sends it first) whose URL reaches the target, however it is
// spelled (resolveEndpoint): the proxy's origin takes its place (path and
// query kept). The first event is
// held until its blank line (the host dispatches an event only then, so
// nothing reaches it later than it would have); after it, or past
// maxEndpointHold, bytes pass as they are read.
type endpointRewriter struct {
	rc     io.ReadCloser
	p      *Proxy
	ex     *exchange
	target *url.URL
	done   bool   // the endpoint event went by: pass everything
	begun  bool   // an event went by: held does not begin the stream
	held   []byte // the current event, not yet passed
	out    []byte // rewritten bytes ready for the reader
	eof    error
}

func (e *endpointRewriter) Read(buf []byte) (int, error) {
	for {
		if len(e.out) > 0 {
			n := copy(buf, e.out)
			e.out = e.out[n:]
			return n, nil
		}
		if e.eof != nil {
			return 0, e.eof
		}
		if e.done {
			return e.rc.Read(buf)
		}
		n, err := e.rc.Read(buf)
		if n > 0 {
			e.held = append(e.held, buf[:n]...)
			e.scan()
		}
		if err != nil {
			e.out = append(e.out, e.held...)
			e.held = nil
			e.eof = err
		}
	}
}

// scan moves every complete event of held to out, rewriting the endpoint
// event.
func (e *endpointRewriter) scan() {
	for !e.done {
		next := transport.SSEEventEnd(e.held)
		if next < 0 {
			if len(e.held) > maxEndpointHold {
				e.out = append(e.out, e.held...)
				e.held = nil
				e.done = true
			}
			return
		}
		rewritten, dispatched := e.rewriteEndpoint(e.held[:next])
		e.out = append(e.out, rewritten...)
		e.held, e.begun = e.held[next:], true
		// The legacy transport's endpoint event comes first: after
		// the first event the host dispatches, whatever it was, the
		// stream passes as read (what it does not dispatch, a comment,
		// passes at once).
		e.done = dispatched
	}
	e.out = append(e.out, e.held...)
	e.held = nil
}

// rewriteEndpoint returns ev, rewritten when it is an endpoint event
// whose URL, read as the host reads it (resolveEndpoint, against the
// tap's URL the host opened the stream with), reaches the server: its
// data lines become one, the same URL on the proxy's origin
// (transport.ReplaceSSEData: its other lines are kept as they are). An endpoint
// the tap cannot read, or that names a third origin, is left as it is,
// with a note (the host's POSTs would not go through the tap).
// dispatched is false for a block the host does not dispatch (comments,
// an id or retry alone: no data line), after which the endpoint event
// may still come.
func (e *endpointRewriter) rewriteEndpoint(ev []byte) (out []byte, dispatched bool) {
	parsed, ok := transport.ParseSSEEvent(ev, !e.begun)
	if !ok || !parsed.HasData {
		return ev, false
	}
	if parsed.Event != "endpoint" {
		return ev, true
	}
	data := parsed.Data
	base, err := url.Parse(e.ex.origin + e.ex.uri)
	if err != nil || base.Host == "" {
		return ev, true
	}
	note := func(format string, args ...any) {
		e.p.offer(hchunk{ex: e.ex, kind: hkNote, t: time.Now(), note: fmt.Sprintf(format, args...)}, nil)
	}
	shown := strconv.Quote(cut(string(data), 200))
	u, err := resolveEndpoint(string(data), base)
	switch {
	case err != nil:
		note("sonde tap: the endpoint event's data %s is not a URL the tap can read: it is not rewritten; if it names the server, the host's POSTs go around the tap and are not recorded", shown)
		return ev, true
	case sameServer(u, base):
		e.p.learnEndpoint(e.ex, u) // the tap's own origin (a relative endpoint): nothing to do
		return ev, true
	case !sameServer(u, e.target):
		note("sonde tap: the endpoint event names another origin (%s) than the server's: it cannot be rewritten, and the host's POSTs will not go through the tap", RedactURL(u))
		return ev, true
	}
	w := *u
	w.Scheme, w.Host = base.Scheme, base.Host
	e.p.learnEndpoint(e.ex, &w)
	out = transport.ReplaceSSEData(ev, !e.begun, []byte(w.String()))
	note("sonde tap: endpoint event rewritten from %s to %s, so the host's POSTs come through the tap", shown, RedactURL(&w))
	return out, true
}

// LegacySession starts the key ProxyOptions.Sessions gets for a session
// of the legacy HTTP+SSE transport, which has no Mcp-Session-Id: the rest
// is the request URI of its endpoint ("/message?sessionId=…"), which the
// host's POSTs carry and the session's GET stream named.
const LegacySession = "legacy "

// learnEndpoint records that the endpoint event of ex's stream named u
// (on the target's origin): the POSTs to it, and the stream, belong to
// one session.
func (p *Proxy) learnEndpoint(ex *exchange, u *url.URL) {
	uri := u.RequestURI()
	key := LegacySession + uri
	p.legacyMu.Lock()
	if p.legacy == nil {
		p.legacy = map[string]string{}
	}
	if len(p.legacy) >= maxLegacySessions {
		for k := range p.legacy {
			delete(p.legacy, k)
			break
		}
	}
	p.legacy[uri] = key
	p.legacyMu.Unlock()
	ex.legacyKey.Store(&key)
}

// maxLegacySessions bounds the legacy endpoints remembered (the oldest
// one goes, in no order: a host seldom holds more than a few).
const maxLegacySessions = 1024

// legacySession is the key of the legacy session whose endpoint is uri
// ("" for none).
func (p *Proxy) legacySession(uri string) string {
	p.legacyMu.Lock()
	defer p.legacyMu.Unlock()
	return p.legacy[uri]
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{Opaque: "(unparsable)"}
	}
	return u
}

func (e *endpointRewriter) Close() error { return e.rc.Close() }
