package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/loopback"
	"github.com/sonde-mcp/sonde/transport"
)

// ProxyOptions configure an HTTP tap (NewProxy).
type ProxyOptions struct {
	// Target is the server's origin; every request goes to the same path
	// and query there (scheme and host are Target's, path and query the
	// host's).
	Target *url.URL
	// Observer receives what went by; nil observes nothing (requests are
	// still forwarded).
	Observer *client.Observer
	// MaxMessageBytes caps the bodies and SSE events observation decodes
	// (default transport.DefaultMaxLineBytes); a larger one is forwarded
	// whole and observed as too long.
	MaxMessageBytes int
	// Queue and QueueBytes bound how far observation may fall behind, in
	// chunks and in bytes (DefaultQueue, DefaultQueueBytes).
	Queue      int
	QueueBytes int64
	// LoopbackOnly refuses (403) a request whose Host header is not a
	// loopback address: a page in a browser that rebinds a name of its
	// own to 127.0.0.1 cannot reach the server through the tap (which
	// sends the server its own Host).
	LoopbackOnly bool
	// Transport sends the requests upstream; nil is a clone of
	// http.DefaultTransport that never compresses on its own (a body
	// reaches the host as the server sent it).
	Transport http.RoundTripper
	// Log receives the refusals of LoopbackOnly and the reverse proxy's
	// errors (a host that went away mid-answer), and the stderr text of
	// fault rules (nil: io.Discard).
	Log io.Writer
	// Sessions, when set, gives each HTTP session (each Mcp-Session-Id)
	// an observer of its own, so that two hosts' sessions through one
	// proxy do not mix their request ids: it is called from the observer
	// goroutine, once per session id, when the session is first seen,
	// with the start of the exchange it was seen in (no event of the
	// session is older); a nil result observes it with Observer. What belongs to no session
	// (a server that gives none, the legacy transport) goes to Observer.
	// The request that starts a session (sent without an id, answered
	// with one) is observed when its answer comes, in that session.
	Sessions func(id string, start time.Time) *client.Observer
	// SessionEnded, when set with Sessions, is called from the observer
	// goroutine once the host's DELETE of session id was answered 2xx
	// and observed: its observer gets nothing more (what of the session
	// still comes later goes to Observer).
	SessionEnded func(id string)
	// Faults, when set, are fault rules on the forwarding path (httpFaults):
	// what the host sent and what it received are observed, and each
	// change a rule made is noted.
	Faults *chaos.Engine
}

// HTTPStats is what an HTTP tap forwarded and what observation missed.
type HTTPStats struct {
	// Exchanges is the number of requests forwarded.
	Exchanges uint64
	// MissedChunks and MissedBytes were forwarded but not observed (body
	// chunks, and exchanges and notes dropped when the queue was full).
	MissedChunks uint64
	MissedBytes  int64
}

// Proxy is an HTTP tap: a reverse proxy in front of a Streamable HTTP or
// legacy HTTP+SSE server that forwards requests, responses and SSE
// streams unchanged and unbuffered (each read written on and flushed at
// once), and hands a copy of each body chunk to one observer goroutine
// through a bounded queue that never blocks forwarding. The one change it
// makes: the data of a legacy `endpoint` event that names the server's
// origin is rewritten to the proxy's, so the host's POSTs come back
// through it. Redirects are passed to the host as they are.
type Proxy struct {
	opts     ProxyOptions
	rp       *httputil.ReverseProxy
	queue    chan hchunk
	observed chan struct{}
	closed   chan struct{}
	once     sync.Once
	inflight atomic.Int64
	ends     atomic.Int64 // offerEnd's ends not yet in the queue
	lost     atomic.Int64 // chunks dropped that no later chunk reports (headers, notes)
	posts    atomic.Uint64
	gets     atomic.Uint64
	stats    HTTPStats
	statsMu  sync.Mutex
	faults   *httpFaults  // nil without fault rules
	hosts    hostSessions // for injected requests (httpinject.go)
	// legacy maps the request URI of each legacy endpoint (named by an
	// endpoint event) to its session's key (LegacySession).
	legacyMu sync.Mutex
	legacy   map[string]string
}

