package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
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

// responseReader reads the SSE events of body with a reused buffer; done
// gives the buffer back once nothing reads body any more.
func (h *HTTP) responseReader(body io.Reader) (r *SSEReader, done func()) {
	br, _ := h.sseBufs.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(body, sseBufBytes)
	} else {
		br.Reset(body)
	}
	return newSSEReader(br, h.cfg.MaxEventBytes), func() {
		br.Reset(nil)
		h.sseBufs.Put(br)
	}
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

// newRequest builds a request with sonde's headers and the session's.
func (h *HTTP) newRequest(ctx context.Context, method string, u *url.URL, body []byte, accept string) (*http.Request, []string) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, u.String(), rd)
	shown := []string{}
	for name, vals := range h.cfg.Header {
		for _, v := range vals {
			req.Header.Add(name, v)
		}
		shown = append(shown, "> "+http.CanonicalHeaderKey(name)+": "+redactHeader(name, strings.Join(vals, ", ")))
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	h.mu.Lock()
	session, version, mode := h.session, h.version, h.mode
	h.mu.Unlock()
	token := h.token()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
		shown = slices.DeleteFunc(shown, func(s string) bool { return strings.HasPrefix(s, "> Authorization:") })
		shown = append(shown, "> Authorization: Bearer "+Redacted)
	}
	if mode != ModeSSE {
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			shown = append(shown, "> Mcp-Session-Id: "+session)
		}
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
			shown = append(shown, "> MCP-Protocol-Version: "+version)
		}
	}
	return req, shown
}

// redactHeader hides the value of every header the user set, keeping the
// scheme of an Authorization value ("Bearer «redacted»").
func redactHeader(name, value string) string {
	if strings.EqualFold(name, "Authorization") {
		if i := strings.IndexByte(value, ' '); i > 0 {
			return value[:i] + " " + Redacted
		}
	}
	return Redacted
}

const acceptBoth = "application/json, text/event-stream"

// post sends one message and handles the answer. wrote, when not nil, is
// called once the request is on the wire (or failed to get there).
func (h *HTTP) post(body []byte, msg jsonrpc.Message, wrote func()) {
	h.postTry(body, msg, wrote, 0)
}

// The OAuth retries a message already had (postTry): one after a 401, one
// after a step-up 403; a second refusal of the same kind stands.
const (
	triedAuth   = 1 << iota // after a 401
	triedStepUp             // after a 403 with error="insufficient_scope"
)

