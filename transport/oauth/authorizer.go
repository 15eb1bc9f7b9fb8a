package oauth

import (
	"context"
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
	// OnSecret, if set, is told every secret the flow learns (access and
	// refresh tokens, a registered client secret) before it is used, so
	// that captures can redact it.
	OnSecret func(secret string)
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
	// "token" or "refresh".
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

	mu      sync.Mutex // guards access, refresh and grant
	access  string
	refresh string
	grant   grant // of the last flow that got a token
}

// grant is what a flow settled with the authorization server: how to reach
// and authenticate at its token endpoint, for which resource and scope.
type grant struct {
	as       *ServerMetadata
	issuer   string // the issuer asked about (and checked in as)
	clientID string
	// secret and method authenticate the client at the token endpoint:
	// Config.ClientSecret, or what registration returned.
	secret, method string
	resource       string
	scope          string // asked for by the flow
	redirect       string
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
		return f.refresh()
	}
	return f.run(d)
}

// keep stores the tokens of a flow or refresh that worked; an empty
// refresh token keeps the one held.
func (a *Authorizer) keep(g grant, access, refresh string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.access, a.grant = access, g
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
