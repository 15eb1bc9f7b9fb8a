package transport

// The glue every exchange shares: building a request with sonde's,
// the user's and the session's headers, naming a message, and turning a
// non-2xx answer into an ExchangeError.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

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
	if auth, err := h.authHeaders(req, u); err != nil || len(auth) > 0 {
		shown = slices.DeleteFunc(shown, func(s string) bool { return strings.HasPrefix(s, "> Authorization:") })
		shown = append(shown, auth...)
		if err != nil {
			shown = append(shown, "> DPoP: (none: "+err.Error()+")")
		}
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