// postTry is post; tried says which OAuth retries the message already had.
func (h *HTTP) postTry(body []byte, msg jsonrpc.Message, wrote func(), tried int) {
	u, mode := h.target()
	if u == nil {
		h.fail(&ExchangeError{Kind: ExchangeNetwork, ID: reqID(msg), Method: msg.Method, Msg: "no endpoint to POST to"})
		return
	}
	ctx := h.ctx
	if wrote != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote() }})
	}
	req, shown := h.newRequest(ctx, http.MethodPost, u, body, acceptBoth)
	sentToken := h.token()
	shown, _ = setModernHeaders(req, msg, shown) // http_modern.go
	stream := streamName(msg)
	start := time.Now()
	resp, err := h.hc.Do(req)
	ev := HTTPEvent{Method: http.MethodPost, URL: u.Redacted(), Header: shown, Duration: time.Since(start), Stream: stream, ReqID: reqID(msg)}
	if err != nil {
		if h.ctx.Err() != nil {
			return
		}
		ev.Note = err.Error()
		h.note(ev)
		h.fail(&ExchangeError{Kind: ExchangeNetwork, ID: reqID(msg), Method: msg.Method, Msg: fmt.Sprintf("%s: POST %s: %v", what(msg), u.Redacted(), httpshow.URLError(err)), Err: err})
		return
	}
	defer resp.Body.Close()
	ev.Status, ev.Proto = resp.StatusCode, resp.Proto
	ev.Header = append(ev.Header, httpshow.ResponseHeaders(resp)...)
	h.note(ev)
	if mode != ModeSSE && msg.Kind == jsonrpc.KindRequest && msg.Method == "initialize" && resp.StatusCode/100 == 2 {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			h.mu.Lock()
			h.session = sid
			h.mu.Unlock()
		}
		if mode == ModeAuto {
			h.mu.Lock()
			h.mode = ModeStreamable
			h.mu.Unlock()
		}
	}
	if resp.StatusCode/100 != 2 {
		if mode == ModeAuto && msg.Method == "initialize" && (resp.StatusCode == 400 || resp.StatusCode == 404 || resp.StatusCode == 405) {
			err := h.fallBack(resp)
			if err == nil {
				h.post(body, msg, nil)
				return
			}
			var xe *ExchangeError
			if errors.Is(err, ErrEndpointOrigin) && errors.As(err, &xe) {
				// Not the absence of a legacy transport: a hostile one.
				xe.ID, xe.Method, xe.Msg = reqID(msg), msg.Method, what(msg)+": "+xe.Msg
				h.fail(xe)
				return
			}
		}
		authz := h.auth != nil && oauth.NeedsDiscovery(resp.StatusCode, resp.Header.Get("Www-Authenticate"))
		e := h.statusError(req, resp, msg, msg.Kind == jsonrpc.KindRequest || authz)
		kind := triedAuth
		if resp.StatusCode == http.StatusForbidden {
			kind = triedStepUp
		}
		if authz && tried&kind == 0 {
			err := h.authorize(sentToken, e.Auth, kind == triedStepUp)
			if err == nil {
				h.note(HTTPEvent{Stream: oauthStream, ReqID: reqID(msg), Note: "authorized: sending " + what(msg) + " again with the access token"})
				h.postTry(body, msg, nil, tried|kind)
				return
			}
			e.Msg += "; " + err.Error()
			e.Err = err
		}
		h.fail(e)
		return
	}
	if msg.Kind != jsonrpc.KindRequest || mode == ModeSSE {
		io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyBytes))
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || (ct == "" && resp.ContentLength == 0):
		h.note(HTTPEvent{Stream: stream, ReqID: msg.ID, Note: fmt.Sprintf("HTTP %d with no body for request %s: its response can only come on the GET stream", resp.StatusCode, msg.ID)})
	case ct == "text/event-stream":
		h.readResponseStream(resp.Body, stream, msg)
	case ct == "application/json":
		h.readJSONBody(resp.Body, stream, msg)
	default:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		h.fail(&ExchangeError{Kind: ExchangeProtocol, ID: msg.ID, Method: msg.Method, Status: resp.StatusCode, Body: b,
			Msg: fmt.Sprintf("%s %s: the answer has Content-Type %q, neither application/json nor text/event-stream: %s", msg.Method, msg.ID, resp.Header.Get("Content-Type"), httpshow.Body(b))})
	}
}

// what names a message in errors: "tools/call 7" or "notifications/initialized".
func what(msg jsonrpc.Message) string {
	if msg.Kind == jsonrpc.KindRequest {
		return msg.Method + " " + msg.ID.String()
	}
	return msg.Method
}

func reqID(msg jsonrpc.Message) jsonrpc.ID {
	if msg.Kind == jsonrpc.KindRequest {
		return msg.ID
	}
	return jsonrpc.ID{}
}

func streamName(msg jsonrpc.Message) string {
	if msg.Kind == jsonrpc.KindRequest {
		return "POST " + msg.ID.String()
	}
	return "POST"
}

// fail reports a failed exchange to Read (for requests) or as a note (for
// notifications and responses, which have no request to settle).
func (h *HTTP) fail(e *ExchangeError) {
	if h.ctx.Err() != nil {
		return
	}
	h.deliver(inItem{err: e})
}

