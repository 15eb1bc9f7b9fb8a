package transport

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// Authorization lives in transport/oauth: discovery after a refusal and the
// OAuth flow. The HTTP transport asks an authorizer for the token to send
// and, after a 401 (or a step-up 403), for a new one before it sends the
// request again once; it knows nothing of how tokens are got.

// DefaultAuthTimeout bounds a whole discovery (every GET it makes).
const DefaultAuthTimeout = 5 * time.Second

// oauthStream is the stream name of the flow's HTTP events.
const oauthStream = oauth.StreamFlow

// authorizer is what the transport needs of OAuth (*oauth.Authorizer).
type authorizer interface {
	// Token returns the access token to send ("" for none).
	Token() string
	// Authorize gets a new token after a 401 (or, with stepUp, a 403
	// insufficient_scope) to a request that carried token sent; nil means
	// the request should be sent again.
	Authorize(conn context.Context, sent string, d *oauth.Discovery, stepUp bool) error
	// Credential returns how a request of method to u carries the token:
	// its scheme, and a fresh DPoP proof for a DPoP-bound one.
	Credential(method string, u *url.URL) (oauth.Credential, error)
	// KeepNonce keeps the DPoP-Nonce an answer from u carried; it reports
	// whether it is new.
	KeepNonce(u *url.URL, nonce string) bool
}

// token returns the access token to send ("" without OAuth).
func (h *HTTP) token() string {
	if h.auth == nil {
		return ""
	}
	return h.auth.Token()
}

// authorize asks the authorizer for a new token after a refusal of a
// request that carried token sent.
func (h *HTTP) authorize(sent string, d *oauth.Discovery, stepUp bool) error {
	return h.auth.Authorize(h.ctx, sent, d, stepUp)
}

// discoverAuth runs discovery for a refusal of request id (invalid for
// the legacy GET) with WWW-Authenticate challenge; its GETs are events
// with the request's id.
func (h *HTTP) discoverAuth(status int, challenge string, id jsonrpc.ID) *oauth.Discovery {
	return h.disc.Discover(h.ctx, status, challenge, func(ev oauth.Event) { h.noteAuth(ev, id) })
}

// noteAuth shows an event of transport/oauth as an HTTP event of request
// id.
func (h *HTTP) noteAuth(ev oauth.Event, id jsonrpc.ID) {
	h.note(HTTPEvent{Method: ev.Method, URL: ev.URL, Status: ev.Status, Header: ev.Header, Duration: ev.Duration,
		Stream: ev.Stream, ReqID: id, Raw: ev.Raw, Note: ev.Note})
}

// authHeaders sets the Authorization (and DPoP) headers of req, a request
// to u, from the authorizer, and the lines that show them (token redacted,
// the proof decoded). A proof that cannot be signed fails the request: the
// token is never sent as Bearer instead.
func (h *HTTP) authHeaders(req *http.Request, u *url.URL) ([]string, error) {
	if h.auth == nil {
		return nil, nil
	}
	c, err := h.auth.Credential(req.Method, u)
	if err != nil || c.Token == "" {
		return nil, err
	}
	req.Header.Set("Authorization", c.Scheme+" "+c.Token)
	shown := []string{"> Authorization: " + c.Scheme + " " + Redacted}
	if c.Proof != nil {
		req.Header.Set("DPoP", c.Proof.JWS)
		shown = append(shown, "> DPoP: "+c.Proof.Shown())
	}
	return shown, nil
}

// keepNonce keeps the DPoP-Nonce of an answer from u.
func (h *HTTP) keepNonce(u *url.URL, resp *http.Response) bool {
	return h.auth != nil && h.auth.KeepNonce(u, resp.Header.Get("DPoP-Nonce"))
}
