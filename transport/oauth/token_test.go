package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// testAuthorizer is an Authorizer for server (unused but for the
// resource), with cfg, whose events are kept.
func testAuthorizer(t *testing.T, cfg *Config) (*Authorizer, *[]Event) {
	t.Helper()
	var mu sync.Mutex
	var events []Event
	u, _ := url.Parse("http://127.0.0.1:1/mcp")
	a := NewAuthorizer(cfg, u, &http.Client{}, func(ev Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	})
	return a, &events
}

// testFlow is a flow of a under the test's context.
func testFlow(t *testing.T, a *Authorizer) *flow {
	return &flow{a: a, conn: t.Context(), ctx: t.Context()}
}

// newTokenServer serves a token endpoint at /token that hands each request
// to seen and answers with body (status 200 unless seen writes one).
func newTokenServer(t *testing.T, body string, seen func(http.ResponseWriter, *http.Request) bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if seen != nil && !seen(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A given client secret goes by client_secret_basic, or by
// client_secret_post when the metadata lists only that; it is in no event.
func TestExchange_ClientSecret(t *testing.T) {
	for _, tc := range []struct {
		methods   []string
		wantBasic bool
	}{{nil, true}, {[]string{"client_secret_basic", "client_secret_post"}, true}, {[]string{"client_secret_post"}, false}} {
		var got *http.Request
		var form url.Values
		srv := newTokenServer(t, `{"access_token":"tok","token_type":"bearer"}`, func(_ http.ResponseWriter, r *http.Request) bool {
			got, form = r, r.PostForm
			return true
		})
		a, events := testAuthorizer(t, &Config{ClientID: "cid", ClientSecret: "s3cr3t-x"})
		g := grant{as: &ServerMetadata{TokenEndpoint: srv + "/token", TokenAuthMethods: tc.methods}, clientID: "cid", secret: "s3cr3t-x",
			resource: "http://127.0.0.1:1/mcp", redirect: "http://127.0.0.1:2/callback"}
		if err := testFlow(t, a).exchange(g, "the-code", "the-verifier"); err != nil {
			t.Fatal(err)
		}
		user, pass, basic := got.BasicAuth()
		if basic != tc.wantBasic || (basic && (user != "cid" || pass != "s3cr3t-x" || form.Has("client_id") || form.Has("client_secret"))) ||
			(!basic && (form.Get("client_secret") != "s3cr3t-x" || form.Get("client_id") != "cid")) {
			t.Errorf("methods %v: basic %v (%s:%s), form %v", tc.methods, basic, user, pass, form)
		}
		if form.Get("grant_type") != "authorization_code" || form.Get("code") != "the-code" || form.Get("code_verifier") != "the-verifier" ||
			form.Get("resource") != g.resource || form.Get("redirect_uri") != g.redirect {
			t.Errorf("form %v", form)
		}
		if a.Token() != "tok" {
			t.Errorf("token %q", a.Token())
		}
		for _, ev := range *events {
			if s := fmt.Sprintf("%+v", ev); strings.Contains(s, "s3cr3t-x") || strings.Contains(s, "tok\"") || strings.Contains(s, "the-code") {
				t.Errorf("a secret in %s", s)
			}
		}
		if len(*events) != 1 || (*events)[0].Note != "token: ok" || (basic && (*events)[0].Header[1] != "> Authorization: Basic «redacted»") {
			t.Errorf("events %+v", *events)
		}
	}
}

// How the client authenticates at the token endpoint: by what
// registration returned, else by what the metadata allows; never a secret
// it does not have.
func TestAuthStyle(t *testing.T) {
	for _, tc := range []struct {
		secret, method string
		methods        []string
		want           string
	}{
		{"", "", nil, "params, no secret"},
		{"", "client_secret_basic", nil, "params, no secret"},
		{"s", "", nil, "header"},
		{"s", "none", []string{"client_secret_post"}, "params with secret"},
		{"s", "client_secret_post", nil, "params with secret"},
		{"s", "client_secret_basic", []string{"client_secret_post"}, "header"},
		{"s", "private_key_jwt", nil, "params, no secret"},
	} {
		style, secret := grant{as: &ServerMetadata{TokenAuthMethods: tc.methods}, secret: tc.secret, method: tc.method}.authStyle()
		got := map[bool]string{true: "header", false: "params"}[style == 2]
		if style == 1 {
			got += map[bool]string{true: " with secret", false: ", no secret"}[secret != ""]
		}
		if got != tc.want {
			t.Errorf("%+v: %s", tc, got)
		}
	}
	for methods, want := range map[string]string{"": "none", "none client_secret_basic": "none", "client_secret_post": "client_secret_post",
		"client_secret_basic client_secret_post": "client_secret_basic", "private_key_jwt": "client_secret_basic"} {
		if got := registrationMethod(&ServerMetadata{TokenAuthMethods: strings.Fields(methods)}); got != want {
			t.Errorf("registrationMethod(%q) = %s, want %s", methods, got, want)
		}
	}
}

// A refused token request says what the endpoint answered (error and
// error_description); an answer without an access token or with another
// token type is refused.
func TestExchange_Failures(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{400, `{"error":"invalid_grant","error_description":"PKCE verification failed"}`, "OAuth token: POST %s/token: HTTP 400: invalid_grant (PKCE verification failed)"},
		{401, `{"error":"invalid_client"}`, "OAuth token: POST %s/token: HTTP 401: invalid_client"},
		{500, `oops`, "OAuth token: POST %s/token: HTTP 500"},
		{200, `{"token_type":"Bearer"}`, "OAuth token: the token response has no access_token"},
		{200, `{"access_token":"a","token_type":"mac"}`, `OAuth token: the token response has token_type "mac", not Bearer`},
		{200, `not json`, "OAuth token: POST %s/token: the answer is not the JSON expected: invalid character"},
	} {
		srv := newTokenServer(t, tc.body, func(w http.ResponseWriter, _ *http.Request) bool {
			if tc.status != 200 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
				return false
			}
			return true
		})
		a, _ := testAuthorizer(t, &Config{})
		err := testFlow(t, a).exchange(grant{as: &ServerMetadata{TokenEndpoint: srv + "/token"}, clientID: "c"}, "k", "v")
		want := strings.ReplaceAll(tc.want, "%s", srv)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%d %s: %v, want %s", tc.status, tc.body, err, want)
		}
	}
}