// statusError turns a non-2xx answer into an ExchangeError. With
// discover, a 401 (or a 403 with error="insufficient_scope") is followed by
// authorization discovery (transport/oauth), whose summary joins the message.
func (h *HTTP) statusError(req *http.Request, resp *http.Response, msg jsonrpc.Message, discover bool) *ExchangeError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
	e := &ExchangeError{Kind: ExchangeStatus, ID: reqID(msg), Method: msg.Method, Status: resp.StatusCode, Body: b}
	what := what(msg)
	e.Msg = fmt.Sprintf("%s: HTTP %d: %s", what, resp.StatusCode, httpshow.StatusBody(resp.Header.Get("Content-Type"), b))
	if resp.StatusCode/100 == 3 {
		e.Msg = fmt.Sprintf("%s: HTTP %d: the server redirects to %s, not followed (sonde follows no redirect of an MCP request: it carries your headers and token; if you trust the new URL, pass it with --url)",
			what, resp.StatusCode, location(req, resp))
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		e.WWWAuthenticate = resp.Header.Get("Www-Authenticate")
		if e.WWWAuthenticate != "" {
			e.Msg += "; WWW-Authenticate: " + e.WWWAuthenticate
			if rm := oauth.BearerChallenge(e.WWWAuthenticate).Params["resource_metadata"]; rm != "" {
				e.Msg += " (resource metadata: " + rm + ")"
			}
		}
		if discover && h.disc != nil && oauth.NeedsDiscovery(resp.StatusCode, e.WWWAuthenticate) {
			e.Auth = h.discoverAuth(resp.StatusCode, e.WWWAuthenticate, reqID(msg))
			e.Msg += "; authorization: " + e.Auth.Summary()
		}
		if h.auth == nil {
			e.Msg += "; pass credentials with --header 'Authorization: Bearer …' or --bearer-token-env NAME, or authorize with --oauth"
		}
	}
	if resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "" {
		e.Kind = ExchangeSessionExpired
		e.Msg = fmt.Sprintf("%s: HTTP 404 for session %s: the server ended the session; re-initialize (ctrl+r in the UI, or --reconnect)", what, req.Header.Get("Mcp-Session-Id"))
	}
	var body struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(b), &body) == nil && body.Error != nil && e.Kind == ExchangeStatus {
		e.RPC = body.Error
	}
	return e
}

// location shows the Location of a redirect, resolved against the
// request's URL, without a password and cut to 200 bytes.
func location(req *http.Request, resp *http.Response) string {
	raw := resp.Header.Get("Location")
	if raw == "" {
		return "(no Location)"
	}
	u, err := req.URL.Parse(raw)
	if err != nil {
		return fmt.Sprintf("%q", cut(raw, 200))
	}
	return cut(u.Redacted(), 200)
}

// readJSONBody delivers a single JSON answer.
func (h *HTTP) readJSONBody(body io.Reader, stream string, msg jsonrpc.Message) {
	b, err := io.ReadAll(io.LimitReader(body, int64(h.cfg.MaxEventBytes)+1))
	if err != nil {
		h.fail(&ExchangeError{Kind: ExchangeStreamEnded, ID: msg.ID, Method: msg.Method, Msg: fmt.Sprintf("%s %s: reading the JSON answer: %v", msg.Method, msg.ID, err), Err: err})
		return
	}
	if len(b) > h.cfg.MaxEventBytes {
		h.fail(&ExchangeError{Kind: ExchangeProtocol, ID: msg.ID, Method: msg.Method, Body: b[:min(len(b), prefixBytes)],
			Msg: fmt.Sprintf("%s %s: JSON answer exceeds %d bytes (--max-line-bytes)", msg.Method, msg.ID, h.cfg.MaxEventBytes)})
		return
	}
	b = bytes.TrimRight(b, "\r\n")
	f := h.frame(b, stream, "")
	if !h.deliver(inItem{f: f}) {
		return
	}
	if f.Err != nil || f.Msg.Kind != jsonrpc.KindResponse || f.Msg.ID != msg.ID {
		h.fail(&ExchangeError{Kind: ExchangeProtocol, ID: msg.ID, Method: msg.Method, Body: b[:min(len(b), errorBodyBytes)],
			Msg: fmt.Sprintf("%s %s: the application/json answer is not its response: %s", msg.Method, msg.ID, httpshow.Body(b))})
	}
}

// frame decodes one message that arrived on stream and watches for the
// initialize result, whose protocol version later requests must carry.
func (h *HTTP) frame(raw []byte, stream, eventID string) Frame {
	f := NewInFrame(raw, time.Now())
	f.Stream, f.EventID = stream, eventID
	if f.Err == nil && f.Msg.Kind == jsonrpc.KindResponse {
		h.mu.Lock()
		if h.initID.IsValid() && f.Msg.ID == h.initID && h.version == "" {
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(f.Msg.Result, &r) == nil {
				h.version = r.ProtocolVersion
			}
		}
		h.mu.Unlock()
	}
	return f
}

// streamState follows one stream of events: the last event id and retry
// delay, for resuming it.
type streamState struct {
	name     string
	lastID   string
	retry    time.Duration
	resumes  int
	answered bool // the response for the stream's request arrived
}

