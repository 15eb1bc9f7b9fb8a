package transport

// The Streamable HTTP POST path: one message per POST, and its answer
// (nothing, a JSON body, or an SSE stream read in http_stream.go).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

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
	triedNonce              // after a 401 use_dpop_nonce (RFC 9449 §9)
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
			// Closed by sonde mid-exchange: said, not dropped (over the
			// legacy transport the answer may be on the stream already).
			ev.Note = "not finished: sonde closed the connection"
			h.note(ev)
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
	if h.keepNonce(u, resp) && resp.StatusCode == http.StatusUnauthorized && tried&triedNonce == 0 &&
		oauth.NonceChallenge(resp.Header.Get("Www-Authenticate")) {
		io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyBytes))
		h.note(HTTPEvent{Stream: oauthStream, ReqID: reqID(msg), Note: "DPoP: HTTP 401 use_dpop_nonce: the server asks for a DPoP nonce (DPoP-Nonce " + resp.Header.Get("DPoP-Nonce") + "); sending " + what(msg) + " again with a fresh proof carrying it"})
		h.postTry(body, msg, nil, tried|triedNonce)
		return
	}
	if mode != ModeSSE && msg.Kind == jsonrpc.KindRequest && msg.Method == "initialize" && resp.StatusCode/100 == 2 {
		h.initialized(resp, mode)
	}
	if resp.StatusCode/100 != 2 {
		h.refused(req, resp, body, msg, mode, sentToken, tried)
		return
	}
	if msg.Kind != jsonrpc.KindRequest || mode == ModeSSE {
		io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyBytes))
		return
	}
	h.readAnswer(resp, stream, msg)
}

// initialized keeps what a successful initialize POST's answer settles:
// the session id, and (auto mode) that the server speaks Streamable HTTP.
func (h *HTTP) initialized(resp *http.Response, mode HTTPMode) {
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

// refused handles a non-2xx answer to a POST: in auto mode, a refused
// initialize falls back to the legacy transport; a 401 (or a step-up 403)
// with OAuth configured authorizes and sends the message again, once per
// kind; any other refusal fails the exchange. sentToken is the access
// token the refused request carried.
func (h *HTTP) refused(req *http.Request, resp *http.Response, body []byte, msg jsonrpc.Message, mode HTTPMode, sentToken string, tried int) {
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
}

// readAnswer reads a 2xx answer to a request by its Content-Type: none (the
// response comes on the GET stream), an SSE stream, or a JSON body.
func (h *HTTP) readAnswer(resp *http.Response, stream string, msg jsonrpc.Message) {
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

// fail reports a failed exchange to Read (for requests) or as a note (for
// notifications and responses, which have no request to settle).
func (h *HTTP) fail(e *ExchangeError) {
	if h.ctx.Err() != nil {
		return
	}
	h.deliver(inItem{err: e})
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
