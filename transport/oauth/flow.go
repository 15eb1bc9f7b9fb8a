package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"

	netloop "github.com/sonde-mcp/sonde/internal/loopback"
	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
)

// flow is one authorization (or refresh) of an Authorizer: ctx bounds it
// (Config.Timeout), conn is the connection's context below which it runs.
type flow struct {
	a         *Authorizer
	conn, ctx context.Context
	secrets   []string // learnt or made by the flow, never in its errors
	dpop      string   // what grantNote adds when the tokens are DPoP-bound
}

// secret hands v to Config.OnSecret, and keeps it out of the flow's
// errors.
func (f *flow) secret(v string) {
	f.a.cfg.secret(v)
	if v != "" {
		f.secrets = append(f.secrets, v)
	}
}

// scrub replaces in err's message every secret the flow knows (what a
// hostile endpoint may echo in an error_description) by Redacted.
func (f *flow) scrub(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	cfg := f.a.cfg
	for _, s := range append(f.secrets, cfg.ClientSecret, cfg.IDAssertion, cfg.IdPClientSecret) {
		if len(s) >= 4 {
			e.Msg = strings.ReplaceAll(e.Msg, s, httpshow.Redacted)
		}
	}
	return err
}

// run runs the authorization code flow with PKCE, step by step, and keeps
// the tokens it gets.
func (f *flow) run(d *Discovery) error {
	g, err := f.discover(d)
	if err != nil {
		return err
	}
	f.secret(f.a.cfg.ClientSecret)
	switch f.a.cfg.grantOf() {
	case GrantClientCredentials:
		return f.clientCredentials(g)
	case GrantCrossAppAccess:
		return f.crossAppAccess(g)
	}
	lb, err := listenLoopback()
	if err != nil {
		return err
	}
	defer lb.close()
	g.redirect = lb.redirect
	if err := f.register(&g); err != nil {
		return err
	}
	f.grantNote("authorization code with PKCE (the default grant: a user signs in in a browser); " + g.why)
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	code, err := f.authorize(lb, g, verifier, state)
	if err != nil {
		return err
	}
	return f.exchange(g, code, verifier)
}

// discover settles, from what discovery found, the authorization server
// to use (or the 2025-03-26 default endpoints when nothing was found), and
// the resource and scope to ask for. It refuses a server without PKCE S256
// and metadata that names another resource.
func (f *flow) discover(d *Discovery) (grant, error) {
	server := f.a.server
	if d != nil && d.PRM == nil && d.AS == nil && f.ctx.Err() == nil {
		// No metadata anywhere: a 2025-03-26 server, its own authorization
		// server, has the default endpoints at the root of its origin
		// (that revision's fallback), and PKCE was required there.
		origin := server.Scheme + "://" + server.Host
		b := *d
		b.AS = &ServerMetadata{Issuer: origin, AuthorizationEndpoint: origin + "/authorize", TokenEndpoint: origin + "/token",
			RegistrationEndpoint: origin + "/register", CodeChallengeMethods: []string{"S256"}}
		d = &b
		f.a.note(Event{Stream: StreamFlow, URL: origin, Note: "no protected resource or authorization server metadata: using the 2025-03-26 default endpoints /authorize, /token and /register of " + origin})
	}
	if d == nil || d.AS == nil {
		msg := "no authorization server metadata was found"
		if d != nil {
			msg += " (" + d.Summary() + ")"
		}
		return grant{}, &Error{Step: "discovery", Msg: msg}
	}
	as := d.AS
	// RFC 8414 §3.3: metadata whose issuer is not the one asked about
	// must not be used (its endpoints are anybody's).
	issuer := wantIssuer(d, server)
	if strings.TrimSuffix(as.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
		return grant{}, &Error{Step: "discovery", Msg: fmt.Sprintf("the authorization server metadata at %s names issuer %s, not %s: refusing to use it (RFC 8414 §3.3)", orNone(d.ASURL), orNone(as.Issuer), issuer)}
	}
	endpoints := []struct{ name, v string }{{"token_endpoint", as.TokenEndpoint}}
	if f.a.cfg.grantOf() == GrantAuthorizationCode {
		// PKCE and the authorization endpoint are the code grant's; the
		// other grants only POST to the token endpoint.
		if !as.S256() {
			return grant{}, &Error{Step: "pkce", Msg: "the authorization server metadata lacks S256 in code_challenge_methods_supported: refusing to proceed (MCP requires PKCE with S256)", Err: ErrNoS256}
		}
		if as.AuthorizationEndpoint == "" || as.TokenEndpoint == "" {
			return grant{}, &Error{Step: "discovery", Msg: "the authorization server metadata lacks authorization_endpoint or token_endpoint"}
		}
		endpoints = append([]struct{ name, v string }{{"authorization_endpoint", as.AuthorizationEndpoint}}, endpoints...)
	} else if as.TokenEndpoint == "" {
		return grant{}, &Error{Step: "discovery", Msg: "the authorization server metadata lacks token_endpoint"}
	}
	for _, ep := range endpoints {
		if why := insecureEndpoint(ep.v); why != "" {
			return grant{}, &Error{Step: "discovery", Msg: fmt.Sprintf("the authorization server's %s %s %s: refusing to proceed", ep.name, ep.v, why)}
		}
	}
	g := grant{as: as, issuer: issuer, resource: server.Scheme + "://" + server.Host + server.EscapedPath(), scope: d.Scope}
	if d.PRM != nil && d.PRM.Resource != "" {
		if !resourceMatches(d.PRM.Resource, server) {
			return grant{}, &Error{Step: "discovery", Msg: fmt.Sprintf("the protected resource metadata names resource %s, not this server (%s): refusing to authorize for it", d.PRM.Resource, server.Redacted())}
		}
		g.resource = d.PRM.Resource
	}
	if g.scope == "" && d.PRM != nil {
		g.scope = strings.Join(d.PRM.ScopesSupported, " ")
	}
	return g, f.settleDPoP(&g)
}