// readEvents reads one SSE body, delivering messages and noting the rest.
// It returns the reason it stopped: nil at a clean end of the body.
func (h *HTTP) readEvents(r *SSEReader, st *streamState, msg jsonrpc.Message) error {
	for {
		ev, err := r.Next()
		if err != nil {
			var inc *SSEIncompleteError
			if errors.As(err, &inc) {
				h.note(HTTPEvent{Stream: st.name, ReqID: reqID(msg), Raw: inc.Raw, Note: inc.Error(), Problem: true})
				return nil
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if ev.HasID {
			st.lastID = ev.ID
		}
		if ev.HasRetry {
			st.retry = ev.Retry
		}
		if !ev.IsMessage() {
			h.note(HTTPEvent{Stream: st.name, ReqID: reqID(msg), EventID: ev.ID, Raw: ev.Raw, Note: describeEvent(&ev)})
			continue
		}
		f := h.frame(ev.Data, st.name, ev.ID)
		if !h.deliver(inItem{f: f}) {
			return h.ctx.Err()
		}
		if msg.Kind == jsonrpc.KindRequest && f.Err == nil && f.Msg.Kind == jsonrpc.KindResponse && f.Msg.ID == msg.ID {
			st.answered = true
		}
	}
}

// describeEvent says what a non-message event is.
func describeEvent(ev *SSEEvent) string {
	var parts []string
	switch {
	case ev.Event != "" && ev.Event != "message":
		parts = append(parts, fmt.Sprintf("SSE event %q (not a message)", ev.Event))
	case ev.HasData && len(bytes.TrimSpace(ev.Data)) > 0:
		parts = append(parts, "SSE event with data {} (priming, not a message)")
	case ev.HasID && ev.HasData:
		parts = append(parts, "priming event (id, empty data)")
	case ev.Comments > 0 && !ev.HasData:
		parts = append(parts, "keep-alive comment")
	default:
		parts = append(parts, "SSE event without data")
	}
	if ev.HasID {
		parts = append(parts, "id "+ev.ID)
	}
	if ev.HasRetry {
		parts = append(parts, "retry "+ev.Retry.String())
	}
	if len(ev.Unknown) > 0 {
		parts = append(parts, fmt.Sprintf("%d line(s) that are not SSE fields, e.g. %q", len(ev.Unknown), ev.Unknown[0]))
	}
	return strings.Join(parts, "; ")
}

// readResponseStream reads the SSE answer to a request, resuming it with GET
// and Last-Event-ID when it ends before the response.
func (h *HTTP) readResponseStream(body io.Reader, stream string, msg jsonrpc.Message) {
	st := &streamState{name: stream, retry: DefaultRetry}
	r, done := h.responseReader(body)
	err := h.readEvents(r, st, msg)
	done()
	for h.ctx.Err() == nil && !st.answered {
		var tooLong *SSEEventTooLongError
		if errors.As(err, &tooLong) {
			h.fail(&ExchangeError{Kind: ExchangeProtocol, ID: msg.ID, Method: msg.Method, Body: tooLong.Prefix,
				Msg: fmt.Sprintf("%s %s: %v; the stream was dropped", msg.Method, msg.ID, err), Err: err})
			return
		}
		why := "the server closed the response stream"
		if err != nil {
			why = "the response stream broke (" + err.Error() + ")"
		}
		if st.lastID == "" || st.resumes >= MaxResumes || modernVersion(msg) != "" {
			reason := "it sent no event id to resume from"
			switch {
			case modernVersion(msg) != "":
				reason = "the modern era has no resumption (send the request again)"
			case st.lastID != "":
				reason = fmt.Sprintf("%d resumes did not bring it", MaxResumes)
			}
			h.fail(&ExchangeError{Kind: ExchangeStreamEnded, ID: msg.ID, Method: msg.Method,
				Msg: fmt.Sprintf("%s %s: %s before the response, and %s", msg.Method, msg.ID, why, reason), Err: err})
			return
		}
		st.resumes++
		h.note(HTTPEvent{Stream: st.name, ReqID: msg.ID, Problem: true, Note: fmt.Sprintf("%s before the response; resuming in %v with Last-Event-ID %s (attempt %d of %d)", why, st.retry, st.lastID, st.resumes, MaxResumes)})
		select {
		case <-time.After(st.retry):
		case <-h.ctx.Done():
			return
		}
		st.name = "GET resume " + msg.ID.String()
		resp, e := h.get(st.name, st.lastID, msg.ID)
		if e != nil {
			if h.ctx.Err() == nil {
				e.ID, e.Method = msg.ID, msg.Method
				e.Msg = fmt.Sprintf("%s %s: resuming the response stream failed: %s", msg.Method, msg.ID, e.Msg)
				h.fail(e)
			}
			return
		}
		err = h.readAndClose(resp, st, msg)
	}
}

// readAndClose reads a stream's events and closes its body.
func (h *HTTP) readAndClose(resp *http.Response, st *streamState, msg jsonrpc.Message) error {
	defer resp.Body.Close()
	r, done := h.responseReader(resp.Body)
	defer done()
	return h.readEvents(r, st, msg)
}

// get opens a GET stream (the standalone stream, or a resume with
// lastID). A non-2xx or non-SSE answer is an *ExchangeError.
func (h *HTTP) get(stream, lastID string, id jsonrpc.ID) (*http.Response, *ExchangeError) {
	req, shown := h.newRequest(h.ctx, http.MethodGet, h.url, nil, "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
		shown = append(shown, "> Last-Event-ID: "+lastID)
	}
	start := time.Now()
	resp, err := h.hc.Do(req)
	ev := HTTPEvent{Method: http.MethodGet, URL: h.url.Redacted(), Header: shown, Duration: time.Since(start), Stream: stream, ReqID: id}
	if err != nil {
		if h.ctx.Err() == nil {
			ev.Note = err.Error()
			h.note(ev)
		}
		return nil, &ExchangeError{Kind: ExchangeNetwork, Msg: fmt.Sprintf("GET %s: %v", h.url.Redacted(), httpshow.URLError(err)), Err: err}
	}
	ev.Status, ev.Proto = resp.StatusCode, resp.Proto
	ev.Header = append(ev.Header, httpshow.ResponseHeaders(resp)...)
	if resp.StatusCode/100 != 2 {
		e := h.statusError(req, resp, jsonrpc.Message{Method: "GET stream"}, id.IsValid())
		resp.Body.Close()
		ev.Note = e.Msg
		h.note(ev)
		return nil, e
	}
	h.note(ev)
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		resp.Body.Close()
		return nil, &ExchangeError{Kind: ExchangeProtocol, Status: resp.StatusCode, Body: b,
			Msg: fmt.Sprintf("GET %s answered Content-Type %q, not text/event-stream: %s", h.url.Redacted(), resp.Header.Get("Content-Type"), httpshow.Body(b))}
	}
	return resp, nil
}

// startGet opens the standalone GET stream once, after initialization.
// The channel it returns is closed once the first GET has its answer.
func (h *HTTP) startGet() <-chan struct{} {
	opened := make(chan struct{})
	h.mu.Lock()
	if h.getStarted || h.mode != ModeStreamable || h.closed {
		h.mu.Unlock()
		close(opened)
		return opened
	}
	h.getStarted = true
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		h.getLoop(sync.OnceFunc(func() { close(opened) }))
	}()
	return opened
}

