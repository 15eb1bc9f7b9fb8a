package tap

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// maxEndpointHold bounds what the endpoint rewriter holds back while it
// waits for the end of an event; past it, the stream passes unchanged.
const maxEndpointHold = 64 << 10

// endpointRewriter passes an SSE stream through, rewriting the data of
// its first event when that is an `endpoint` event (the legacy transport
// sends it first) whose URL is absolute on the target's origin: the
// proxy's origin takes its place (path and query kept). The first event is
// held until its blank line (the host dispatches an event only then, so
// nothing reaches it later than it would have); after it, or past
// maxEndpointHold, bytes pass as they are read.
type endpointRewriter struct {
	rc     io.ReadCloser
	p      *Proxy
	ex     *exchange
	target *url.URL
	done   bool   // the endpoint event went by: pass everything
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
		next := eventEnd(e.held)
		if next < 0 {
			if len(e.held) > maxEndpointHold {
				e.out = append(e.out, e.held...)
				e.held = nil
				e.done = true
			}
			return
		}
		ev := e.held[:next]
		if rewritten, ok := e.rewriteEndpoint(ev); ok {
			e.out = append(e.out, rewritten...)
		} else {
			e.out = append(e.out, ev...)
		}
		e.held = e.held[next:]
		// The legacy transport's endpoint event comes first: after
		// the first event, whatever it was, the stream passes as read.
		e.done = true
	}
	e.out = append(e.out, e.held...)
	e.held = nil
}

// eventEnd returns the index just after the blank line that ends the
// first event of b, or -1 when b holds no whole event yet.
func eventEnd(b []byte) int {
	start := 0 // where the current line starts
	for i := 0; i < len(b); i++ {
		if b[i] != '\n' && b[i] != '\r' {
			continue
		}
		j := i + 1
		if b[i] == '\r' {
			if j == len(b) {
				return -1 // a "\n" may follow
			}
			if b[j] == '\n' {
				j++
			}
		}
		if i == start {
			return j
		}
		start = j
		i = j - 1
	}
	return -1
}

// rewriteEndpoint returns ev with the data of an endpoint event naming the
// target's origin rewritten to the proxy's; ok is false when ev is not
// an endpoint event. Only the data line changes.
func (e *endpointRewriter) rewriteEndpoint(ev []byte) ([]byte, bool) {
	lines := splitKeep(ev)
	isEndpoint, dataAt := false, -1
	for i, l := range lines {
		body := bytes.TrimRight(l, "\r\n")
		switch {
		case bytes.Equal(body, []byte("event: endpoint")), bytes.Equal(body, []byte("event:endpoint")):
			isEndpoint = true
		case bytes.HasPrefix(body, []byte("data:")) && dataAt < 0:
			dataAt = i
		}
	}
	if !isEndpoint {
		return nil, false
	}
	if dataAt < 0 {
		return ev, true
	}
	l := lines[dataAt]
	body := bytes.TrimRight(l, "\r\n")
	term := l[len(body):]
	data := strings.TrimPrefix(string(body[len("data:"):]), " ")
	u, err := url.Parse(data)
	if err == nil && (!u.IsAbs() || strings.EqualFold(u.Host, e.target.Host)) {
		e.p.learnEndpoint(e.ex, e.target.ResolveReference(u))
	}
	if err != nil || !u.IsAbs() || !strings.EqualFold(u.Scheme, e.target.Scheme) || !strings.EqualFold(u.Host, e.target.Host) {
		if err == nil && u.IsAbs() {
			e.p.offer(hchunk{ex: e.ex, kind: hkNote, t: time.Now(), note: fmt.Sprintf("sonde tap: the endpoint event names another origin (%s): the host's POSTs will not go through the tap", RedactURL(u))}, nil)
		}
		return ev, true
	}
	proxy, err := url.Parse(e.ex.origin)
	if err != nil {
		return ev, true
	}
	u.Scheme, u.Host = proxy.Scheme, proxy.Host
	prefix := body[:len("data:")]
	if len(body) > len("data:") && body[len("data:")] == ' ' {
		prefix = body[:len("data: ")]
	}
	var out []byte
	for i, l := range lines {
		if i == dataAt {
			out = append(out, prefix...)
			out = append(out, u.String()...)
			out = append(out, term...)
			continue
		}
		out = append(out, l...)
	}
	e.p.offer(hchunk{ex: e.ex, kind: hkNote, t: time.Now(), note: fmt.Sprintf("sonde tap: endpoint event rewritten from %s to %s, so the host's POSTs come through the tap", RedactURL(mustParse(data)), RedactURL(u))}, nil)
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

// splitKeep splits b into lines, each with its terminator ("\r\n", "\n"
// or "\r").
func splitKeep(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			out = append(out, b[start:i+1])
			start = i + 1
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			out = append(out, b[start:i+1])
			start = i + 1
		}
	}
	if start < len(b) {
		out = append(out, b[start:])
	}
	return out
}

func (e *endpointRewriter) Close() error { return e.rc.Close() }