// authorize sends the user (or, with BrowserFetch, a GET) to the
// authorization endpoint and returns the code that comes back to the
// loopback listener, once the answer's state and issuer are checked.
func (f *flow) authorize(lb *loopback, g grant, verifier, state string) (string, error) {
	if _, err := url.Parse(g.as.AuthorizationEndpoint); err != nil {
		return "", &Error{Step: "authorization", Msg: "bad authorization_endpoint: " + err.Error(), Err: err}
	}
	authURL := g.config().AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", g.resource))
	f.a.note(Event{Stream: StreamFlow, URL: g.as.AuthorizationEndpoint, Note: fmt.Sprintf("authorization: client %s, redirect %s, resource %s, scope %s; waiting for the redirect", g.clientID, g.redirect, g.resource, orNone(g.scope))})
	fetchErr := make(chan error, 1)
	switch f.a.cfg.Browser {
	case BrowserFetch:
		go func() { fetchErr <- f.fetchAuthorization(authURL) }()
	default:
		if f.a.cfg.Prompt != nil {
			f.a.cfg.Prompt(authURL)
		}
	}
	cb, err := f.await(lb, fetchErr)
	if err != nil {
		return "", err
	}
	return checkCallback(cb, state, g.issuer)
}

// await waits for the authorization response at the loopback listener (or
// the failure of the fetch that should bring it).
func (f *flow) await(lb *loopback, fetchErr chan error) (url.Values, error) {
	for {
		select {
		case cb := <-lb.got:
			return cb, nil
		case err := <-fetchErr:
			if err != nil {
				return nil, &Error{Step: "authorization", Msg: "--oauth-browser fetch: " + err.Error(), Err: err}
			}
			fetchErr = nil // done without error: the callback is in got, or comes
		case <-f.ctx.Done():
			if f.conn.Err() != nil {
				return nil, &Error{Step: "authorization", Msg: "the connection closed while waiting for the authorization", Err: f.ctx.Err()}
			}
			return nil, &Error{Step: "authorization", Msg: "no authorization response came back to " + lb.redirect + " in time", Err: f.ctx.Err()}
		}
	}
}

// wantIssuer is the issuer the flow may deal with: the authorization
// server the protected resource metadata names first. Without one, a
// 2025-03-26 server is its own authorization server: the issuer its own
// metadata (found at the root of its origin, as that revision has it)
// names, which no one else chose, or else its origin.
func wantIssuer(d *Discovery, server *url.URL) string {
	switch {
	case d.PRM != nil && len(d.PRM.AuthorizationServers) > 0:
		return d.PRM.AuthorizationServers[0]
	case d.LegacyAS && d.AS != nil && d.AS.Issuer != "":
		return d.AS.Issuer
	}
	return server.Scheme + "://" + server.Host
}

// insecureEndpoint says why an endpoint of the authorization server may
// not be used: it is not an absolute https URL (plain http is allowed on
// loopback hosts: 127.0.0.0/8, ::1, localhost). It returns "" for one
// that may.
func insecureEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "is not an absolute URL"
	}
	switch {
	case strings.EqualFold(u.Scheme, "https"):
		return ""
	case strings.EqualFold(u.Scheme, "http") && netloop.Host(u.Hostname()):
		return ""
	}
	return "is not https: the flow's secrets would travel in clear (plain http is allowed on loopback hosts only)"
}

// checkCallback checks an authorization response (its state, its issuer
// by RFC 9207 against the issuer discovery asked about, an error) and
// returns its code.
func checkCallback(cb url.Values, state, issuer string) (string, error) {
	switch {
	case cb.Get("state") != state:
		return "", &Error{Step: "authorization", Msg: "the authorization response's state does not match the request's: refused"}
	case cb.Get("iss") != "" && strings.TrimSuffix(cb.Get("iss"), "/") != strings.TrimSuffix(issuer, "/"):
		return "", &Error{Step: "authorization", Msg: fmt.Sprintf("the authorization response's iss %q is not the issuer %q (RFC 9207): refused", cb.Get("iss"), issuer)}
	case cb.Get("error") != "":
		return "", &Error{Step: "authorization", Msg: fmt.Sprintf("the authorization server answered %s: %s", cb.Get("error"), cb.Get("error_description"))}
	case cb.Get("code") == "":
		return "", &Error{Step: "authorization", Msg: "the authorization response has no code"}
	}
	return cb.Get("code"), nil
}

// fetchAuthorization GETs the authorization URL and follows its redirects
// (to the loopback listener, where the flow reads the answer).
func (f *flow) fetchAuthorization(authURL string) error {
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := f.a.hc.Do(req)
	if err != nil {
		return httpshow.URLError(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, httpshow.ErrorBodyBytes))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s ended with HTTP %d: %s", resp.Request.URL.Redacted(), resp.StatusCode, httpshow.Body(b))
	}
	if resp.Request.URL.Hostname() != "127.0.0.1" {
		return fmt.Errorf("GET ended at %s (HTTP %d), not at the loopback redirect: the authorization server wants a login page; authorize without --oauth-browser fetch", resp.Request.URL.Redacted(), resp.StatusCode)
	}
	return nil
}
