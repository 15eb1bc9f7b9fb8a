package transport

import (
	"context"
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

// The names of transport/oauth that the transport's API shows
// (ExchangeError.Auth, HTTPConfig.OAuth, ExchangeError.Err after a failed
// flow), under the names they had here.
type (
	// AuthDiscovery is what discovery found after a refusal.
	AuthDiscovery = oauth.Discovery
	// AuthProblem is one failure of discovery.
	AuthProblem = oauth.Problem
	// OAuthConfig turns on the OAuth flow.
	OAuthConfig = oauth.Config
	// OAuthBrowser says how the authorization URL is visited.
	OAuthBrowser = oauth.Browser
	// OAuthError is a failed authorization: the step that failed and why.
	OAuthError = oauth.Error
	// OAuthGrant names how the OAuth flow gets its token.
	OAuthGrant = oauth.Grant
	// OAuthAudience names the aud of private_key_jwt client assertions.
	OAuthAudience = oauth.Audience
)

// The OAuth grants, and the client id sonde uses where the authorization
// server supports client ID metadata documents (transport/oauth).
const (
	GrantAuthorizationCode   = oauth.GrantAuthorizationCode
	GrantClientCredentials   = oauth.GrantClientCredentials
	GrantCrossAppAccess      = oauth.GrantCrossAppAccess
	DefaultClientMetadataURL = oauth.DefaultClientMetadataURL
	AudienceIssuer           = oauth.AudienceIssuer
	AudienceTokenEndpoint    = oauth.AudienceTokenEndpoint
)

// ParseOAuthPrivateKey reads the PEM private key of private_key_jwt
// (oauth.ParsePrivateKey).
var ParseOAuthPrivateKey = oauth.ParsePrivateKey

// CheckClientMetadataURL says what makes an https client id unusable as
// a client metadata document's URL (oauth.CheckClientMetadataURL).
var CheckClientMetadataURL = oauth.CheckClientMetadataURL

// The ways to visit the authorization URL, and the default bound of one
// authorization (transport/oauth).
const (
	BrowserPrint        = oauth.BrowserPrint
	BrowserFetch        = oauth.BrowserFetch
	DefaultOAuthTimeout = oauth.DefaultTimeout
)

// ErrNoS256 is the cause of the OAuthError when the authorization server
// does not list S256 in code_challenge_methods_supported.
var ErrNoS256 = oauth.ErrNoS256

// ErrOAuthKeyType is the cause of the OAuthError (step "assertion") for a
// private key sonde cannot sign client assertions with.
var ErrOAuthKeyType = oauth.ErrKeyType

// ErrOAuthExpired is the cause of the OAuthError for an identity
// assertion, or an ID-JAG, past its exp.
var ErrOAuthExpired = oauth.ErrExpired

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
func (h *HTTP) authorize(sent string, d *AuthDiscovery, stepUp bool) error {
	return h.auth.Authorize(h.ctx, sent, d, stepUp)
}

// discoverAuth runs discovery for a refusal of request id (invalid for
// the legacy GET) with WWW-Authenticate challenge; its GETs are events
// with the request's id.
func (h *HTTP) discoverAuth(status int, challenge string, id jsonrpc.ID) *AuthDiscovery {
	return h.disc.Discover(h.ctx, status, challenge, func(ev oauth.Event) { h.noteAuth(ev, id) })
}

// noteAuth shows an event of transport/oauth as an HTTP event of request
// id.
func (h *HTTP) noteAuth(ev oauth.Event, id jsonrpc.ID) {
	h.note(HTTPEvent{Method: ev.Method, URL: ev.URL, Status: ev.Status, Header: ev.Header, Duration: ev.Duration,
		Stream: ev.Stream, ReqID: id, Raw: ev.Raw, Note: ev.Note})
}
