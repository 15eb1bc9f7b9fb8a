package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
)

// The token requests go through golang.org/x/oauth2 (the code exchange with
// the PKCE verifier, the refresh), over the connection's HTTP client and a
// tokenTransport that reports each one as an Event.

// config is the x/oauth2 configuration of g: its endpoints, its client
// and how the client authenticates at the token endpoint.
func (g grant) config() *oauth2.Config {
	style, secret := g.authStyle()
	return &oauth2.Config{
		ClientID:     g.clientID,
		ClientSecret: secret,
		Endpoint:     oauth2.Endpoint{AuthURL: g.as.AuthorizationEndpoint, TokenURL: g.as.TokenEndpoint, AuthStyle: style},
		RedirectURL:  g.redirect,
		Scopes:       strings.Fields(g.scope),
	}
}

// authStyle says how the client authenticates at the token endpoint, and
// with which secret: without a secret, its client_id in the form; with
// one, by the method registration returned, or else client_secret_basic
// unless the metadata lists only client_secret_post.
func (g grant) authStyle() (oauth2.AuthStyle, string) {
	if g.secret == "" {
		return oauth2.AuthStyleInParams, ""
	}
	method := g.method
	if method == "" || method == "none" {
		method = "client_secret_basic"
		if m := g.as.TokenAuthMethods; len(m) > 0 && !slices.Contains(m, method) && slices.Contains(m, "client_secret_post") {
			method = "client_secret_post"
		}
	}
	switch method {
	case "client_secret_basic":
		return oauth2.AuthStyleInHeader, g.secret
	case "client_secret_post":
		return oauth2.AuthStyleInParams, g.secret
	}
	return oauth2.AuthStyleInParams, ""
}

// exchange trades the code for tokens (with the PKCE verifier and the
// resource) and keeps them.
func (f *flow) exchange(g grant, code, verifier string) error {
	auth, err := f.clientAuth(g)
	if err != nil {
		return err
	}
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", g.resource)}
	for k, v := range auth {
		opts = append(opts, oauth2.SetAuthURLParam(k, v[0]))
	}
	tr := f.tokenTransport(nil)
	tok, err := g.config().Exchange(tr.context(f.ctx), code, opts...)
	return f.took("token", g, tr, tok, err)
}

// refresh spends the refresh token (once: it is dropped whatever happens)
// for a new access token for the last flow's resource.
func (f *flow) refresh() error {
	a := f.a
	a.mu.Lock()
	g, rt := a.grant, a.refresh
	a.refresh = ""
	a.mu.Unlock()
	f.secrets = append(f.secrets, rt)
	if rt == "" {
		return &Error{Step: "refresh", Msg: "the server refused the access token and there is no refresh token"}
	}
	// x/oauth2's refresh takes no extra parameters: tokenTransport adds
	// the resource (RFC 8707) to its form.
	add, err := f.clientAuth(g)
	if err != nil {
		return err
	}
	if add == nil {
		add = url.Values{}
	}
	add.Set("resource", g.resource)
	tr := f.tokenTransport(add)
	tok, err := g.config().TokenSource(tr.context(f.ctx), &oauth2.Token{RefreshToken: rt}).Token()
	return f.took("refresh", g, tr, tok, err)
}

// took checks the answer of a token request of step, reports it, and
// keeps the tokens it brought.
func (f *flow) took(step string, g grant, tr *tokenTransport, tok *oauth2.Token, err error) error {
	if err != nil {
		e, note := tr.failure(step, err)
		tr.ev.Note = note
		f.a.note(tr.ev)
		return e
	}
	tr.ev.Note = step + ": ok"
	f.a.note(tr.ev)
	// What the answer itself says: x/oauth2 puts the old refresh token in
	// a refresh's answer that has none.
	refresh, _ := tok.Extra("refresh_token").(string)
	f.secret(tok.AccessToken)
	f.secret(refresh)
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "Bearer") {
		return &Error{Step: step, Msg: fmt.Sprintf("the token response has token_type %q, not Bearer", tok.TokenType)}
	}
	f.a.keep(g, tok.AccessToken, refresh)
	return nil
}

// tokenTransport carries one token request of x/oauth2 through the
// connection's client: it adds form parameters x/oauth2 cannot, caps the
// answer at MaxBodyBytes, and records the exchange as an Event.
type tokenTransport struct {
	base http.RoundTripper
	hc   *http.Client
	add  url.Values
	ev   Event
	err  error // of the round trip
}

// tokenTransport returns a tokenTransport over the Authorizer's client
// that adds add to the request's form.
func (f *flow) tokenTransport(add url.Values) *tokenTransport {
	t := &tokenTransport{base: f.a.hc.Transport, add: add}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	hc := *f.a.post
	hc.Transport = t
	t.hc = &hc
	return t
}

// context is ctx with t's client for x/oauth2.
func (t *tokenTransport) context(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, t.hc)
}

// RoundTrip sends req (with t.add in its form) and records it.
func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.add) > 0 && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		form, err := url.ParseQuery(string(b))
		if err != nil {
			return nil, err
		}
		for k, v := range t.add {
			form[k] = v
		}
		body := form.Encode()
		req = req.Clone(req.Context())
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	}
	t.ev = Event{Method: req.Method, URL: req.URL.Redacted(), Stream: StreamFlow, Header: []string{"> Content-Type: " + req.Header.Get("Content-Type")}}
	if req.Header.Get("Authorization") != "" {
		t.ev.Header = append(t.ev.Header, "> Authorization: Basic "+httpshow.Redacted)
	}
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	t.ev.Duration, t.err = time.Since(start), err
	if err != nil {
		return nil, err
	}
	t.ev.Status = resp.StatusCode
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, MaxBodyBytes), resp.Body}
	return resp, nil
}

// failure turns x/oauth2's error for a token request of step into an
// *Error that says what the token endpoint answered, and the note of the
// request's Event.
func (t *tokenTransport) failure(step string, err error) (*Error, string) {
	shown := t.ev.Method + " " + t.ev.URL
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		msg := fmt.Sprintf("%s: HTTP %d", shown, re.Response.StatusCode) + notFollowed(re.Response)
		if re.ErrorCode != "" {
			msg += errorParams(re.ErrorCode, re.ErrorDescription)
		}
		return &Error{Step: step, Msg: msg, Err: err}, step + ": " + msg
	case t.ev.Status == 0:
		if t.err != nil {
			err = t.err
		}
		cause := httpshow.URLError(err)
		return &Error{Step: step, Msg: fmt.Sprintf("%s: %v", strings.TrimSpace(shown), cause), Err: err}, step + ": " + cause.Error()
	case strings.Contains(err.Error(), "missing access_token"):
		return &Error{Step: step, Msg: "the token response has no access_token", Err: err}, step + ": ok"
	case strings.HasPrefix(err.Error(), "oauth2: cannot fetch token: "):
		note := step + ": reading the body: " + strings.TrimPrefix(err.Error(), "oauth2: cannot fetch token: ")
		return &Error{Step: step, Msg: note, Err: err}, note
	}
	msg := fmt.Sprintf("%s: the answer is not the JSON expected: %s", shown, strings.TrimPrefix(err.Error(), "oauth2: cannot parse json: "))
	return &Error{Step: step, Msg: msg, Err: err}, step + ": the answer is not the JSON expected"
}
