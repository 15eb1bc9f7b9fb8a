package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// initOK writes initialize and waits for its response; it fails the test
// with the ExchangeError that came instead.
func initOK(t *testing.T, h *HTTP) {
	t.Helper()
	if err := h.Write([]byte(initLine)); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := h.Read()
		if err != nil {
			t.Fatalf("initialize: %v", err)
		}
		if f.Msg.Kind == jsonrpc.KindResponse {
			return
		}
	}
}

// tokenRequests lists the grant_type of each POST to /as/token, and
// whether a registration was sent.
func (r *recorder) oauthPaths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.sent {
		if strings.HasPrefix(q.URL.Path, "/as/") {
			out = append(out, q.Method+" "+q.URL.Path)
		}
	}
	return out
}

// bearers lists the Authorization values sent to /mcp.
func (r *recorder) bearers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.sent {
		if q.URL.Path == "/mcp" {
			out = append(out, q.Header.Get("Authorization"))
		}
	}
	return out
}

// The whole flow against the fixture: 401, discovery, dynamic
// registration, authorization (fetched), token exchange; initialize then
// succeeds with the access token, which no event shows.
func TestOAuth_FullFlowWithRegistration(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	var secrets []string // OnSecret runs in the flow, before Read has the response
	h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp", OAuth: &oauth.Config{Browser: oauth.BrowserFetch, Timeout: 20 * time.Second,
		OnSecret: func(s string) { secrets = append(secrets, s) }}})
	initOK(t, h)
	want := []string{"POST /as/register", "GET /as/authorize", "POST /as/token"}
	if got := rec.oauthPaths(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("AS requests %v, want %v", got, want)
	}
	var token string
	for _, q := range rec.sent {
		if q.URL.Path == "/as/authorize" {
			p := q.URL.Query()
			if p.Get("code_challenge_method") != "S256" || p.Get("resource") != base+"/mcp" || p.Get("scope") != "fixture:tools" ||
				p.Get("state") == "" || !strings.HasPrefix(p.Get("redirect_uri"), "http://127.0.0.1:") || !strings.HasSuffix(p.Get("redirect_uri"), "/callback") {
				t.Errorf("authorization request %s", q.URL)
			}
		}
	}
	bs := rec.bearers()
	if len(bs) < 2 || bs[0] != "" || !strings.HasPrefix(bs[len(bs)-1], "Bearer fixture-access-") {
		t.Fatalf("Authorization sent to /mcp: %q", bs)
	}
	token = strings.TrimPrefix(bs[len(bs)-1], "Bearer ")
	if len(secrets) != 2 || secrets[0] != token || !strings.HasPrefix(secrets[1], "fixture-refresh-") {
		t.Errorf("OnSecret got %q, want the access token %q and the refresh token", secrets, token)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	shown := false
	for _, ev := range rec.events {
		s := fmt.Sprintf("%+v %s", ev, ev.Raw)
		if strings.Contains(s, token) || strings.Contains(s, "fixture-refresh-") || strings.Contains(s, "fixture-code-") {
			t.Errorf("a secret in event %s", s)
		}
		for _, hd := range ev.Header {
			if hd == "> Authorization: Bearer "+Redacted {
				shown = true
			}
		}
	}
	if !shown {
		t.Error("no event shows the redacted Authorization header")
	}
}

// A client id given beforehand: no registration; the fixture accepts an
// unregistered client id.
func TestOAuth_GivenClientID(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp", OAuth: &oauth.Config{ClientID: "my-client", Browser: oauth.BrowserFetch, Timeout: 20 * time.Second}})
	initOK(t, h)
	want := []string{"GET /as/authorize", "POST /as/token"}
	if got := rec.oauthPaths(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("AS requests %v, want %v", got, want)
	}
}

// oauthRefusal runs initialize against base and returns the oauth.Error in
// the ExchangeError it fails with.
func oauthRefusal(t *testing.T, base string, cfg *oauth.Config) (*ExchangeError, *oauth.Error) {
	t.Helper()
	h, _ := dialRec(t, HTTPConfig{URL: base + "/mcp", OAuth: cfg})
	xe := refusal(t, h, initLine)
	var oe *oauth.Error
	if xe.Status != http.StatusUnauthorized || !errors.As(xe, &oe) {
		t.Fatalf("refusal %v (status %d)", xe, xe.Status)
	}
	return xe, oe
}

// No S256 (or no code_challenge_methods_supported): sonde refuses before
// any request to the authorization server.
func TestOAuth_NoS256Refused(t *testing.T) {
	for _, variant := range []string{"no-s256", "no-pkce"} {
		t.Run(variant, func(t *testing.T) {
			base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", variant)
			xe, oe := oauthRefusal(t, base, &oauth.Config{Browser: oauth.BrowserFetch, Timeout: 20 * time.Second})
			if oe.Step != "pkce" || !errors.Is(xe, oauth.ErrNoS256) || !strings.Contains(xe.Msg, "refusing to proceed") {
				t.Errorf("error %v", xe)
			}
		})
	}
}