// exchange is one request the proxy forwards.
type exchange struct {
	n      uint64
	method string
	stream string // "POST 7", "GET 2", "DELETE"
	start  time.Time
	origin string // the proxy's origin as the host addressed it
	uri    string // the request's URI (path and query) as the host sent it
	reqHdr http.Header
	url    string // the upstream URL, redacted

	// session is the Mcp-Session-Id the host sent ("": none), or for a
	// POST to a legacy endpoint its session's key (LegacySession).
	session string
	// endpointStream: a GET answered with an SSE stream the proxy reads
	// for a legacy endpoint event (set before its headers are offered);
	// legacyKey, once that event went by, its session's key.
	endpointStream bool
	legacyKey      atomic.Pointer[string]
	legacyWait     bool // the observer's: holding the stream's chunks for its key
	// The observer goroutine's, with ProxyOptions.Sessions: the session
	// the answer named (known once its headers were observed), and what
	// of the exchange waits for it.
	obsSession string
	obsKnown   bool
	held       []hchunk
	heldBytes  int

	// With fault rules: the body the host sent (observed as it is, not as
	// the rules left it), and noise lines for the host's answer.
	hostBody     []byte
	hostObserved bool
	noise        [][]byte
}

type exKey struct{}

// chunk kinds of the HTTP tap.
const (
	hkReq  = iota // request body bytes (host → server)
	hkResp        // response body bytes (server → host)
	hkHTTP        // an exchange's headers (http set)
	hkNote        // a note
)

// hchunk is a copy of what went by, for the observer goroutine.
type hchunk struct {
	ex          *exchange
	kind        int
	data        []byte
	t           time.Time
	end         bool   // the body ended (data is empty)
	ctype       string // response: its media type
	enc         string // the body's Content-Encoding, when decodable
	session     string // hkHTTP: the Mcp-Session-Id of the answer
	http        *client.HTTPEvent
	note        string
	fault       *client.Fault // on a note of a fault rule
	waited      bool          // an end offerEnd's goroutine queued (counted in Proxy.ends)
	missed      uint64
	missedBytes int64
}

// NewProxy returns an HTTP tap; Close it after the server that serves it
// has stopped, to let observation finish.
func NewProxy(opts ProxyOptions) *Proxy {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = transport.DefaultMaxLineBytes
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		// A host with many calls in flight would otherwise open and
		// close an upstream connection for most of them (the default
		// keeps 2 idle).
		t.MaxIdleConnsPerHost = 256
		opts.Transport = t
	}
	p := &Proxy{opts: opts, queue: make(chan hchunk, opts.Queue), observed: make(chan struct{}), closed: make(chan struct{})}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      opts.Transport,
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       log.New(opts.Log, "sonde tap: ", 0),
	}
	if opts.Faults != nil {
		p.faults = newHTTPFaults(opts.Faults, p)
	}
	go func() {
		defer close(p.observed)
		p.observe()
	}()
	return p
}

// Close stops observation once what it was handed is observed, and
// returns what was forwarded and missed. Requests still in flight are
// still forwarded, but no longer observed.
func (p *Proxy) Close() HTTPStats {
	p.once.Do(func() { close(p.closed) })
	<-p.observed
	p.statsMu.Lock()
	defer p.statsMu.Unlock()
	return p.stats
}