// After a 401 to a token, the refresh token is spent once (with the
// client id and the resource), for a new access token; a second 401
// finds none left.
func TestAuthorize_Refresh(t *testing.T) {
	srv := newTokenServer(t, `{"access_token":"new-token","token_type":"Bearer"}`, func(w http.ResponseWriter, r *http.Request) bool {
		f := r.PostForm
		if f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != "r1" || f.Get("resource") != "res" || f.Get("client_id") != "c" {
			http.Error(w, "bad refresh", http.StatusBadRequest)
			return false
		}
		return true
	})
	var secrets []string
	a, _ := testAuthorizer(t, &Config{OnSecret: func(s string) { secrets = append(secrets, s) }})
	a.access, a.refresh = "old-token", "r1"
	a.grant = grant{as: &ServerMetadata{TokenEndpoint: srv + "/token"}, clientID: "c", resource: "res"}
	if err := a.Authorize(t.Context(), "old-token", nil, false); err != nil {
		t.Fatal(err)
	}
	if a.Token() != "new-token" || fmt.Sprint(secrets) != "[new-token]" {
		t.Errorf("token %q, secrets %q", a.Token(), secrets)
	}
	// Another request refused with the old token: the new one is used.
	if err := a.Authorize(t.Context(), "old-token", nil, false); err != nil {
		t.Error(err)
	}
	err := a.Authorize(t.Context(), "new-token", nil, false)
	if err == nil || err.Error() != "OAuth refresh: the server refused the access token and there is no refresh token" {
		t.Errorf("second refresh: %v", err)
	}
}

// The authorization response is checked: state, issuer (RFC 9207), an
// error, the code.
func TestCheckCallback(t *testing.T) {
	for q, want := range map[string]string{
		"code=k&state=s":                                   "",
		"code=k&state=s&iss=https://as":                    "",
		"code=k&state=x":                                   "state does not match",
		"code=k&state=s&iss=https://evil":                  `iss "https://evil" is not the issuer "https://as" (RFC 9207)`,
		"error=access_denied&error_description=no&state=s": "answered access_denied: no",
		"state=s": "has no code",
	} {
		v, _ := url.ParseQuery(q)
		code, err := checkCallback(v, "s", "https://as")
		if (want == "" && (err != nil || code != "k")) || (want != "" && (err == nil || !strings.Contains(err.Error(), want))) {
			t.Errorf("%s: %q %v", q, code, err)
		}
	}
}

// A flow that waits for its turn gives up when the connection closes.
func TestAuthorize_ClosedWhileWaiting(t *testing.T) {
	a, _ := testAuthorizer(t, &Config{})
	a.turn <- struct{}{}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := a.Authorize(ctx, "", nil, false); err == nil || !strings.Contains(err.Error(), "connection closed") {
		t.Errorf("%v", err)
	}
}
