package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// HTTPMode chooses the HTTP transport.
type HTTPMode string

// The HTTP transports.
const (
	// ModeAuto tries Streamable HTTP and falls back to legacy HTTP+SSE when
	// the initialize POST gets 400, 404 or 405 (the spec's detection).
	ModeAuto HTTPMode = "auto"
	// ModeStreamable is Streamable HTTP (protocol 2025-03-26 and later).
	ModeStreamable HTTPMode = "streamable"
	// ModeSSE is the legacy HTTP+SSE transport (protocol 2024-11-05).
	ModeSSE HTTPMode = "sse"
)

// Defaults for HTTPConfig fields left zero.
const (
	DefaultConnectTimeout = 10 * time.Second
	// DefaultRetry is the wait before resuming a dropped stream when the
	// server gave no retry field.
	DefaultRetry = time.Second
	// MaxResumes bounds how many times one response stream is resumed.
	MaxResumes = 5
	// errorBodyBytes bounds the body of a failed exchange kept for display.
	errorBodyBytes = httpshow.ErrorBodyBytes
	// inboxSize is how many frames wait for Read before streams pause.
	inboxSize = 64
)

// Redacted replaces a secret value wherever sonde shows or records it.
const Redacted = httpshow.Redacted

// HTTPConfig says how to reach a server over HTTP.
type HTTPConfig struct {
	// URL is the MCP endpoint (Streamable HTTP) or the SSE endpoint (legacy).
	URL  string
	Mode HTTPMode
	// Header is sent on every request (authorization and the like). Its
	// values are never shown: events carry them redacted.
	Header http.Header
	// Insecure skips TLS certificate verification.
	Insecure bool
	// MaxEventBytes caps one SSE event or one JSON body.
	MaxEventBytes int
	// ConnectTimeout bounds the wait for the legacy transport's endpoint
	// event, and the DELETE that ends a session.
	ConnectTimeout time.Duration
	// Client, if set, replaces the HTTP client built from Insecure (tests).
	Client *http.Client
	// AuthTimeout bounds the authorization discovery that follows a 401
	// (or a 403 with error="insufficient_scope") to a request: zero means
	// DefaultAuthTimeout, a negative value turns discovery off.
	AuthTimeout time.Duration
	// OAuth, when set, runs the OAuth authorization code flow on a 401
	// (transport/oauth) and then sends the access token on every request.
	OAuth *oauth.Config
}

// HTTPEvent describes one HTTP exchange, or one thing that happened on a
// stream that is not a message (a priming event, a resume, a dropped
// stream). Header values that could be secret are redacted.
type HTTPEvent struct {
	Method string // GET, POST, DELETE ("" for stream notes)
	URL    string
	Status int // 0 when no response arrived
	// Proto is the response's HTTP version, as net/http gives it
	// ("HTTP/1.1", "HTTP/2.0"); "" when no response arrived.
	Proto string
	// Header lists the request and response headers that matter, as
	// "> Name: value" (sent) and "< Name: value" (received).
	Header []string
	// Duration is the time until the response headers arrived.
	Duration time.Duration
	// Stream names the stream ("POST 7", "GET", "SSE").
	Stream string
	// ReqID is the request the exchange carried or the stream belongs to.
	ReqID jsonrpc.ID
	// EventID, Raw: for an SSE event that is not a message, its id and bytes.
	EventID string
	Raw     []byte
	// Note says what happened in words.
	Note string
	// Problem is true for a stream event that is a failure: a stream that
	// broke or ended before its response (a resume follows), or an event
	// cut off by the end of its stream (not dispatched). An exchange's
	// failure shows in its Status instead (0, or not 2xx).
	Problem bool
}

// ExchangeKind classifies a failed HTTP exchange.
type ExchangeKind uint8

// The ways an exchange fails.
const (
	// ExchangeStatus: the server answered with a non-2xx status.
	ExchangeStatus ExchangeKind = iota + 1
	// ExchangeNetwork: no answer (connection refused, TLS, reset).
	ExchangeNetwork
	// ExchangeSessionExpired: 404 to a request that carried a session id.
	ExchangeSessionExpired
	// ExchangeProtocol: the answer broke the transport's rules (a body that
	// is not JSON, an event over the cap, a wrong content type).
	ExchangeProtocol
	// ExchangeStreamEnded: the response stream ended before the response
	// and could not be resumed.
	ExchangeStreamEnded
)

// ExchangeError is a failed HTTP exchange. Read returns it as a non-fatal
// error: the connection goes on, and ID (when valid) names the request that
// the failure settles.
type ExchangeError struct {
	Kind   ExchangeKind
	ID     jsonrpc.ID
	Method string
	Status int
	// Body is the start of the response body (at most 2 KiB).
	Body []byte
	// WWWAuthenticate is the header of a 401 or 403.
	WWWAuthenticate string
	// Auth is what authorization discovery found after a 401 (or a 403
	// with error="insufficient_scope") to a request: the challenge, the
	// protected resource metadata, the authorization server's metadata and
	// the problems met (transport/oauth). Nil when discovery did not run.
	Auth *oauth.Discovery
	// RPC is the JSON-RPC error the body held, if it held one.
	RPC *jsonrpc.Error
	// Msg says what failed, in words.
	Msg string
	Err error
}