// ServeHTTP forwards one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.opts.LoopbackOnly && !loopback.Host(r.Host) {
		fmt.Fprintf(p.opts.Log, "sonde tap: refused a request with Host %q: not loopback (DNS rebinding?); --allow-remote accepts it\n", r.Host)
		http.Error(w, "sonde tap: Host must be loopback", http.StatusForbidden)
		return
	}
	ex := &exchange{method: r.Method, start: time.Now(), origin: "http://" + r.Host, uri: r.URL.RequestURI(), reqHdr: r.Header.Clone(), session: r.Header.Get("Mcp-Session-Id")}
	if ex.session == "" && r.Method == http.MethodPost {
		ex.session = p.legacySession(ex.uri)
	}
	if !injected(r) {
		p.hosts.learn(r, ex.session)
	}
	p.statsMu.Lock()
	p.stats.Exchanges++
	ex.n = p.stats.Exchanges
	p.statsMu.Unlock()
	switch r.Method {
	case http.MethodPost:
		ex.stream = fmt.Sprintf("POST %d", p.posts.Add(1))
	case http.MethodGet:
		ex.stream = fmt.Sprintf("GET %d", p.gets.Add(1))
	default:
		ex.stream = r.Method
	}
	if p.faults != nil {
		u := *r.URL
		u.Scheme, u.Host = p.opts.Target.Scheme, p.opts.Target.Host
		ex.url = RedactURL(&u)
		if p.faults.request(w, r, ex) {
			return
		}
	}
	// The request body is sent upstream while the answer may already be
	// coming back (a server answers once it has parsed the body; the
	// transport reads on to the body's EOF after that): without full
	// duplex, the HTTP/1 server would close the body when the answer's
	// headers are written, the transport's last read of it would fail,
	// and the transport would drop the upstream connection mid-answer.
	if ex.hostBody == nil { // (a body the rules read whole is in memory)
		_ = http.NewResponseController(w).EnableFullDuplex()
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exKey{}, ex)))
}

// mediaType is the media type of a Content-Type value, in lower case
// ("" when there is none or it cannot be parsed).
func mediaType(v string) string {
	t, _, _ := mime.ParseMediaType(v)
	return t
}

func exchangeOf(r *http.Request) *exchange {
	ex, _ := r.Context().Value(exKey{}).(*exchange)
	return ex
}

// rewrite sends the request to the target: same path and query, the
// target's scheme and host (and Host header); headers and body as they
// came (the reverse proxy drops only the hop-by-hop headers).
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme = p.opts.Target.Scheme
	pr.Out.URL.Host = p.opts.Target.Host
	pr.Out.Host = ""
	ex := exchangeOf(pr.In)
	if ex == nil {
		return
	}
	ex.url = RedactURL(pr.Out.URL)
	ce := pr.In.Header.Get("Content-Encoding")
	if strings.EqualFold(ce, "identity") {
		ce = ""
	}
	if ce != "" && !decodable(ce) {
		return // forwarded, not decoded (the exchange's record has the header)
	}
	if ex.hostBody != nil {
		p.faults.observeHostBody(ex)
		return
	}
	if p.opts.Observer != nil && pr.Out.Body != nil && pr.Out.Body != http.NoBody {
		pr.Out.Body = &obsBody{rc: pr.Out.Body, p: p, ex: ex, kind: hkReq, enc: ce}
	}
}

