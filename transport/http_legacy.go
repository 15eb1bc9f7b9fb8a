package transport

// The legacy HTTP+SSE transport (protocol 2024-11-05): the auto mode's
// fallback, the SSE stream and its endpoint event, and the origin check
// of that endpoint.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

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
	ep, err := h.awaitEndpoint(r, resp.Body, timer)
	if err != nil {
		return fail(err)
	}
	h.mu.Lock()
	h.endpoint, h.mode = ep, ModeSSE
	h.mu.Unlock()
	h.wg.Add(1)
	go h.readLegacy(r, resp.Body, cancel)
	return nil
}

// awaitEndpoint reads the legacy SSE stream up to its endpoint event,
// noting the events before it, and refuses an endpoint on another origin.
// timer is the ConnectTimeout's: once it fired, the wait failed. On a
// failure it closes body.
func (h *HTTP) awaitEndpoint(r *SSEReader, body io.Closer, timer *time.Timer) (*url.URL, error) {
	for {
		ev, err := r.Next()
		if err != nil {
			body.Close()
			if !timer.Stop() {
				err = fmt.Errorf("no endpoint event within %v", h.cfg.ConnectTimeout)
			} else if errors.Is(err, io.EOF) {
				err = errors.New("the stream ended before an endpoint event")
			}
			return nil, &ExchangeError{Kind: ExchangeProtocol, Msg: fmt.Sprintf("GET %s (legacy SSE): %v", h.url.Redacted(), err), Err: err}
		}
		if ev.Event != "endpoint" {
			h.note(HTTPEvent{Stream: "SSE", EventID: ev.ID, Raw: ev.Raw, Note: "before the endpoint event: " + describeEvent(&ev)})
			continue
		}
		ep, perr := h.url.Parse(strings.TrimSpace(string(ev.Data)))
		if perr != nil {
			body.Close()
			return nil, &ExchangeError{Kind: ExchangeProtocol, Msg: fmt.Sprintf("GET %s (legacy SSE): endpoint event %q is not a URL: %v", h.url.Redacted(), ev.Data, perr)}
		}
		if why := h.foreignEndpoint(ep); why != "" {
			body.Close()
			h.note(HTTPEvent{Stream: "SSE", EventID: ev.ID, Raw: ev.Raw, Problem: true, Note: "endpoint refused: " + why})
			return nil, &ExchangeError{Kind: ExchangeProtocol, Msg: fmt.Sprintf("GET %s (legacy SSE): %s", h.url.Redacted(), why), Err: ErrEndpointOrigin}
		}
		if !timer.Stop() {
			body.Close()
			return nil, &ExchangeError{Kind: ExchangeNetwork, Msg: fmt.Sprintf("GET %s: no endpoint event within %v", h.url.Redacted(), h.cfg.ConnectTimeout)}
		}
		h.note(HTTPEvent{Stream: "SSE", EventID: ev.ID, Raw: ev.Raw, Note: "endpoint: messages go to " + ep.Redacted()})
		return ep, nil
	}
}

// readLegacy reads the legacy SSE stream after its endpoint event until it
// ends, which ends the connection; cancel then releases the stream's
// context. The caller added it to h.wg.
func (h *HTTP) readLegacy(r *SSEReader, body io.Closer, cancel context.CancelFunc) {
	defer h.wg.Done()
	defer cancel()
	defer body.Close()
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
}

// foreignEndpoint says why the legacy endpoint ep may not be used: it is
// on another origin (scheme, host, port) than the SSE URL, where every
// POST would carry the user's headers and the bearer token. It returns ""
// for an endpoint on the SSE URL's origin (a relative one always is).
func (h *HTTP) foreignEndpoint(ep *url.URL) string {
	if oauth.SameOrigin(ep, h.url) {
		return ""
	}
	shown := cut(ep.Redacted(), 200)
	if strings.EqualFold(h.url.Scheme, "https") && strings.EqualFold(ep.Scheme, "http") {
		return fmt.Sprintf("the endpoint event names %s, a downgrade from https to http: refused (the POSTs would carry your headers and token in clear)", shown)
	}
	return fmt.Sprintf("the endpoint event names %s, on another origin (%s) than the SSE stream (%s): refused (the POSTs would carry your headers and token there)",
		shown, origin(ep), origin(h.url))
}

// origin is u's scheme://host[:port].
func origin(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// ErrEndpointOrigin is the cause of the ExchangeError (ExchangeProtocol)
// when a legacy SSE stream's endpoint event names another origin than the
// stream's own, or downgrades https to http: sonde refuses to POST there.
var ErrEndpointOrigin = errors.New("legacy SSE endpoint on another origin")