// getLoop keeps the standalone stream open: on a clean end it reconnects
// after the retry delay (with Last-Event-ID); it gives up after a refusal
// or after repeated ends that brought nothing.
func (h *HTTP) getLoop(opened func()) {
	defer opened()
	st := &streamState{name: "GET", retry: DefaultRetry}
	idle := 0
	authorized := false
	for h.ctx.Err() == nil {
		sent := h.token()
		resp, e := h.get("GET", st.lastID, jsonrpc.ID{})
		if e != nil && e.Status == http.StatusUnauthorized && h.auth != nil && !authorized && h.ctx.Err() == nil {
			// A token that expired: refresh it (once) and open the stream
			// again.
			authorized = true
			if err := h.authorize(sent, e.Auth, false); err == nil {
				h.note(HTTPEvent{Stream: oauthStream, Note: "authorized: opening the GET stream again with the access token"})
				resp, e = h.get("GET", st.lastID, jsonrpc.ID{})
			} else {
				e.Msg += "; " + err.Error()
			}
		}
		opened()
		if e != nil {
			if h.ctx.Err() != nil {
				return
			}
			if e.Status == http.StatusMethodNotAllowed {
				h.note(HTTPEvent{Stream: "GET", Note: "the server offers no GET stream (405): server-initiated messages can only come on POST streams"})
			} else {
				h.note(HTTPEvent{Stream: "GET", Note: "no GET stream: " + e.Msg})
			}
			return
		}
		before := st.lastID
		err := h.readAndClose(resp, st, jsonrpc.Message{})
		if h.ctx.Err() != nil || h.isClosed() {
			return
		}
		if err != nil {
			h.note(HTTPEvent{Stream: "GET", Note: "the GET stream broke: " + err.Error(), Problem: true})
		}
		if st.lastID == before {
			idle++
		} else {
			idle = 0
		}
		if idle >= 3 {
			h.note(HTTPEvent{Stream: "GET", Note: "the GET stream keeps ending with nothing new; not reopening it"})
			return
		}
		h.note(HTTPEvent{Stream: "GET", Note: fmt.Sprintf("the GET stream ended; reopening in %v", st.retry)})
		select {
		case <-time.After(st.retry):
		case <-h.ctx.Done():
			return
		}
	}
}