// modifyResponse records the exchange, rewrites a legacy endpoint event
// naming the target, and observes the body.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	ex := exchangeOf(resp.Request)
	if ex == nil {
		return nil
	}
	if !injected(resp.Request) {
		p.hosts.learnAnswer(resp, ex)
	}
	now := time.Now()
	ctype := mediaType(resp.Header.Get("Content-Type"))
	sse := ctype == "text/event-stream"
	ce := resp.Header.Get("Content-Encoding")
	if strings.EqualFold(ce, "identity") {
		ce = ""
	}
	// A compressed stream is not rewritten (its bytes are not the
	// events').
	if sse && ex.method == http.MethodGet && ce == "" {
		ex.endpointStream = ex.session == "" && resp.Header.Get("Mcp-Session-Id") == ""
		resp.Body = &endpointRewriter{rc: resp.Body, p: p, ex: ex, target: p.opts.Target}
		// The rewrite may change the length.
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	if p.faults != nil && resp.Header.Get("Content-Encoding") == "" {
		if err := p.faults.response(resp, ex, ctype); err != nil {
			return err
		}
		ctype = mediaType(resp.Header.Get("Content-Type"))
	}
	if p.opts.Observer == nil {
		return nil
	}
	hdr := headerLines("> ", ex.reqHdr)
	hdr = append(hdr, headerLines("< ", resp.Header)...)
	p.offer(hchunk{ex: ex, kind: hkHTTP, t: now, session: resp.Header.Get("Mcp-Session-Id"), http: &client.HTTPEvent{
		Method: ex.method, URL: ex.url, Status: resp.StatusCode, Proto: resp.Proto, Header: hdr, Duration: now.Sub(ex.start), Stream: ex.stream,
		Note: "through sonde tap",
	}}, nil)
	if ce != "" && !decodable(ce) {
		p.offer(hchunk{ex: ex, kind: hkNote, t: now, note: fmt.Sprintf("sonde tap: %s answered a body with Content-Encoding %s: forwarded as it is, not decoded", ex.stream, ce)}, nil)
		return nil
	}
	if ce != "" && sse && ex.method == http.MethodGet {
		p.offer(hchunk{ex: ex, kind: hkNote, t: now, note: fmt.Sprintf("sonde tap: %s is a compressed SSE stream (Content-Encoding %s): a legacy endpoint event in it is not rewritten to the tap", ex.stream, ce)}, nil)
	}
	if resp.Body != nil && resp.Body != http.NoBody {
		// A compressed body is forwarded as it came; the observer
		// decodes its copy.
		resp.Body = &obsBody{rc: resp.Body, p: p, ex: ex, kind: hkResp, ctype: ctype, enc: ce}
	}
	return nil
}

// errorHandler answers 502 when the target could not be reached (or the
// host went away), and records why.
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errDropped) {
		if r.Context().Err() == nil {
			http.Error(w, err.Error(), http.StatusGatewayTimeout)
		}
		return
	}
	if ex := exchangeOf(r); ex != nil && p.opts.Observer != nil {
		now := time.Now()
		p.offer(hchunk{ex: ex, kind: hkHTTP, t: now, http: &client.HTTPEvent{
			Method: ex.method, URL: ex.url, Header: headerLines("> ", ex.reqHdr), Duration: now.Sub(ex.start), Stream: ex.stream,
			Note: "sonde tap: the server could not be reached: " + err.Error(), Problem: true,
		}}, nil)
	}
	if r.Context().Err() == nil {
		http.Error(w, "sonde tap: the server could not be reached: "+err.Error(), http.StatusBadGateway)
	}
}

// missCounter counts the chunks of one body that were not observed.
type missCounter struct {
	n     uint64
	bytes int64
}

// offer hands c to the observer without waiting: when the queue is full
// (in chunks or bytes) c is dropped and counted in miss (when set) and in
// the stats. It reports whether c was queued.
func (p *Proxy) offer(c hchunk, miss *missCounter) bool {
	if p.opts.Observer == nil {
		return false
	}
	if miss != nil {
		c.missed, c.missedBytes = miss.n, miss.bytes
	}
	select {
	case <-p.closed:
		return false
	default:
	}
	if p.inflight.Load()+int64(len(c.data)) <= p.opts.QueueBytes {
		select {
		case p.queue <- c:
			p.inflight.Add(int64(len(c.data)))
			if miss != nil {
				miss.n, miss.bytes = 0, 0
			}
			return true
		default:
		}
	}
	if miss != nil && !c.end {
		miss.n++
		miss.bytes += int64(len(c.data))
	} else {
		p.lost.Add(1) // the observer reports it with what it handles next
	}
	p.statsMu.Lock()
	p.stats.MissedChunks++
	p.stats.MissedBytes += int64(len(c.data))
	p.statsMu.Unlock()
	return false
}

