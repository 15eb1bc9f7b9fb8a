package oauth

import (
	"context"
	"crypto"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The OAuth 2.1 authorization code flow with PKCE (MCP authorization,
// 2025-11-25), run when the transport has a Config and the server answers
// 401: discovery names the authorization server; sonde registers itself
// there (RFC 7591) unless given a client id, sends the user to the
// authorization endpoint with a loopback redirect URI, exchanges the code
// for tokens, and the transport sends the access token on every later
// request. Tokens live in memory only, and are never shown.

// DefaultTimeout bounds a whole authorization (the user's visit to the
// authorization URL included).
const DefaultTimeout = 5 * time.Minute

// Browser says how the authorization URL is visited.
type Browser string

// The ways to visit the authorization URL.
const (
	// BrowserPrint hands the URL to Config.Prompt (the CLI prints it) and
	// waits for the user's browser to come back to the loopback redirect
	// URI. sonde never opens a browser itself.
	BrowserPrint Browser = "print"
	// BrowserFetch GETs the URL and follows its redirects to the loopback
	// listener: for authorization servers that grant without a login page
	// (tests, automation).
	BrowserFetch Browser = "fetch"
)

// Config turns on the OAuth flow.
type Config struct {
	// ClientID is a client registered beforehand; empty means dynamic
	// client registration at the authorization server's registration
	// endpoint.
	ClientID string
	// ClientSecret, with ClientID, authenticates sonde at the token
	// endpoint (client_secret_basic or client_secret_post, as the metadata
	// allows). It is never shown.
	ClientSecret string
	// Browser is BrowserPrint (the default) or BrowserFetch.
	Browser Browser
	// Timeout bounds one authorization; zero means DefaultTimeout.
	Timeout time.Duration
	// Prompt receives the authorization URL to visit (BrowserPrint). Nil
	// means nobody can visit it: the flow waits for the timeout.
	Prompt func(authURL string)
	// OnGrant, if set, is told at each authorization, before Prompt, which
	// grant runs and why, in one line (see Grant and ClientID).
	OnGrant func(grant string)
	// OnSecret, if set, is told every secret the flow learns or makes
	// (access and refresh tokens, a registered client secret, the client
	// assertions it signs, the identity assertion and the ID-JAG of
	// cross-app access) before it is used, so that captures can redact it.
	OnSecret func(secret string)

	// Grant is how sonde gets its token: GrantAuthorizationCode (the
	// default, also for ""), GrantClientCredentials or GrantCrossAppAccess.
	Grant Grant
	// PrivateKey, if set, authenticates the client at the token endpoint
	// with private_key_jwt (RFC 7523): a client assertion signed with it
	// for each token request (ParsePrivateKey reads one). It needs
	// ClientID, and excludes ClientSecret.
	PrivateKey crypto.Signer
	// AssertionAudience is the aud of the client assertions signed with
	// PrivateKey: AudienceIssuer (the default, also for "") or
	// AudienceTokenEndpoint, for authorization servers that want RFC 7523's
	// older reading.
	AssertionAudience Audience
	// IDAssertion is the identity assertion of GrantCrossAppAccess: an
	// OpenID Connect ID token (a JWT), or else a SAML 2.0 assertion
	// (base64url), issued to sonde by the identity provider.
	IDAssertion string
	// IdPTokenEndpoint is the identity provider's token endpoint, where
	// GrantCrossAppAccess exchanges IDAssertion for an ID-JAG (RFC 8693).
	IdPTokenEndpoint string
	// IdPClientID and IdPClientSecret are sonde's client at the identity
	// provider (the secret optional: client_secret_basic when set).
	IdPClientID, IdPClientSecret string
	// DPoP says when sonde binds its tokens to a key with DPoP proofs
	// (dpop.go): DPoPAuto (the default, also for ""), DPoPAlways or
	// DPoPNever.
	DPoP DPoPMode
}

// Grant names how sonde gets an access token.
type Grant string

// The grants.
const (
	// GrantAuthorizationCode is the authorization code flow with PKCE and
	// a loopback redirect: a user signs in.
	GrantAuthorizationCode Grant = "authorization-code"
	// GrantClientCredentials is the client credentials grant (OAuth 2.1
	// §4.2; the MCP client credentials extension, SEP-1046): a machine
	// client authenticates with its secret or a private key, no user.
	GrantClientCredentials Grant = "client-credentials"
	// GrantCrossAppAccess is enterprise-managed authorization (SEP-990):
	// the identity assertion exchanged at the identity provider for an
	// ID-JAG (RFC 8693 token exchange), which the authorization server
	// takes with the JWT bearer grant (RFC 7523).
	GrantCrossAppAccess Grant = "cross-app-access"
)

// Audience names the aud of a private_key_jwt client assertion.
type Audience string

// The audiences of client assertions.
const (
	// AudienceIssuer is the authorization server's issuer identifier
	// (draft-ietf-oauth-rfc7523bis; what the MCP conformance suite checks).
	AudienceIssuer Audience = "issuer"
	// AudienceTokenEndpoint is the token endpoint's URL (RFC 7523 §3
	// allows it; some authorization servers require it).
	AudienceTokenEndpoint Audience = "token-endpoint"
)

// Grants lists the grants, the default first.
var Grants = []Grant{GrantAuthorizationCode, GrantClientCredentials, GrantCrossAppAccess}

// DefaultClientMetadataURL is the client id sonde uses, when it is given
// none, with an authorization server that supports Client ID Metadata
// Documents (client_id_metadata_document_supported) and offers no dynamic
// registration (with one, sonde registers): the URL of sonde's
// client metadata document (docs/client-metadata.json in sonde's
// repository, published with the project's pages). The document names this
// URL as its client_id, a public client (token_endpoint_auth_method none)
// with the authorization_code and refresh_token grants, and the redirect
// URI http://127.0.0.1/callback, whose port the authorization server must
// let vary (RFC 8252 §7.3: sonde listens on a free port).
const DefaultClientMetadataURL = "https://sonde-mcp.github.io/sonde/client-metadata.json"

// grantOf is cfg's grant, GrantAuthorizationCode for "".
func (c *Config) grantOf() Grant {
	if c.Grant == "" {
		return GrantAuthorizationCode
	}
	return c.Grant
}

// secret hands v to OnSecret.
func (c *Config) secret(v string) {
	if c.OnSecret != nil && v != "" {
		c.OnSecret(v)
	}
}

// Error is a failed authorization: the step that failed and why.
type Error struct {
	// Step is "discovery", "pkce", "registration", "authorization",
	// "assertion" (a client assertion, or the identity assertion of
	// cross-app access, that sonde cannot sign or use), "token-exchange"
	// (cross-app access at the identity provider), "token" or "refresh".
	Step string
	Msg  string
	Err  error
}

// Error returns the message.
func (e *Error) Error() string { return "OAuth " + e.Step + ": " + e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrNoS256 is the cause of the Error when the authorization server does
// not list S256 in code_challenge_methods_supported.
var ErrNoS256 = errors.New("the authorization server does not support PKCE S256")

// Authorizer holds one connection's authorization: the tokens and what a
// refresh or a step-up needs, under one lock. It runs one flow or refresh
// at a time; a refusal that comes while another got a token just uses it.
type Authorizer struct {
	cfg    *Config
	server *url.URL
	hc     *http.Client // follows redirects (--oauth-browser fetch)
	post   *http.Client // hc following none: registration and token requests
	note   func(Event)
	turn   chan struct{} // holds a token while a flow or refresh runs

	mu      sync.Mutex // guards access, refresh, grant, bound and key
	access  string
	refresh string
	grant   grant // of the last flow that got a token
	bound   bool  // access came back DPoP-bound (token_type DPoP)
	key     *dpopKey
}

// grant is what a flow settled with the authorization server: how to reach
// and authenticate at its token endpoint, for which resource and scope.
type grant struct {
	as       *ServerMetadata
	issuer   string // the issuer asked about (and checked in as)
	clientID string
	// secret and method authenticate the client at the token endpoint:
	// Config.ClientSecret, or what registration returned; with
	// Config.PrivateKey, method is private_key_jwt.
	secret, method string
	// why says how the client id was chosen (Config.ClientID, a client
	// metadata document, dynamic registration) and why.
	why      string
	resource string
	scope    string // asked for by the flow
	redirect string
	dpop     bool // token requests carry a DPoP proof
}

// NewAuthorizer prepares the flow for the MCP server at server, sending
// its requests through hc (discovery's client: the connection's) and its
// events to note.
func NewAuthorizer(cfg *Config, server *url.URL, hc *http.Client, note func(Event)) *Authorizer {
	post := *hc
	post.CheckRedirect = noRedirect
	return &Authorizer{cfg: cfg, server: server, hc: hc, post: &post, note: note, turn: make(chan struct{}, 1)}
}

// noRedirect makes a client return a redirect as the answer: the flow's
// POSTs carry the code, the PKCE verifier or a client secret in their
// body, which a 307 or 308 would carry to wherever it points.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Token returns the access token to send ("" before the first flow).
func (a *Authorizer) Token() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.access
}

// Authorize runs after a 401 (or, with stepUp, a 403 with
// error="insufficient_scope") to a request that carried access token sent
// ("" when it carried none); d is what discovery found (nil when it did
// not run). It returns nil when a new token is in place and the request
// should be sent again: another request's flow got one, a refresh worked,
// or a full flow ran (for a step-up, with the challenge's scope added to
// the one granted before). Otherwise it returns an *Error. conn is the
// connection's context: its end stops the flow; Config.Timeout bounds it.
func (a *Authorizer) Authorize(conn context.Context, sent string, d *Discovery, stepUp bool) error {
	select {
	case a.turn <- struct{}{}:
		defer func() { <-a.turn }()
	case <-conn.Done():
		return &Error{Step: "authorization", Msg: "the connection closed while waiting for the authorization", Err: conn.Err()}
	}
	if cur := a.Token(); cur != sent && cur != "" {
		return nil
	}
	timeout := a.cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(conn, timeout)
	defer cancel()
	f := &flow{a: a, conn: conn, ctx: ctx}
	return f.scrub(f.dispatch(d, sent, stepUp))
}

// dispatch runs what a refusal calls for: the grant again with the scope
// widened (a step-up), a refresh (or, for a machine grant without a
// refresh token, the grant again) after a refused token, the grant
// otherwise.
func (f *flow) dispatch(d *Discovery, sent string, stepUp bool) error {
	a := f.a
	switch {
	case stepUp:
		a.mu.Lock()
		scope := a.grant.scope
		a.mu.Unlock()
		if d != nil && scope != "" {
			b := *d
			b.Scope = unionScopes(scope, d.Scope)
			d = &b
		}
		return f.run(d)
	case sent != "":
		a.mu.Lock()
		rt := a.refresh
		a.mu.Unlock()
		if rt == "" && a.cfg.grantOf() != GrantAuthorizationCode {
			// A machine grant needs no user: it just runs again.
			return f.run(d)
		}
		return f.refresh()
	}
	return f.run(d)
}

// keep stores the tokens of a flow or refresh that worked; an empty
// refresh token keeps the one held.
func (a *Authorizer) keep(g grant, access, refresh string, bound bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.access, a.grant, a.bound = access, g, bound
	if refresh != "" {
		a.refresh = refresh
	}
}

// unionScopes joins two space-separated scope lists, without repeats.
func unionScopes(a, b string) string {
	out := strings.Fields(a)
	for _, s := range strings.Fields(b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}
