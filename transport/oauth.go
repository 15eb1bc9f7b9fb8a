package transport

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The OAuth 2.1 authorization code flow with PKCE (MCP authorization,
// 2025-11-25), run when HTTPConfig.OAuth is set and the server answers 401:
// discovery (auth.go) names the authorization server; sonde registers
// itself there (RFC 7591) unless given a client id, sends the user to the
// authorization endpoint with a loopback redirect URI, exchanges the code
// for tokens, and sends the access token on every later request. Tokens
// live in memory only, and are never shown.

// DefaultOAuthTimeout bounds a whole authorization (the user's visit to
// the authorization URL included).
const DefaultOAuthTimeout = 5 * time.Minute

// oauthStream is the stream name of the flow's HTTP events.
const oauthStream = "oauth"

// OAuthBrowser says how the authorization URL is visited.
type OAuthBrowser string

// The ways to visit the authorization URL.
const (
	// BrowserPrint hands the URL to OAuthConfig.Prompt (the CLI prints it)
	// and waits for the user's browser to come back to the loopback
	// redirect URI. sonde never opens a browser itself.
	BrowserPrint OAuthBrowser = "print"
	// BrowserFetch GETs the URL and follows its redirects to the loopback
	// listener: for authorization servers that grant without a login page
	// (tests, automation).
	BrowserFetch OAuthBrowser = "fetch"
)

// OAuthConfig turns on the OAuth flow.
type OAuthConfig struct {
	// ClientID is a client registered beforehand; empty means dynamic
	// client registration at the authorization server's registration
	// endpoint.
	ClientID string
	// ClientSecret, with ClientID, authenticates sonde at the token
	// endpoint (client_secret_basic or client_secret_post, as the metadata
	// allows). It is never shown.
	ClientSecret string
	// Browser is BrowserPrint (the default) or BrowserFetch.
	Browser OAuthBrowser
	// Timeout bounds one authorization; zero means DefaultOAuthTimeout.
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
func (c *OAuthConfig) secret(v string) {
	if c.OnSecret != nil && v != "" {
		c.OnSecret(v)
	}
}

// OAuthError is a failed authorization: the step that failed and why.
// ExchangeError.Err holds it when the 401 that started the flow stands.
type OAuthError struct {
	// Step is "discovery", "pkce", "registration", "authorization",
	// "token" or "refresh".
	Step string
	Msg  string
	Err  error
}

// Error returns the message.
func (e *OAuthError) Error() string { return "OAuth " + e.Step + ": " + e.Msg }

// Unwrap returns the cause.
func (e *OAuthError) Unwrap() error { return e.Err }

// ErrNoS256 is the cause of the OAuthError when the authorization server
// does not list S256 in code_challenge_methods_supported.
var ErrNoS256 = errors.New("the authorization server does not support PKCE S256")

// oauthTokens is what a connection holds of its authorization.
type oauthTokens struct {
	mu      sync.Mutex // held during a flow or a refresh: one at a time
	access  string
	refresh string
	// How to refresh: the token endpoint, client and resource of the flow.
	tokenURL, clientID, resource string
	as                           *AuthServerMetadata
	// secret and method authenticate the client at the token endpoint:
	// OAuthConfig.ClientSecret, or what registration returned.
	secret, method string
	// scope is the scope asked for by the last flow.
	scope string
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

// bearer returns the access token (empty before the flow).
func (h *HTTP) bearer() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.accessToken
}

// authorizeAfter runs after a 401 (or, with stepUp, a 403 with
// error="insufficient_scope") to a request that carried access token sent
// (empty when it carried none). It reports nil when a new token is in place
// and the request should be sent again: another request's flow got one, a
// refresh worked, or a full flow ran (for a step-up, with the challenge's
// scope added to the one granted before).
func (h *HTTP) authorizeAfter(sent string, a *AuthDiscovery, stepUp bool) error {
	t := &h.oauth
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur := h.bearer(); cur != sent && cur != "" {
		return nil
	}
	timeout := h.cfg.OAuth.Timeout
	if timeout <= 0 {
		timeout = DefaultOAuthTimeout
	}
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	defer cancel()
	if stepUp {
		if a != nil && t.scope != "" {
			b := *a
			b.Scope = unionScopes(t.scope, a.Scope)
			a = &b
		}
		return h.runFlow(ctx, a)
	}
	if sent != "" {
		if t.refresh == "" {
			return &OAuthError{Step: "refresh", Msg: "the server refused the access token and there is no refresh token"}
		}
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.refresh}, "client_id": {t.clientID}, "resource": {t.resource}}
		t.refresh = "" // refresh once
		return h.tokenRequest(ctx, "refresh", t.as, t.tokenURL, form)
	}
	return h.runFlow(ctx, a)
}