// offerEnd hands the end of a body to the observer. It does not wait:
// when the queue is full, a goroutine waits for room (the end carries
// what was missed last, and frees the body's state in the observer).
func (p *Proxy) offerEnd(c hchunk, miss *missCounter) {
	c.missed, c.missedBytes = miss.n, miss.bytes
	// Counted before looking at closed: the observer, once closed, waits
	// for every end counted (they carry the last misses), so none is lost
	// to a Close that comes while it waits for room.
	p.ends.Add(1)
	select {
	case p.queue <- c:
		p.ends.Add(-1)
		return
	case <-p.closed:
		p.ends.Add(-1)
		return
	default:
	}
	c.waited = true // the observer takes it off the count
	go func() { p.queue <- c }()
}

// obsBody forwards a body unchanged and offers a copy of each read.
type obsBody struct {
	rc    io.ReadCloser
	p     *Proxy
	ex    *exchange
	kind  int
	ctype string
	enc   string
	mu    sync.Mutex
	miss  missCounter
	ended bool
}

func (b *obsBody) Read(buf []byte) (int, error) {
	n, err := b.rc.Read(buf)
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > 0 && !b.ended {
		b.p.offer(hchunk{ex: b.ex, kind: b.kind, ctype: b.ctype, enc: b.enc, data: append([]byte(nil), buf[:n]...), t: time.Now()}, &b.miss)
	}
	if err != nil {
		b.endLocked()
	}
	return n, err
}

func (b *obsBody) endLocked() {
	if b.ended {
		return
	}
	b.ended = true
	b.p.offerEnd(hchunk{ex: b.ex, kind: b.kind, ctype: b.ctype, enc: b.enc, end: true, t: time.Now()}, &b.miss)
}

func (b *obsBody) Close() error {
	b.mu.Lock()
	b.endLocked()
	b.mu.Unlock()
	return b.rc.Close()
}

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

// IsLoopbackAddr reports whether a listen address (host:port) is on a
// loopback interface only: localhost or a loopback IP. An empty host (all
// interfaces) is not.
func IsLoopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return false
	}
	return loopback.Host(h)
}

// secretHeader reports whether a header's value is kept out of the
// recording: credentials and cookies, and any header whose name has a
// part that says it holds a secret.
func secretHeader(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return secretName(name)
}

// secretName reports whether a name (of a header, a query parameter) has
// a part, between '-' or '_', that says its value is a secret.
func secretName(name string) bool {
	for _, part := range strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '-' || r == '_' }) {
		switch part {
		case "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "KEY", "APIKEY", "CREDENTIAL", "CREDENTIALS",
			"AUTH", "COOKIE", "PAT", "PRIVATE", "SIGNATURE", "SESSIONKEY", "ACCESSTOKEN":
			return true
		}
	}
	return false
}

// Redacted stands for a value kept out of the recording.
const Redacted = "«redacted»"

// headerLines lists h as "> Name: value" (prefix "> " or "< "), sorted,
// secret values replaced by Redacted.
func headerLines(prefix string, h http.Header) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		v := strings.Join(h[k], ", ")
		if secretHeader(k) {
			v = Redacted
		}
		out = append(out, prefix+k+": "+v)
	}
	return out
}

// RedactURL is u with its password and the values of query parameters
// named like secrets replaced.
func RedactURL(u *url.URL) string {
	c := *u
	if q := c.Query(); len(q) > 0 {
		changed := false
		for k := range q {
			if secretName(k) {
				q[k] = []string{"redacted"}
				changed = true
			}
		}
		if changed {
			c.RawQuery = q.Encode()
		}
	}
	return c.Redacted()
}

// httpBody is what the observer holds of one body.
type httpBody struct {
	buf     []byte
	tooLong bool
	broken  bool // a chunk was missed: the body cannot be decoded
	sse     *sseSplitter
	// inf decodes a compressed body (enc, its Content-Encoding); badEnc
	// is why it could not.
	inf    *inflater
	enc    string
	badEnc error
	zBytes int64 // compressed bytes given to inf
}