// Error returns the message.
func (e *ExchangeError) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *ExchangeError) Unwrap() error { return e.Err }

// ClosedError ends an HTTP connection: the legacy SSE stream ended, or the
// connection was closed. BySonde says Close ended it.
type ClosedError struct {
	Reason  string
	BySonde bool
	Err     error
}

// Error returns the reason.
func (e *ClosedError) Error() string { return e.Reason }

// Unwrap returns the cause.
func (e *ClosedError) Unwrap() error { return e.Err }

type inItem struct {
	f   Frame
	err error
}

// HTTP is a Conn to a server over Streamable HTTP or legacy HTTP+SSE.
type HTTP struct {
	cfg HTTPConfig
	obs Observer
	hc  *http.Client
	url *url.URL

	ctx    context.Context // cancelled by Close; parent of every exchange
	cancel context.CancelFunc
	wg     sync.WaitGroup
	in     chan inItem
	done   chan struct{} // closed when Read must return end (after inbox drains)
	end    error

	mu         sync.Mutex
	mode       HTTPMode // resolved: ModeStreamable or ModeSSE (ModeAuto until decided)
	endpoint   *url.URL // legacy: where to POST
	session    string
	version    string // negotiated protocol version, sent after initialize
	initID     jsonrpc.ID
	getStarted bool
	closed     bool
	endOnce    sync.Once
	closeOnce  sync.Once

	// disc runs discovery after a refusal (nil when AuthTimeout < 0);
	// auth, with HTTPConfig.OAuth, holds the token sent as Authorization:
	// Bearer (never shown) and gets a new one after a refusal (authz.go).
	disc *oauth.Discoverer
	auth authorizer

	// sseBufs are the read buffers of finished response streams, reused by
	// the next ones (a 4 KiB buffer per request was the largest allocation
	// of a call).
	sseBufs sync.Pool
}

// DialHTTP prepares a connection to cfg.URL. In ModeSSE it opens the SSE
// stream and waits for the endpoint event; in the other modes nothing is
// sent until the first Write. obs may be nil.
func DialHTTP(cfg HTTPConfig, obs Observer) (*HTTP, error) {
	if obs == nil {
		obs = func(Event) {}
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ExchangeError{Kind: ExchangeNetwork, Msg: fmt.Sprintf("bad URL %q: want http://host[:port]/path or https://…", cfg.URL), Err: err}
	}
	switch cfg.Mode {
	case "":
		cfg.Mode = ModeAuto
	case ModeAuto, ModeStreamable, ModeSSE:
	default:
		return nil, &ExchangeError{Kind: ExchangeNetwork, Msg: fmt.Sprintf("unknown HTTP transport %q (want auto, streamable or sse)", cfg.Mode)}
	}
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = DefaultMaxLineBytes
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.AuthTimeout == 0 {
		cfg.AuthTimeout = DefaultAuthTimeout
	}
	hc := cfg.Client
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = http.ProxyFromEnvironment
		// Requests in flight each hold a connection (their answer may be a
		// long stream); keep as many idle ones for reuse as may be busy, so
		// pipelined calls do not open and close a connection each.
		tr.MaxIdleConnsPerHost = 256
		if cfg.Insecure {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // --insecure, asked for and announced
		}
		hc = &http.Client{Transport: tr}
	}
	// MCP requests (the POSTs, the GET stream, the DELETE) follow no
	// redirect: Go would strip only Authorization and Cookie, and carry
	// every other --header to wherever the server points. Discovery and
	// the OAuth flow use the client as given (transport/oauth).
	mcp := *hc
	mcp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	ctx, cancel := context.WithCancel(context.Background())
	h := &HTTP{
		cfg: cfg, obs: obs, hc: &mcp, url: u, ctx: ctx, cancel: cancel,
		in: make(chan inItem, inboxSize), done: make(chan struct{}), mode: cfg.Mode,
	}
	if cfg.AuthTimeout > 0 {
		h.disc = oauth.NewDiscoverer(u, hc, cfg.AuthTimeout)
	}
	if cfg.OAuth != nil {
		h.auth = oauth.NewAuthorizer(cfg.OAuth, u, hc, func(ev oauth.Event) { h.noteAuth(ev, jsonrpc.ID{}) })
	}
	note := "connecting over " + string(cfg.Mode) + " HTTP"
	if cfg.Insecure {
		note += "; TLS certificate verification is OFF (--insecure)"
	}
	obs(Event{Kind: EventConnect, Time: time.Now(), Argv: []string{u.Redacted()}})
	h.note(HTTPEvent{URL: u.Redacted(), Note: note})
	if cfg.Mode == ModeSSE {
		if err := h.openLegacy(true); err != nil {
			h.Close()
			return nil, err
		}
	}
	return h, nil
}

