package oauth

import (
	"bytes"
	"context"
	"encoding/json"
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
	tr := f.tokenTransport(g, nil)
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
	tr := f.tokenTransport(g, add)
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
	if tr.dpop != nil && !strings.EqualFold(tok.TokenType, "DPoP") {
		tr.ev.Note += "; " + DowngradeNote + "the token request carried a DPoP proof but the token came back with token_type " + orNone(tok.TokenType) + ", not DPoP: it is not bound to sonde's key (whoever holds it can use it); sending it as a Bearer token"
	}
	f.a.note(tr.ev)
	// What the answer itself says: x/oauth2 puts the old refresh token in
	// a refresh's answer that has none.
	refresh, _ := tok.Extra("refresh_token").(string)
	f.secret(tok.AccessToken)
	f.secret(refresh)
	bound, err := tokenType(step, tok.TokenType, tr.dpop != nil)
	if err != nil {
		return err
	}
	f.a.keep(g, tok.AccessToken, refresh, bound)
	return nil
}

// tokenType checks the token_type of a token response to a request that
// carried a DPoP proof (proofed) or not, and says whether the token is
// DPoP-bound. A Bearer token in answer to a proof is a downgrade: shown,
// and the token sent as Bearer (RFC 9449 §5).
func tokenType(step, tt string, proofed bool) (bool, error) {
	switch {
	case proofed && strings.EqualFold(tt, "DPoP"):
		return true, nil
	case tt != "" && !strings.EqualFold(tt, "Bearer"):
		return false, &Error{Step: step, Msg: fmt.Sprintf("the token response has token_type %q, not Bearer", tt)}
	}
	return false, nil
}

// tokenTransport carries one token request of x/oauth2 through the
// connection's client: it adds form parameters x/oauth2 cannot and, for a
// grant with DPoP, a proof (and the one retry a use_dpop_nonce answer
// asks for), caps the answer at MaxBodyBytes, and records the exchange as
// an Event.
type tokenTransport struct {
	base http.RoundTripper
	hc   *http.Client
	add  url.Values
	dpop *dpopKey    // nil: no proof
	note func(Event) // the Authorizer's, for the exchange a retry follows
	ev   Event
	err  error // of the round trip
}

// tokenTransport returns a tokenTransport for g over the Authorizer's
// client that adds add to the request's form.
func (f *flow) tokenTransport(g grant, add url.Values) *tokenTransport {
	t := &tokenTransport{base: f.a.hc.Transport, add: add, note: f.a.note}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if g.dpop {
		f.a.mu.Lock()
		t.dpop = f.a.key
		f.a.mu.Unlock()
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

// RoundTrip sends req (with t.add in its form, and a proof) and records
// it; a 400 use_dpop_nonce with a DPoP-Nonce is sent once more with a
// fresh proof carrying the nonce.
func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body := ""
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = string(b)
	}
	if len(t.add) > 0 {
		form, err := url.ParseQuery(body)
		if err != nil {
			return nil, err
		}
		for k, v := range t.add {
			form[k] = v
		}
		body = form.Encode()
	}
	resp, err := t.send(req, body)
	if err != nil || t.dpop == nil || resp.StatusCode != http.StatusBadRequest || resp.Header.Get("DPoP-Nonce") == "" {
		return resp, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var answer struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(b, &answer)
	if !useDPoPNonce(answer.Error, resp.Header.Get("DPoP-Nonce")) {
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return resp, nil
	}
	t.ev.Note = "token: HTTP 400 use_dpop_nonce: the authorization server asks for a DPoP nonce (DPoP-Nonce " + resp.Header.Get("DPoP-Nonce") + "); sending the token request again with a fresh proof carrying it"
	t.note(t.ev)
	return t.send(req, body)
}

// send sends req with body (and a fresh proof) once, recording it in t.ev.
func (t *tokenTransport) send(orig *http.Request, body string) (*http.Response, error) {
	req := orig.Clone(orig.Context())
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	t.ev = Event{Method: req.Method, URL: req.URL.Redacted(), Stream: StreamFlow, Header: []string{"> Content-Type: " + req.Header.Get("Content-Type")}}
	if req.Header.Get("Authorization") != "" {
		t.ev.Header = append(t.ev.Header, "> Authorization: Basic "+httpshow.Redacted)
	}
	if t.dpop != nil {
		p, err := t.dpop.proof(req.Method, req.URL, "")
		if err != nil {
			return nil, fmt.Errorf("signing a DPoP proof: %w", err)
		}
		req.Header.Set("DPoP", p.JWS)
		t.ev.Header = append(t.ev.Header, "> DPoP: "+p.Shown())
	}
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	t.ev.Duration, t.err = time.Since(start), err
	if err != nil {
		return nil, err
	}
	t.ev.Status = resp.StatusCode
	if n := resp.Header.Get("DPoP-Nonce"); n != "" && t.dpop != nil {
		t.dpop.setNonce(req.URL, n)
		t.ev.Header = append(t.ev.Header, "< DPoP-Nonce: "+n)
	}
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