// add takes the next bytes of a body that is not an SSE stream, keeping
// at most max of them (and the first 256 of a longer one, for its
// record); it reports whether the body is still within max.
func (b *httpBody) add(data []byte, max int) bool {
	if b.tooLong || b.broken {
		return false
	}
	if len(b.buf)+len(data) > max {
		b.tooLong = true
		if len(b.buf) < 256 {
			b.buf = append(b.buf, data[:min(len(data), 256-len(b.buf))]...)
		}
		return false
	}
	b.buf = append(b.buf, data...)
	return true
}

// observe is the observer goroutine: bodies are gathered (JSON) or split
// into events (SSE) and their messages fed to the client.Observer, until
// Close; it then takes what is already queued.
func (p *Proxy) observe() {
	def := p.opts.Observer
	if def == nil {
		<-p.closed
		return
	}
	o := def // the observer of the chunk being handled (route)
	type key struct {
		ex   *exchange
		kind int
	}
	bodies := map[key]*httpBody{}
	reportLost := func(t time.Time) {
		if p.lost.Load() == 0 { // the usual case: no write on each chunk
			return
		}
		if n := p.lost.Swap(0); n > 0 {
			o.Missed(uint64(n), fmt.Sprintf("observation fell behind: %d of the exchanges' headers, notes or ends went by unobserved", n), t)
		}
	}
	handle := func(c hchunk) {
		p.inflight.Add(-int64(len(c.data)))
		reportLost(c.t)
		if c.missed > 0 {
			o.Missed(c.missed, fmt.Sprintf("observation fell behind: %d bytes of %s (%d reads) were forwarded but not observed", c.missedBytes, c.ex.stream, c.missed), c.t)
		}
		switch c.kind {
		case hkHTTP:
			o.HTTP(*c.http, c.t)
			return
		case hkNote:
			if c.fault != nil {
				o.Fault(c.note, c.fault, c.t)
				return
			}
			o.Note(c.note, c.t)
			return
		}
		k := key{c.ex, c.kind}
		b := bodies[k]
		if b == nil {
			b = &httpBody{}
			if c.kind == hkResp && c.ctype == "text/event-stream" {
				b.sse = &sseSplitter{max: p.opts.MaxMessageBytes}
			}
			if c.enc != "" {
				b.inf, b.enc = newInflater(c.enc), c.enc
			}
			bodies[k] = b
		}
		if c.missed > 0 {
			b.broken = true
			if b.sse != nil {
				b.sse.skip()
			}
			if b.inf != nil {
				// The compressed stream has a gap: nothing after it
				// decodes.
				b.inf.close()
			}
		}
		dir := client.Out
		if c.kind == hkResp {
			dir = client.In
		}
		if b.inf != nil {
			p.inflate(o, c, b)
			if !c.end {
				return
			}
			b.inf.close()
			c.data = nil
		}
		if b.sse != nil {
			b.sse.feed(c.data, c.end, func(ev sseEvent) {
				p.sseEvent(o, c.ex, ev, c.t)
			})
			if c.end {
				delete(bodies, k)
			}
			return
		}
		if !c.end {
			b.add(c.data, p.opts.MaxMessageBytes)
			return
		}
		delete(bodies, k)
		switch {
		case b.broken:
			o.Note(fmt.Sprintf("sonde tap: a body of %s was not observed whole: not decoded", c.ex.stream), c.t)
		case b.badEnc != nil && !b.tooLong:
			o.Note(fmt.Sprintf("sonde tap: a body of %s with Content-Encoding %s could not be decoded: %v", c.ex.stream, b.enc, b.badEnc), c.t)
		case b.tooLong:
			o.TooLong(dir, &client.LineTooLongError{Limit: p.opts.MaxMessageBytes, Prefix: b.buf[:min(len(b.buf), 256)]}, c.t)
		case c.kind == hkResp && c.ctype != "application/json":
			// 202 Accepted, an error page: nothing to decode (the
			// exchange's record has its status and content type).
		default:
			p.messages(o, dir, b.buf, c.t, c.ex.stream, "")
		}
	}
	route := p.router(def, &o, handle)
	tick := time.NewTimer(observeTick)
	tick.Stop()
	defer tick.Stop()
	for {
		select {
		case c := <-p.queue:
			route.chunk(c)
			p.whileBusy(route.chunk, tick)
			continue
		case <-p.closed:
		}
		for {
			select {
			case c := <-p.queue:
				route.chunk(c)
			default:
				if p.ends.Load() > 0 {
					// An end is on its way (offerEnd), unless the one
					// counted saw the close first and was not sent:
					// look at the count again shortly.
					select {
					case c := <-p.queue:
						route.chunk(c)
					case <-time.After(endPoll):
					}
					continue
				}
				route.releaseAll()
				o = def
				reportLost(time.Now())
				for _, b := range bodies {
					if b.sse != nil {
						b.sse.skip()
					}
					if b.inf != nil {
						b.inf.close()
					}
				}
				return
			}
		}
	}
}