// fallBack tries the legacy transport after the initialize POST was refused
// (auto mode). It returns nil when the legacy endpoint answered, else why
// not.
func (h *HTTP) fallBack(resp *http.Response) error {
	h.note(HTTPEvent{URL: h.url.Redacted(), Note: fmt.Sprintf("initialize POST got HTTP %d: trying the legacy HTTP+SSE transport (GET, waiting for an endpoint event)", resp.StatusCode)})
	if err := h.openLegacy(false); err != nil {
		h.note(HTTPEvent{URL: h.url.Redacted(), Note: "legacy HTTP+SSE did not answer either: " + err.Error()})
		h.mu.Lock()
		h.mode = ModeStreamable
		h.mu.Unlock()
		return err
	}
	return nil
}

// openLegacy opens the legacy SSE stream and waits for its endpoint event;
// the stream is then read in the background until it ends, which ends the
// connection. ConnectTimeout bounds the wait for the headers and the event.
// With discover, a 401 is followed by authorization discovery.
func (h *HTTP) openLegacy(discover bool) error {
	return h.openLegacyTry(discover, false)
}

// openLegacyTry is openLegacy; authorized says the GET was already sent
// again after an OAuth authorization, so that a second 401 stands.
func (h *HTTP) openLegacyTry(discover, authorized bool) error {
	ctx, cancel := context.WithCancel(h.ctx)
	timer := time.AfterFunc(h.cfg.ConnectTimeout, cancel)
	fail := func(err error) error {
		timer.Stop()
		cancel()
		return err
	}
	req, shown := h.newRequest(ctx, http.MethodGet, h.url, nil, "text/event-stream")
	sentToken := h.token()
	start := time.Now()
	resp, err := h.hc.Do(req)
	ev := HTTPEvent{Method: http.MethodGet, URL: h.url.Redacted(), Header: shown, Duration: time.Since(start), Stream: "SSE"}
	if err != nil {
		ev.Note = err.Error()
		h.note(ev)
		if !timer.Stop() {
			return fail(&ExchangeError{Kind: ExchangeNetwork, Msg: fmt.Sprintf("GET %s: no answer within %v", h.url.Redacted(), h.cfg.ConnectTimeout), Err: err})
		}
		return fail(&ExchangeError{Kind: ExchangeNetwork, Msg: fmt.Sprintf("GET %s: %v", h.url.Redacted(), httpshow.URLError(err)), Err: err})
	}
	ev.Status, ev.Proto = resp.StatusCode, resp.Proto
	ev.Header = append(ev.Header, httpshow.ResponseHeaders(resp)...)
	h.note(ev)
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		authz := discover && !authorized && h.auth != nil && resp.StatusCode == http.StatusUnauthorized
		e := h.statusError(req, resp, jsonrpc.Message{Method: "GET (legacy SSE)"}, discover)
		if authz {
			timer.Stop() // the flow has its own deadline
			err := h.authorize(sentToken, e.Auth, false)
			if err == nil {
				fail(nil)
				h.note(HTTPEvent{Stream: oauthStream, Note: "authorized: opening the legacy SSE stream again with the access token"})
				return h.openLegacyTry(discover, true)
			}
			e.Msg += "; " + err.Error()
			e.Err = err
		}
		return fail(e)
	}
	r := NewSSEReader(resp.Body, h.cfg.MaxEventBytes)
	for {
		ev, err := r.Next()
		if err != nil {
			resp.Body.Close()
			if !timer.Stop() {
				err = fmt.Errorf("no endpoint event within %v", h.cfg.ConnectTimeout)
			} else if errors.Is(err, io.EOF) {
				err = errors.New("the stream ended before an endpoint event")
			}
			return fail(&ExchangeError{Kind: ExchangeProtocol, Msg: fmt.Sprintf("GET %s (legacy SSE): %v", h.url.Redacted(), err), Err: err})
		}
		if ev.Event != "endpoint" {
			h.note(HTTPEvent{Stream: "SSE", EventID: ev.ID, Raw: ev.Raw, Note: "before the endpoint event: " + describeEvent(&ev)})
			continue
		}
		ep, perr := h.url.Parse(strings.TrimSpace(string(ev.Data)))
		if perr != nil {
			resp.Body.Close()
			return fail(&ExchangeError{Kind: ExchangeProtocol, Msg: fmt.Sprintf("GET %s (legacy SSE): endpoint event %q is not a URL: %v", h.url.Redacted(), ev.Data, perr)})
		}
		if why := h.foreignEndpoint(ep); why != "" {
			resp.Body.Close()
			h.note(HTTPEvent{Stream: "SSE", EventID: ev.ID, Raw: ev.Raw, Problem: true, Note: "endpoint refused: " + why})
			return fail(&ExchangeError{Kind: ExchangeProtocol, Msg: fmt.Sprintf("GET %s (legacy SSE): %s", h.url.Redacted(), why), Err: ErrEndpointOrigin})
		}
		if !timer.Stop() {
			resp.Body.Close()
			return fail(&ExchangeError{Kind: ExchangeNetwork, Msg: fmt.Sprintf("GET %s: no endpoint event within %v", h.url.Redacted(), h.cfg.ConnectTimeout)})
		}
		h.note(HTTPEvent{Stream: "SSE", EventID: ev.ID, Raw: ev.Raw, Note: "endpoint: messages go to " + ep.Redacted()})
		h.mu.Lock()
		h.endpoint, h.mode = ep, ModeSSE
		h.mu.Unlock()
		break
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer cancel()
		defer resp.Body.Close()
		err := h.readEvents(r, &streamState{name: "SSE"}, jsonrpc.Message{})
		if h.ctx.Err() != nil {
			return
		}
		reason := "the server closed the SSE stream (legacy HTTP+SSE cannot resume it)"
		if err != nil {
			reason = "the SSE stream broke: " + err.Error()
		}
		h.note(HTTPEvent{Stream: "SSE", Note: reason, Problem: err != nil})
		h.finish(&ClosedError{Reason: reason, Err: err})
	}()
	return nil
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