// runFlow runs the authorization code flow with PKCE.
func (h *HTTP) runFlow(ctx context.Context, a *AuthDiscovery) error {
	if a != nil && a.PRM == nil && a.AS == nil && ctx.Err() == nil {
		// No metadata anywhere: a 2025-03-26 server, its own authorization
		// server, has the default endpoints at the root of its origin
		// (that revision's fallback), and PKCE was required there.
		origin := h.url.Scheme + "://" + h.url.Host
		b := *a
		b.AS = &AuthServerMetadata{Issuer: origin, AuthorizationEndpoint: origin + "/authorize", TokenEndpoint: origin + "/token",
			RegistrationEndpoint: origin + "/register", CodeChallengeMethods: []string{"S256"}}
		a = &b
		h.note(HTTPEvent{Stream: oauthStream, URL: origin, Note: "no protected resource or authorization server metadata: using the 2025-03-26 default endpoints /authorize, /token and /register of " + origin})
	}
	if a == nil || a.AS == nil {
		msg := "no authorization server metadata was found"
		if a != nil {
			msg += " (" + a.Summary() + ")"
		}
		return &OAuthError{Step: "discovery", Msg: msg}
	}
	as := a.AS
	if !as.S256() {
		return &OAuthError{Step: "pkce", Msg: "the authorization server metadata lacks S256 in code_challenge_methods_supported: refusing to proceed (MCP requires PKCE with S256)", Err: ErrNoS256}
	}
	if as.AuthorizationEndpoint == "" || as.TokenEndpoint == "" {
		return &OAuthError{Step: "discovery", Msg: "the authorization server metadata lacks authorization_endpoint or token_endpoint"}
	}
	resource := h.url.Scheme + "://" + h.url.Host + h.url.EscapedPath()
	if a.PRM != nil && a.PRM.Resource != "" {
		if !resourceMatches(a.PRM.Resource, h.url) {
			return &OAuthError{Step: "discovery", Msg: fmt.Sprintf("the protected resource metadata names resource %s, not this server (%s): refusing to authorize for it", a.PRM.Resource, h.url.Redacted())}
		}
		resource = a.PRM.Resource
	}
	scope := a.Scope
	if scope == "" && a.PRM != nil {
		scope = strings.Join(a.PRM.ScopesSupported, " ")
	}

	// The loopback listener that receives the redirect.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return &OAuthError{Step: "authorization", Msg: "cannot listen on 127.0.0.1 for the redirect: " + err.Error(), Err: err}
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	got := make(chan url.Values, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case got <- r.URL.Query():
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "sonde: authorization received; you may close this page.\n")
		default:
			http.Error(w, "sonde: an authorization response already arrived", http.StatusConflict)
		}
	})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	defer func() {
		_ = srv.Close()
		<-served
	}()

	t := &h.oauth
	clientID := h.cfg.OAuth.ClientID
	t.secret, t.method = h.cfg.OAuth.ClientSecret, ""
	if clientID == "" {
		if clientID, err = h.registerClient(ctx, as, redirect); err != nil {
			return err
		}
	}
	verifier := randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	state := randomString(16)
	au, err := url.Parse(as.AuthorizationEndpoint)
	if err != nil {
		return &OAuthError{Step: "authorization", Msg: "bad authorization_endpoint: " + err.Error(), Err: err}
	}
	q := au.Query()
	q.Set("response_type", "code")
	q.Set("client_id", clientID)
	q.Set("redirect_uri", redirect)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	q.Set("resource", resource)
	if scope != "" {
		q.Set("scope", scope)
	}
	au.RawQuery = q.Encode()
	authURL := au.String()
	h.note(HTTPEvent{Stream: oauthStream, URL: as.AuthorizationEndpoint, Note: fmt.Sprintf("authorization: client %s, redirect %s, resource %s, scope %s; waiting for the redirect", clientID, redirect, resource, orNone(scope))})

	fetchErr := make(chan error, 1)
	switch h.cfg.OAuth.Browser {
	case BrowserFetch:
		go func() { fetchErr <- h.fetchAuthorization(ctx, authURL) }()
	default:
		if h.cfg.OAuth.Prompt != nil {
			h.cfg.OAuth.Prompt(authURL)
		}
	}
	var cb url.Values
	for cb == nil {
		select {
		case cb = <-got:
		case err := <-fetchErr:
			if err != nil {
				return &OAuthError{Step: "authorization", Msg: "--oauth-browser fetch: " + err.Error(), Err: err}
			}
			fetchErr = nil // done without error: the callback is in got, or comes
		case <-ctx.Done():
			if h.ctx.Err() != nil {
				return &OAuthError{Step: "authorization", Msg: "the connection closed while waiting for the authorization", Err: ctx.Err()}
			}
			return &OAuthError{Step: "authorization", Msg: "no authorization response came back to " + redirect + " in time", Err: ctx.Err()}
		}
	}
	switch {
	case cb.Get("state") != state:
		return &OAuthError{Step: "authorization", Msg: "the authorization response's state does not match the request's: refused"}
	case cb.Get("iss") != "" && cb.Get("iss") != as.Issuer:
		return &OAuthError{Step: "authorization", Msg: fmt.Sprintf("the authorization response's iss %q is not the issuer %q (RFC 9207): refused", cb.Get("iss"), as.Issuer)}
	case cb.Get("error") != "":
		return &OAuthError{Step: "authorization", Msg: fmt.Sprintf("the authorization server answered %s: %s", cb.Get("error"), cb.Get("error_description"))}
	case cb.Get("code") == "":
		return &OAuthError{Step: "authorization", Msg: "the authorization response has no code"}
	}
	t.tokenURL, t.clientID, t.resource, t.as, t.scope = as.TokenEndpoint, clientID, resource, as, scope
	form := url.Values{"grant_type": {"authorization_code"}, "code": {cb.Get("code")}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier}, "resource": {resource}}
	return h.tokenRequest(ctx, "token", as, as.TokenEndpoint, form)
}