// endPoll is how often the closing observer looks again at the ends
// counted but not yet queued (offerEnd).
const endPoll = time.Millisecond

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

// whileBusy handles what the queue holds a tick at a time, until a tick
// brings nothing (or the proxy closes): while chunks keep coming, the
// observer is not woken for each (see tap.observe).
func (p *Proxy) whileBusy(handle func(hchunk), tick *time.Timer) {
	for {
		tick.Reset(observeTick)
		select {
		case <-tick.C:
		case <-p.closed:
			return
		}
		n := 0
		for more := true; more; {
			select {
			case c := <-p.queue:
				handle(c)
				n++
			default:
				more = false
			}
		}
		if n == 0 {
			return
		}
	}
}

// inflate passes chunk c of a compressed body b to its decoder, and what
// it decodes on as the body's bytes (an SSE stream's events, or a body
// gathered up to MaxMessageBytes: past it, the decoder is stopped and the
// body is too long, however much more it would have decoded to).
func (p *Proxy) inflate(o *client.Observer, c hchunk, b *httpBody) {
	if b.broken {
		return
	}
	b.zBytes += int64(len(c.data))
	_, err := b.inf.feed(c.data, c.end, func(d []byte) bool {
		if b.sse == nil {
			return b.add(d, p.opts.MaxMessageBytes)
		}
		b.sse.feed(d, false, func(ev sseEvent) { p.sseEvent(o, c.ex, ev, c.t) })
		if !b.sse.over {
			return true
		}
		// An event that decodes past the cap may never end (a bomb
		// has no blank line): it is too long now, and the decoder
		// stops.
		o.TooLong(client.In, &client.LineTooLongError{Limit: p.opts.MaxMessageBytes, Prefix: append([]byte(nil), b.sse.raw[:min(len(b.sse.raw), 256)]...)}, c.t)
		o.Note(fmt.Sprintf("sonde tap: an event of the SSE stream of %s (Content-Encoding %s) decodes to more than %d bytes: the rest of the stream is forwarded, not decoded", c.ex.stream, b.enc, p.opts.MaxMessageBytes), c.t)
		b.tooLong = true
		b.sse.skip()
		return false
	})
	if err != nil && b.zBytes == 0 {
		err = nil // an empty body, nothing to decode
	}
	if err != nil && b.badEnc == nil {
		b.badEnc = err
		if b.sse != nil {
			o.Note(fmt.Sprintf("sonde tap: the SSE stream of %s with Content-Encoding %s could not be decoded past this point: %v", c.ex.stream, b.enc, err), c.t)
		}
	}
}

// messages feeds a body (one message or a batch) to o.
func (p *Proxy) messages(o *client.Observer, dir client.Direction, body []byte, t time.Time, stream, eventID string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil && len(batch) > 0 {
			for _, m := range batch {
				o.Message(dir, m, t, stream, eventID)
			}
			return
		}
	}
	o.Message(dir, body, t, stream, eventID)
}