// An authorization response whose state is not the request's is refused.
func TestOAuth_StateMismatch(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	// The user's "browser" comes back with another state.
	prompt := func(authURL string) {
		u, _ := url.Parse(authURL)
		q := u.Query()
		cb, _ := url.Parse(q.Get("redirect_uri"))
		cb.RawQuery = url.Values{"code": {"c"}, "state": {"forged"}}.Encode()
		go visit(cb.String())
	}
	xe, oe := oauthRefusal(t, base, &oauth.Config{ClientID: "c", Prompt: prompt, Timeout: 20 * time.Second})
	if oe.Step != "authorization" || !strings.Contains(xe.Msg, "state does not match") {
		t.Errorf("error %v", xe)
	}
}

// A wrong PKCE verifier is rejected by the fixture's token endpoint (the
// authorization request's challenge is replaced on its way).
func TestOAuth_WrongVerifierRejected(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	prompt := func(authURL string) {
		u, _ := url.Parse(authURL)
		q := u.Query()
		q.Set("code_challenge", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
		u.RawQuery = q.Encode()
		go visit(u.String())
	}
	xe, oe := oauthRefusal(t, base, &oauth.Config{ClientID: "c", Prompt: prompt, Timeout: 20 * time.Second})
	if oe.Step != "token" || !strings.Contains(xe.Msg, "PKCE verification failed") {
		t.Errorf("error %v", xe)
	}
}

// No answer in time: the flow gives up, the listener closed (goleak).
func TestOAuth_Timeout(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	xe, oe := oauthRefusal(t, base, &oauth.Config{ClientID: "c", Timeout: 300 * time.Millisecond})
	if oe.Step != "authorization" || !strings.Contains(xe.Msg, "in time") {
		t.Errorf("error %v", xe)
	}
}

// A token the server later refuses is refreshed once (token-once: the
// first access token works for one request).
func TestOAuth_RefreshAfter401(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", "token-once")
	h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp", OAuth: &oauth.Config{Browser: oauth.BrowserFetch, Timeout: 20 * time.Second}})
	initOK(t, h)
	if err := h.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	if err := h.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := h.Read()
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if f.Msg.Kind == jsonrpc.KindResponse && f.Msg.ID == jsonrpc.Int(2) {
			break
		}
	}
	want := []string{"POST /as/register", "GET /as/authorize", "POST /as/token", "POST /as/token"}
	if got := rec.oauthPaths(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("AS requests %v, want %v", got, want)
	}
}

// Protected resource metadata that names another resource: sonde refuses
// to authorize for it.
func TestOAuth_ResourceMismatchRefused(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", "prm-mismatch")
	xe, oe := oauthRefusal(t, base, &oauth.Config{Browser: oauth.BrowserFetch, Timeout: 20 * time.Second})
	if oe.Step != "discovery" || !strings.Contains(xe.Msg, "names resource "+base+"/other, not this server") {
		t.Errorf("error %v", xe)
	}
}

