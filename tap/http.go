package tap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
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
	// AllowOrigins are the origins (scheme://host[:port], as ParseOrigin
	// accepts them; others are ignored) whose requests are forwarded
	// besides those with no Origin header or a loopback one: any other
	// Origin, "null" included, is refused (403) before it reaches the
	// server, whatever LoopbackOnly says (a page in the user's browser
	// can reach a loopback tap by its address, and the tap would send
	// the server the host's credentials).
	AllowOrigins []string
	// Transport sends the requests upstream; nil is a clone of
	// http.DefaultTransport that never compresses on its own (a body
	// reaches the host as the server sent it).
	Transport http.RoundTripper
	// Log receives the refusals of LoopbackOnly and AllowOrigins, the
	// reverse proxy's errors (a host that went away mid-answer), and the
	// stderr text of fault rules (nil: io.Discard).
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
	// goroutine when the observer Sessions gave session id gets nothing
	// more, and why: the host's DELETE of it was answered 2xx and
	// observed, or its legacy stream ended (what of it still comes
	// goes to Observer); or it was idle past SessionIdle, or closed to
	// make room (MaxSessions; what of it still comes is a new session,
	// given to Sessions again).
	SessionEnded func(id string, why SessionEnd)
	// SessionIdle, with Sessions, closes a session nothing went by in
	// for that long (no request, answer or event) while no request of
	// it was in flight (0: never).
	SessionIdle time.Duration
	// MaxSessions, with Sessions, bounds the sessions observed at once
	// (default DefaultMaxSessions): a new one past it closes the one
	// idle the longest.
	MaxSessions int
	// Faults, when set, are fault rules on the forwarding path (httpFaults):
	// what the host sent and what it received are observed, and each
	// change a rule made is noted.
	Faults *chaos.Engine
	// Hold, when set, judges each JSON-RPC message of both directions
	// against its breakpoints and holds those one matches (httphold.go,
	// docs/breakpoints.md "Over HTTP"). What no breakpoint holds is
	// forwarded as without it.
	Hold *hold.Engine
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
	faults   *httpFaults // nil without fault rules
	// allowOrigins are ProxyOptions.AllowOrigins, canonical (ParseOrigin).
	allowOrigins []string
	hosts        hostSessions // for injected requests (httpinject.go)
	// legacy maps the request URI of each legacy endpoint (named by an
	// endpoint event) to its session's key (LegacySession).
	legacyMu sync.Mutex
	legacy   map[string]string
	// streams are the SSE streams the breakpoints pass (httpholdsse.go).
	streamsMu sync.Mutex
	streams   map[*sseHold]struct{}
	// holdSess is the session of each frame held (by its direction and
	// id: NoteHold records its steps there).
	holdMu   sync.Mutex
	holdSess map[string]string
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
	// bodyWhole: the breakpoints read the host's body whole (it is in
	// memory: no full duplex).
	bodyWhole bool
	noise     [][]byte
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
	hold        *client.Hold  // on a note of a breakpoint's step
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
	for _, o := range opts.AllowOrigins {
		if c, err := ParseOrigin(o); err == nil {
			p.allowOrigins = append(p.allowOrigins, c)
		}
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
	if p.refuseOrigin(w, r) {
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
	if p.faults != nil || p.opts.Hold != nil {
		u := *r.URL
		u.Scheme, u.Host = p.opts.Target.Scheme, p.opts.Target.Host
		ex.url = RedactURL(&u)
	}
	if p.opts.Hold != nil && p.holdRequest(w, r, ex) {
		return
	}
	if p.faults != nil && p.faults.request(w, r, ex) {
		return
	}
	defer p.takeBody(w, r, ex)()
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
	// Breakpoints come first, as on stdio: a frame is held as the server
	// sent it, and what is let go then goes through the fault rules.
	if p.opts.Hold != nil && resp.Header.Get("Content-Encoding") == "" {
		switch {
		case ctype == "text/event-stream":
			p.holdSSE(resp, ex)
		case ctype == "application/json" && resp.StatusCode == http.StatusOK:
			if err := p.holdJSONResponse(resp); err != nil {
				return err
			}
		}
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