// sseEvent feeds an SSE event to o: its data as a message, or an HTTP
// event for one that carries none (an endpoint, a priming event).
func (p *Proxy) sseEvent(o *client.Observer, ex *exchange, ev sseEvent, t time.Time) {
	if ev.tooLong {
		o.TooLong(client.In, &client.LineTooLongError{Limit: p.opts.MaxMessageBytes, Prefix: ev.raw}, t)
		return
	}
	if ev.event == "endpoint" {
		ex.stream = "SSE" // the legacy transport's stream
	}
	if (ev.event == "" || ev.event == "message") && len(ev.data) > 0 {
		p.messages(o, client.In, ev.data, t, ex.stream, ev.id)
		return
	}
	note := "SSE event"
	if ev.event != "" {
		note += " " + ev.event
	}
	if len(ev.data) > 0 {
		note += ": " + string(ev.data)
	}
	o.HTTP(client.HTTPEvent{Stream: ex.stream, EventID: ev.id, Raw: ev.raw, Note: note}, t)
}

// sseEvent is one event, as the observer splits it.
type sseEvent struct {
	event, id string
	data      []byte
	raw       []byte
	tooLong   bool
}

// sseSplitter splits pushed bytes into SSE events (the rules of
// transport.SSEReader, for bytes pushed rather than read): lines end in
// "\r\n", "\n" or "\r"; a blank line dispatches. An event over max is
// reported as too long and the rest of it skipped.
type sseSplitter struct {
	max      int
	line     []byte
	raw      []byte
	cr       bool // the last byte was '\r' (a '\n' may follow)
	ev       sseEvent
	hasData  bool
	skipping bool // until the next blank line
	over     bool // the current event is over max
}

// skip drops the event being built and what follows up to the next blank
// line (after a gap in what was observed).
func (s *sseSplitter) skip() {
	s.line, s.raw, s.ev, s.hasData, s.over = nil, nil, sseEvent{}, false, false
	s.skipping = true
}

func (s *sseSplitter) feed(b []byte, end bool, emit func(sseEvent)) {
	for _, c := range b {
		if s.cr {
			s.cr = false
			if c == '\n' {
				if !s.over && !s.skipping {
					s.raw = append(s.raw, c)
				}
				continue
			}
		}
		if c == '\n' || c == '\r' {
			if !s.over && !s.skipping {
				s.raw = append(s.raw, c)
			}
			s.cr = c == '\r'
			s.endLine(emit)
			continue
		}
		if s.skipping {
			continue
		}
		if s.over {
			continue
		}
		if len(s.raw) >= s.max {
			s.over = true
			continue
		}
		s.line = append(s.line, c)
		s.raw = append(s.raw, c)
	}
	_ = end // an event cut by the end of its stream is never dispatched
}

func (s *sseSplitter) endLine(emit func(sseEvent)) {
	line := s.line
	s.line = s.line[:0]
	if len(line) == 0 {
		// Blank line: dispatch.
		switch {
		case s.skipping:
			s.skipping = false
		case s.over:
			emit(sseEvent{tooLong: true, raw: append([]byte(nil), s.raw[:min(len(s.raw), 256)]...)})
		case len(s.raw) > 1 || s.hasData || s.ev.event != "" || s.ev.id != "":
			ev := s.ev
			ev.raw = append([]byte(nil), s.raw...)
			emit(ev)
		}
		s.raw, s.ev, s.hasData, s.over = nil, sseEvent{}, false, false
		return
	}
	if s.skipping || s.over {
		return
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "event":
		s.ev.event = string(value)
	case "id":
		s.ev.id = string(value)
	case "data":
		if s.hasData {
			s.ev.data = append(s.ev.data, '\n')
		}
		s.ev.data = append(s.ev.data, value...)
		s.hasData = true
	}
}