// foreignEndpoint says why the legacy endpoint ep may not be used: it is
// on another origin (scheme, host, port) than the SSE URL, where every
// POST would carry the user's headers and the bearer token. It returns ""
// for an endpoint on the SSE URL's origin (a relative one always is).
func (h *HTTP) foreignEndpoint(ep *url.URL) string {
	if sameOrigin(ep, h.url) {
		return ""
	}
	shown := cut(ep.Redacted(), 200)
	if strings.EqualFold(h.url.Scheme, "https") && strings.EqualFold(ep.Scheme, "http") {
		return fmt.Sprintf("the endpoint event names %s, a downgrade from https to http: refused (the POSTs would carry your headers and token in clear)", shown)
	}
	return fmt.Sprintf("the endpoint event names %s, on another origin (%s) than the SSE stream (%s): refused (the POSTs would carry your headers and token there)",
		shown, origin(ep), origin(h.url))
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (a default port made explicit).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && hostPort(a) == hostPort(b)
}

// hostPort is u's host, lower-cased, with the scheme's default port made
// explicit.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// origin is u's scheme://host[:port].
func origin(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// cut shortens s to at most n bytes (on a rune boundary), marking the cut
// with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// ErrEndpointOrigin is the cause of the ExchangeError (ExchangeProtocol)
// when a legacy SSE stream's endpoint event names another origin than the
// stream's own, or downgrades https to http: sonde refuses to POST there.
var ErrEndpointOrigin = errors.New("legacy SSE endpoint on another origin")