// fetchAuthorization GETs the authorization URL and follows its redirects
// (to the loopback listener, where the flow reads the answer).
func (h *HTTP) fetchAuthorization(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return unwrapURLError(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s ended with HTTP %d: %s", resp.Request.URL.Redacted(), resp.StatusCode, shownBody(b))
	}
	if resp.Request.URL.Hostname() != "127.0.0.1" {
		return fmt.Errorf("GET ended at %s (HTTP %d), not at the loopback redirect: the authorization server wants a login page; authorize without --oauth-browser fetch", resp.Request.URL.Redacted(), resp.StatusCode)
	}
	return nil
}

// registerClient registers sonde at the registration endpoint (RFC 7591)
// and returns its client id.
func (h *HTTP) registerClient(ctx context.Context, as *AuthServerMetadata, redirect string) (string, error) {
	if as.RegistrationEndpoint == "" {
		return "", &OAuthError{Step: "registration", Msg: "the authorization server offers no dynamic registration (no registration_endpoint): register a client there and pass --oauth-client-id"}
	}
	// A public client ("none") unless the server takes only secrets.
	method := "none"
	if len(as.TokenAuthMethods) > 0 && !slices.Contains(as.TokenAuthMethods, "none") {
		method = "client_secret_basic"
		if !slices.Contains(as.TokenAuthMethods, method) && slices.Contains(as.TokenAuthMethods, "client_secret_post") {
			method = "client_secret_post"
		}
	}
	body, _ := json.Marshal(map[string]any{
		"redirect_uris": []string{redirect}, "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": method, "client_name": "sonde",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, strings.NewReader(string(body)))
	if err != nil {
		return "", &OAuthError{Step: "registration", Msg: err.Error(), Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Method       string `json:"token_endpoint_auth_method"`
	}
	if err := h.oauthExchange(req, "registration", &out); err != nil {
		return "", err
	}
	h.cfg.OAuth.secret(out.ClientSecret)
	h.oauth.secret, h.oauth.method = out.ClientSecret, out.Method
	if out.ClientID == "" {
		return "", &OAuthError{Step: "registration", Msg: "the registration response has no client_id"}
	}
	return out.ClientID, nil
}

// tokenRequest POSTs form to the token endpoint (with the client secret
// when there is one) and keeps the tokens it returns.
func (h *HTTP) tokenRequest(ctx context.Context, step string, as *AuthServerMetadata, tokenURL string, form url.Values) error {
	secret, method := h.oauth.secret, h.oauth.method
	if method == "" || method == "none" && secret != "" {
		// A given secret: basic, unless the metadata lists only post.
		method = "client_secret_basic"
		if len(as.TokenAuthMethods) > 0 && !slices.Contains(as.TokenAuthMethods, method) && slices.Contains(as.TokenAuthMethods, "client_secret_post") {
			method = "client_secret_post"
		}
	}
	basic := secret != "" && method == "client_secret_basic"
	if secret != "" && method == "client_secret_post" {
		form.Set("client_secret", secret)
	}
	clientID := form.Get("client_id")
	if basic {
		form.Del("client_id")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return &OAuthError{Step: step, Msg: err.Error(), Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	}
	var out struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := h.oauthExchange(req, step, &out); err != nil {
		return err
	}
	if out.AccessToken == "" {
		return &OAuthError{Step: step, Msg: "the token response has no access_token"}
	}
	h.cfg.OAuth.secret(out.AccessToken)
	h.cfg.OAuth.secret(out.RefreshToken)
	if out.TokenType != "" && !strings.EqualFold(out.TokenType, "Bearer") {
		return &OAuthError{Step: step, Msg: fmt.Sprintf("the token response has token_type %q, not Bearer", out.TokenType)}
	}
	h.mu.Lock()
	h.accessToken = out.AccessToken
	h.mu.Unlock()
	if out.RefreshToken != "" {
		h.oauth.refresh = out.RefreshToken
	}
	return nil
}

// oauthExchange sends req, reports it as an event (bodies are not shown:
// they hold tokens), and decodes a 2xx JSON answer into v.
func (h *HTTP) oauthExchange(req *http.Request, step string, v any) error {
	shown := req.URL.Redacted()
	ev := HTTPEvent{Method: req.Method, URL: shown, Stream: oauthStream, Header: []string{"> Content-Type: " + req.Header.Get("Content-Type")}}
	if req.Header.Get("Authorization") != "" {
		ev.Header = append(ev.Header, "> Authorization: Basic "+Redacted)
	}
	start := time.Now()
	resp, err := h.hc.Do(req)
	ev.Duration = time.Since(start)
	if err != nil {
		ev.Note = step + ": " + unwrapURLError(err).Error()
		h.note(ev)
		return &OAuthError{Step: step, Msg: fmt.Sprintf("%s %s: %v", req.Method, shown, unwrapURLError(err)), Err: err}
	}
	defer resp.Body.Close()
	ev.Status = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAuthBodyBytes))
	if err != nil {
		ev.Note = step + ": reading the body: " + err.Error()
		h.note(ev)
		return &OAuthError{Step: step, Msg: ev.Note, Err: err}
	}
	if resp.StatusCode/100 != 2 {
		var oe struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		msg := fmt.Sprintf("%s %s: HTTP %d", req.Method, shown, resp.StatusCode)
		if json.Unmarshal(body, &oe) == nil && oe.Error != "" {
			msg += ": " + oe.Error
			if oe.Description != "" {
				msg += " (" + oe.Description + ")"
			}
		}
		ev.Note = step + ": " + msg
		h.note(ev)
		return &OAuthError{Step: step, Msg: msg}
	}
	if err := json.Unmarshal(body, v); err != nil {
		ev.Note = step + ": the answer is not the JSON expected"
		h.note(ev)
		return &OAuthError{Step: step, Msg: fmt.Sprintf("%s %s: the answer is not the JSON expected: %v", req.Method, shown, err), Err: err}
	}
	ev.Note = step + ": ok"
	h.note(ev)
	return nil
}

// randomString returns n random bytes, base64url-encoded.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