func (h *HTTP) note(ev HTTPEvent) {
	h.obs(Event{Kind: EventHTTP, Time: time.Now(), HTTP: &ev})
}

// Read returns the next frame. Failed exchanges come as *ExchangeError and
// an event over the cap as *ExchangeError of kind ExchangeProtocol; the
// connection goes on after both. The end is a *ClosedError.
func (h *HTTP) Read() (Frame, error) {
	select {
	case it := <-h.in:
		return it.f, it.err
	default:
	}
	select {
	case it := <-h.in:
		return it.f, it.err
	case <-h.done:
		select {
		case it := <-h.in:
			return it.f, it.err
		default:
		}
		return Frame{}, h.end
	}
}

// deliver hands a frame or error to Read; it waits while Read is behind and
// gives up when the connection closes.
func (h *HTTP) deliver(it inItem) bool {
	select {
	case h.in <- it:
		return true
	case <-h.ctx.Done():
		return false
	}
}

// finish makes Read return err once the inbox is empty.
func (h *HTTP) finish(err error) {
	h.endOnce.Do(func() {
		h.end = err
		close(h.done)
	})
}

// Write sends one message as a POST. It returns once the request is on the
// wire (a request's answer is read in the background) or, for
// notifications and responses, once the server acknowledged it.
func (h *HTTP) Write(raw []byte) error {
	msg, _ := jsonrpc.Decode(raw)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return &ClosedError{Reason: "connection closed"}
	}
	if msg.Kind == jsonrpc.KindRequest && msg.Method == "initialize" {
		h.initID = msg.ID
	}
	h.mu.Unlock()
	body := append([]byte(nil), raw...)
	if msg.Kind != jsonrpc.KindRequest {
		h.post(body, msg, nil)
		if msg.Method == "notifications/initialized" {
			// The GET stream is open (or refused) before the next request
			// goes out, so a server message always has a stream to use.
			select {
			case <-h.startGet():
			case <-time.After(h.cfg.ConnectTimeout):
			case <-h.ctx.Done():
			}
		}
		return nil
	}
	wrote := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(wrote) }) }
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer signal()
		h.post(body, msg, signal)
	}()
	select {
	case <-wrote:
	case <-h.ctx.Done():
	}
	return nil
}

// target returns where POSTs go and the mode in use.
func (h *HTTP) target() (*url.URL, HTTPMode) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mode == ModeSSE {
		return h.endpoint, ModeSSE
	}
	return h.url, h.mode
}

func (h *HTTP) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Close ends the session (DELETE, 405 tolerated), stops every stream and
// waits for them. It is idempotent.
func (h *HTTP) Close() error {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		session, mode := h.session, h.mode
		h.mu.Unlock()
		if session != "" && mode == ModeStreamable {
			h.deleteSession()
		}
		h.cancel()
		h.wg.Wait()
		h.finish(&ClosedError{Reason: "connection closed by sonde", BySonde: true})
	})
	return nil
}

// Kill ends the connection at once, without the DELETE.
func (h *HTTP) Kill() {
	h.mu.Lock()
	h.session = ""
	h.mu.Unlock()
	h.Close()
}

// deleteSession asks the server to end the session.
func (h *HTTP) deleteSession() {
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.ConnectTimeout)
	defer cancel()
	req, shown := h.newRequest(ctx, http.MethodDelete, h.url, nil, "")
	start := time.Now()
	resp, err := h.hc.Do(req)
	ev := HTTPEvent{Method: http.MethodDelete, URL: h.url.Redacted(), Header: shown, Duration: time.Since(start), Stream: "DELETE"}
	if err != nil {
		ev.Note = "ending the session failed: " + httpshow.URLError(err).Error()
		h.note(ev)
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyBytes))
	resp.Body.Close()
	ev.Status, ev.Proto = resp.StatusCode, resp.Proto
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		ev.Note = "the server does not end sessions on request (405)"
	case resp.StatusCode/100 == 2:
		ev.Note = "session ended"
	default:
		ev.Note = fmt.Sprintf("ending the session got HTTP %d", resp.StatusCode)
	}
	h.note(ev)
}

// Summary describes the event in one line: "POST http://h/mcp → 200 in
// 12ms [POST 7]", or the stream and the note.
func (e *HTTPEvent) Summary() string {
	var b strings.Builder
	if e.Method != "" {
		b.WriteString(e.Method + " " + e.URL)
		if e.Status != 0 {
			fmt.Fprintf(&b, " → %d in %v", e.Status, e.Duration.Round(time.Microsecond*10))
		} else {
			b.WriteString(" → no answer")
		}
	}
	if e.Stream != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("[" + e.Stream + "]")
	}
	if e.Note != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Note)
	}
	return b.String()
}