// A 403 with error="insufficient_scope" (step-up): sonde authorizes again
// with the challenge's scope added, and the call goes through; a client
// id was registered once.
func TestOAuth_StepUp(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", "insufficient-scope")
	h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp", OAuth: &oauth.Config{Browser: oauth.BrowserFetch, Timeout: 20 * time.Second}})
	initOK(t, h)
	if err := h.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	if err := h.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"value":"hi"}}}`)); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := h.Read()
		if err != nil {
			t.Fatalf("tools/call: %v", err)
		}
		if f.Msg.Kind == jsonrpc.KindResponse && f.Msg.ID == jsonrpc.Int(2) {
			break
		}
	}
	var scopes []string
	rec.mu.Lock()
	for _, q := range rec.sent {
		if q.URL.Path == "/as/authorize" {
			scopes = append(scopes, q.URL.Query().Get("scope"))
		}
	}
	rec.mu.Unlock()
	if fmt.Sprint(scopes) != "[fixture:tools fixture:tools fixture:admin]" {
		t.Errorf("scopes asked for: %q", scopes)
	}
}

// The legacy HTTP+SSE transport: the GET that opens the session gets the
// 401; sonde authorizes and opens it again with the token.
func TestOAuth_LegacySSE(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	h, rec := dialRec(t, HTTPConfig{URL: base + "/sse", Mode: ModeSSE, OAuth: &oauth.Config{Browser: oauth.BrowserFetch, Timeout: 20 * time.Second}})
	initOK(t, h)
	var resource string
	rec.mu.Lock()
	for _, q := range rec.sent {
		if q.URL.Path == "/as/authorize" {
			resource = q.URL.Query().Get("resource")
		}
	}
	rec.mu.Unlock()
	if resource != base+"/sse" {
		t.Errorf("resource %q", resource)
	}
}

// fakeAuthorizer hands out token until Authorize replaces it with next.
type fakeAuthorizer struct {
	mu          sync.Mutex
	token, next string
	calls       []string // "sent stepUp" of each Authorize
}

func (f *fakeAuthorizer) Token() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.token
}

func (f *fakeAuthorizer) Credential(string, *url.URL) (oauth.Credential, error) {
	if t := f.Token(); t != "" {
		return oauth.Credential{Scheme: "Bearer", Token: t}, nil
	}
	return oauth.Credential{}, nil
}

func (f *fakeAuthorizer) KeepNonce(*url.URL, string) bool { return false }

func (f *fakeAuthorizer) Authorize(_ context.Context, sent string, _ *oauth.Discovery, stepUp bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprint(sent, " ", stepUp))
	f.token = f.next
	return nil
}

// The standalone GET stream refused with 401 (the token expired): sonde
// asks the authorizer for a new token (a refresh: not a step-up) once and
// opens the stream again with it. (The refresh itself: transport/oauth.)
func TestOAuth_GetStreamRefresh(t *testing.T) {
	gotNew := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer new-token":
			once.Do(func() { close(gotNew) })
			w.WriteHeader(http.StatusMethodNotAllowed)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	h, _ := dialRec(t, HTTPConfig{URL: srv.URL + "/mcp"})
	fake := &fakeAuthorizer{token: "old-token", next: "new-token"}
	h.mu.Lock()
	h.auth, h.mode = fake, ModeStreamable
	h.mu.Unlock()
	<-h.startGet()
	select {
	case <-gotNew:
	case <-time.After(5 * time.Second):
		t.Fatal("no GET with the new token")
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fmt.Sprint(fake.calls) != "[old-token false]" {
		t.Errorf("Authorize calls %q", fake.calls)
	}
}

// A request refused with 401 is sent again once with the authorizer's new
// token; a second 401 stands.
func TestOAuth_RetryOnce(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	h, _ := dialRec(t, HTTPConfig{URL: srv.URL + "/mcp", AuthTimeout: -1})
	fake := &fakeAuthorizer{next: "t1"}
	h.auth = fake
	xe := refusal(t, h, initLine)
	if xe.Status != http.StatusUnauthorized {
		t.Fatalf("%v", xe)
	}
	mu.Lock()
	defer mu.Unlock()
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fmt.Sprint(seen) != "[ Bearer t1]" || fmt.Sprint(fake.calls) != "[ false]" {
		t.Errorf("Authorization sent %q, Authorize calls %q", seen, fake.calls)
	}
}

// An authorization response whose iss is not the issuer (RFC 9207) is
// refused, even with the right state.
func TestOAuth_IssuerMismatch(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	prompt := func(authURL string) {
		u, _ := url.Parse(authURL)
		q := u.Query()
		cb, _ := url.Parse(q.Get("redirect_uri"))
		cb.RawQuery = url.Values{"code": {"c"}, "state": {q.Get("state")}, "iss": {"http://evil.example"}}.Encode()
		go visit(cb.String())
	}
	xe, oe := oauthRefusal(t, base, &oauth.Config{ClientID: "c", Prompt: prompt, Timeout: 20 * time.Second})
	if oe.Step != "authorization" || !strings.Contains(xe.Msg, `iss "http://evil.example" is not the issuer "`+base+`/as" (RFC 9207)`) {
		t.Errorf("error %v", xe)
	}
}

// No metadata at all (a 2025-03-26 server): the default endpoints at the
// root of the server's origin.
func TestOAuth_Legacy2503Endpoints(t *testing.T) {
	var paths []string
	var mu sync.Mutex
	var srvURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/register":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"client_id":"c1"}`)
		case "/authorize":
			q := r.URL.Query()
			http.Redirect(w, r, q.Get("redirect_uri")+"?code=k&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
		case "/token":
			_ = r.ParseForm()
			if r.PostForm.Get("resource") != srvURL+"/mcp" {
				http.Error(w, "resource", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"access_token":"tok-2503","token_type":"Bearer"}`)
		case "/mcp":
			if r.Header.Get("Authorization") != "Bearer tok-2503" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	srvURL = srv.URL
	h, _ := dialRec(t, HTTPConfig{URL: srv.URL + "/mcp", OAuth: &oauth.Config{Browser: oauth.BrowserFetch, Timeout: 5 * time.Second}})
	initOK(t, h)
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(paths, ", ")
	if !strings.Contains(got, "POST /register, GET /authorize, POST /token, POST /mcp") {
		t.Errorf("requests: %s", got)
	}
}

// visit is the user's browser following a link: a GET whose answer is
// dropped.
func visit(link string) {
	if resp, err := http.Get(link); err == nil {
		resp.Body.Close()
	}
}
