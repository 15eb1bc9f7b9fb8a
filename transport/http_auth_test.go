// The HTTP transport's side of authorization (authz.go) against real
// servers: discovery after a refusal, and the OAuth flow it asks for
// (transport/oauth, whose own tests cover its parts).

package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// serveFixture runs the fixture's HTTP mode in-process on a real loopback
// socket and returns its origin (http://127.0.0.1:PORT).
func serveFixture(t *testing.T, args ...string) string {
	t.Helper()
	return fixturetest.ServeHTTP(t, args...)
}

// recorder is an HTTP client that remembers every request it sent (method,
// URL and headers), and a transport Observer that keeps the HTTP events.
type recorder struct {
	mu     sync.Mutex
	sent   []*http.Request
	events []HTTPEvent
	tr     *http.Transport
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{tr: &http.Transport{}}
	t.Cleanup(r.tr.CloseIdleConnections)
	return r
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.sent = append(r.sent, req.Clone(context.Background()))
	r.mu.Unlock()
	return r.tr.RoundTrip(req)
}

func (r *recorder) observe(ev Event) {
	if ev.Kind == EventHTTP {
		r.mu.Lock()
		r.events = append(r.events, *ev.HTTP)
		r.mu.Unlock()
	}
}

// gets lists the paths of the GETs sent to the well-known URIs.
func (r *recorder) gets() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.sent {
		if q.Method == http.MethodGet && strings.Contains(q.URL.Path, "/.well-known/") {
			out = append(out, q.URL.Path)
		}
	}
	return out
}

// authEvents lists discovery's events as "GET PATH STATUS".
func (r *recorder) authEvents() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		if ev.Stream == oauth.StreamDiscovery {
			u, _ := url.Parse(ev.URL)
			out = append(out, ev.Method+" "+u.Path+" "+http.StatusText(ev.Status))
		}
	}
	return out
}

// dialRec dials url with cfg, through a recorder.
func dialRec(t *testing.T, cfg HTTPConfig) (*HTTP, *recorder) {
	t.Helper()
	rec := newRecorder(t)
	cfg.Client = &http.Client{Transport: rec}
	if cfg.Mode == "" {
		cfg.Mode = ModeStreamable
	}
	h, err := DialHTTP(cfg, rec.observe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, rec
}

// refusal writes line and returns the ExchangeError Read gives for it.
func refusal(t *testing.T, h *HTTP, line string) *ExchangeError {
	t.Helper()
	if err := h.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := h.Read()
		if err == nil {
			if f.Msg.Kind == jsonrpc.KindResponse {
				t.Fatalf("a response instead of a refusal: %s", f.Raw)
			}
			continue
		}
		var xe *ExchangeError
		if !errors.As(err, &xe) {
			t.Fatalf("Read: %v", err)
		}
		return xe
	}
}

func problemKinds(a *oauth.Discovery) []oauth.ProblemKind {
	var out []oauth.ProblemKind
	for _, p := range a.Problems {
		out = append(out, p.Kind)
	}
	return out
}

const wkPRM, wkAS = "/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server"

// A 401 whose challenge names the metadata: the PRM from that URL, then
// the authorization server's metadata; no user header goes to either.
func TestAuthDiscovery_HeaderURL(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp", Header: http.Header{"Authorization": {"Bearer wrong-token"}, "X-Api-Key": {"k3y"}}})
	xe := refusal(t, h, initLine)
	if xe.Kind != ExchangeStatus || xe.Status != 401 || !xe.ID.IsValid() || xe.Auth == nil {
		t.Fatalf("%+v", xe)
	}
	a := xe.Auth
	want := &oauth.Discovery{Status: 401, ResourceMetadataURL: base + wkPRM + "/mcp", Scope: "fixture:tools",
		PRMURL: base + wkPRM + "/mcp",
		PRM: &oauth.ProtectedResourceMetadata{Resource: base + "/mcp", AuthorizationServers: []string{base + "/as"},
			ScopesSupported: []string{"fixture:tools"}, BearerMethodsSupported: []string{"header"}},
		ASURL: base + wkAS + "/as",
		AS: &oauth.ServerMetadata{Issuer: base + "/as", AuthorizationEndpoint: base + "/as/authorize", TokenEndpoint: base + "/as/token",
			RegistrationEndpoint: base + "/as/register", CodeChallengeMethods: []string{"S256"}, ScopesSupported: []string{"fixture:tools", "fixture:admin"},
			TokenAuthMethods: []string{"none"}},
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("discovery\n got %+v\nwant %+v", *a, *want)
	}
	if a.Err() != nil {
		t.Errorf("problems: %v", a.Err())
	}
	sum := "resource " + base + "/mcp, authorization server " + base + "/as (S256 ok, dynamic registration at " + base + "/as/register), scope fixture:tools"
	if a.Summary() != sum {
		t.Errorf("summary %q\n    want %q", a.Summary(), sum)
	}
	for _, w := range []string{"initialize 1: HTTP 401: ", "; authorization: " + sum + "; pass credentials with --header"} {
		if !strings.Contains(xe.Msg, w) {
			t.Errorf("message lacks %q: %s", w, xe.Msg)
		}
	}
	if got, want := rec.authEvents(), []string{"GET " + wkPRM + "/mcp OK", "GET " + wkAS + "/as OK"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, q := range rec.sent {
		if strings.Contains(q.URL.Path, "/.well-known/") && (q.Header.Get("Authorization") != "" || q.Header.Get("X-Api-Key") != "") {
			t.Errorf("GET %s carried the user's headers: %v", q.URL, q.Header)
		}
	}
	for _, ev := range rec.events {
		if ev.Stream != oauth.StreamDiscovery {
			continue
		}
		if ev.ReqID != jsonrpc.Int(1) || !strings.Contains(strings.Join(ev.Header, "\n"), "< Content-Type: application/json") || len(ev.Raw) == 0 {
			t.Errorf("event %+v", ev)
		}
		if strings.Contains(ev.URL, "/as") && !strings.Contains(ev.Note, "issuer "+base+"/as; S256 ok") {
			t.Errorf("AS event note %q", ev.Note)
		}
	}
}

// Without resource_metadata the well-known URIs are tried in the spec's
// order: with the server's path, then at the root.
func TestAuthDiscovery_WellKnownFallback(t *testing.T) {
	t.Run("path", func(t *testing.T) {
		base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", "no-resource-metadata")
		h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp"})
		a := refusal(t, h, initLine).Auth
		if a == nil || a.ResourceMetadataURL != "" || a.PRMURL != base+wkPRM+"/mcp" || a.AS == nil || len(a.Problems) != 0 {
			t.Fatalf("%+v", a)
		}
		if got := rec.gets(); !slices.Equal(got, []string{wkPRM + "/mcp", wkAS + "/as"}) {
			t.Errorf("GETs %q", got)
		}
	})
	t.Run("root", func(t *testing.T) {
		base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", "no-resource-metadata,root-metadata")
		h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp"})
		a := refusal(t, h, initLine).Auth
		// The root document names the origin, which covers /mcp.
		if a == nil || a.PRMURL != base+wkPRM || a.PRM.Resource != base || a.AS == nil || len(a.Problems) != 0 {
			t.Fatalf("%+v", a)
		}
		if got, want := rec.authEvents(), []string{"GET " + wkPRM + "/mcp Not Found", "GET " + wkPRM + " OK", "GET " + wkAS + "/as OK"}; !slices.Equal(got, want) {
			t.Errorf("events %q, want %q", got, want)
		}
	})
	t.Run("none", func(t *testing.T) {
		base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", "no-resource-metadata,prm-404")
		h, _ := dialRec(t, HTTPConfig{URL: base + "/mcp"})
		a := refusal(t, h, initLine).Auth
		if a == nil || a.PRM != nil || a.AS != nil || !slices.Equal(problemKinds(a), []oauth.ProblemKind{oauth.ProblemStatus, oauth.ProblemStatus}) ||
			a.Problems[0].URL != base+wkPRM+"/mcp" || a.Problems[1].URL != base+wkPRM || a.Problems[1].Status != 404 {
			t.Fatalf("%+v", a)
		}
		if s := a.Summary(); !strings.HasPrefix(s, "no protected resource metadata, scope fixture:tools; problems: protected resource metadata (well-known URI 1 of 2): GET "+base+wkPRM+"/mcp: HTTP 404 | ") {
			t.Errorf("summary %q", s)
		}
	})
}

// The authorization server's metadata is looked for at the spec's three
// URIs in order; what is wrong with it is reported.
func TestAuthDiscovery_AuthServer(t *testing.T) {
	cases := []struct {
		variant string
		gets    []string // after the PRM
		found   bool
		kinds   []oauth.ProblemKind
		summary string // substring
	}{
		{"as-openid", []string{wkAS + "/as", "/.well-known/openid-configuration/as"}, true, nil, "(S256 ok, dynamic registration at "},
		{"as-openid-after", []string{wkAS + "/as", "/.well-known/openid-configuration/as", "/as/.well-known/openid-configuration"}, true, nil, "(S256 ok, "},
		{"as-404", []string{wkAS + "/as", "/.well-known/openid-configuration/as", "/as/.well-known/openid-configuration"}, false,
			[]oauth.ProblemKind{oauth.ProblemStatus, oauth.ProblemStatus, oauth.ProblemStatus}, "/as (no metadata), scope fixture:tools; problems: authorization server metadata (URI 1 of 3): GET "},
		{"no-s256", []string{wkAS + "/as"}, true, []oauth.ProblemKind{oauth.ProblemNoS256},
			"(no S256 in code_challenge_methods_supported: clients must refuse, dynamic registration at "},
		{"no-pkce", []string{wkAS + "/as"}, true, []oauth.ProblemKind{oauth.ProblemNoS256},
			"problems: the authorization server metadata has no code_challenge_methods_supported: an MCP client must refuse to proceed"},
		{"no-registration", []string{wkAS + "/as"}, true, nil, "(S256 ok, no dynamic registration), scope fixture:tools"},
	}
	for _, tc := range cases {
		t.Run(tc.variant, func(t *testing.T) {
			base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", tc.variant)
			h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp"})
			a := refusal(t, h, initLine).Auth
			if a == nil || a.PRM == nil || (a.AS != nil) != tc.found || !slices.Equal(problemKinds(a), tc.kinds) {
				t.Fatalf("%+v (problems %v)", a, a.Err())
			}
			if got := rec.gets(); !slices.Equal(got, append([]string{wkPRM + "/mcp"}, tc.gets...)) {
				t.Errorf("GETs %q", got)
			}
			if !strings.Contains(a.Summary(), tc.summary) {
				t.Errorf("summary %q lacks %q", a.Summary(), tc.summary)
			}
			if tc.found && a.ASURL != base+tc.gets[len(tc.gets)-1] {
				t.Errorf("AS URL %s", a.ASURL)
			}
			var p *oauth.Problem
			if len(tc.kinds) > 0 && (!errors.As(a.Err(), &p) || p.Kind != tc.kinds[0]) {
				t.Errorf("errors.As: %v", a.Err())
			}
		})
	}
}

// A PRM that cannot be had, or names another resource, is a problem of the
// diagnosis; the 401 stays what it is.
func TestAuthDiscovery_PRMFailure(t *testing.T) {
	cases := []struct {
		variant string
		kind    oauth.ProblemKind
		msg     string
		as      bool
	}{
		{"prm-404", oauth.ProblemStatus, "protected resource metadata: GET %s/.well-known/oauth-protected-resource/mcp: HTTP 404", false},
		{"prm-not-json", oauth.ProblemNotJSON, `protected resource metadata: GET %s/.well-known/oauth-protected-resource/mcp: not a JSON object (Content-Type "text/html; charset=utf-8"): an HTML page titled "sonde fixture"`, false},
		{"prm-mismatch", oauth.ProblemMismatch, "the protected resource metadata names resource %s/other, not this server (%[1]s/mcp)", true},
	}
	for _, tc := range cases {
		t.Run(tc.variant, func(t *testing.T) {
			base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", tc.variant)
			h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp"})
			xe := refusal(t, h, initLine)
			a := xe.Auth
			if xe.Status != 401 || xe.Kind != ExchangeStatus || a == nil || len(a.Problems) != 1 || a.Problems[0].Kind != tc.kind || (a.AS != nil) != tc.as {
				t.Fatalf("%+v %+v", xe, a)
			}
			msg := strings.ReplaceAll(tc.msg, "%[1]s", base)
			msg = strings.Replace(msg, "%s", base, 1)
			if !strings.HasPrefix(a.Problems[0].Msg, msg) {
				t.Errorf("problem %q\n   want %q", a.Problems[0].Msg, msg)
			}
			if !strings.HasPrefix(xe.Msg, "initialize 1: HTTP 401: \"Unauthorized: ") || !strings.Contains(xe.Msg, "problems: "+msg) {
				t.Errorf("message %s", xe.Msg)
			}
			if ev := rec.authEvents(); len(ev) == 0 || !strings.HasPrefix(ev[0], "GET "+wkPRM+"/mcp ") {
				t.Errorf("events %q", ev)
			}
		})
	}
}

// A 403 with error="insufficient_scope" (step-up) is diagnosed too, with
// the scope the challenge asks for; a plain 403 is not.
func TestAuthDiscovery_InsufficientScope(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized", "--http-auth", "insufficient-scope")
	h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp", Header: http.Header{"Authorization": {"Bearer sonde-test-token"}}})
	if err := h.Write([]byte(initLine)); err != nil {
		t.Fatal(err)
	}
	if f, err := h.Read(); err != nil || f.Msg.ID != jsonrpc.Int(1) {
		t.Fatalf("initialize: %+v %v", f, err)
	}
	if err := h.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	xe := refusal(t, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"value":"x"}}}`)
	a := xe.Auth
	if xe.Status != 403 || xe.ID != jsonrpc.Int(2) || a == nil || a.Status != 403 || a.Error != "insufficient_scope" ||
		a.Scope != "fixture:tools fixture:admin" || a.ErrorDescription != "tools/call needs fixture:admin" || a.AS == nil || len(a.Problems) != 0 {
		t.Fatalf("%+v %+v", xe, a)
	}
	if !strings.Contains(xe.Msg, "tools/call 2: HTTP 403: ") || !strings.Contains(xe.Msg, "; authorization: error insufficient_scope, resource "+base+"/mcp, authorization server ") ||
		!strings.Contains(xe.Msg, "scope fixture:tools fixture:admin; pass credentials") {
		t.Errorf("message %s", xe.Msg)
	}
	if got := rec.gets(); len(got) != 2 {
		t.Errorf("GETs %q", got)
	}

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="http://`+r.Host+`/prm"`)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer plain.Close()
	h2, rec2 := dialRec(t, HTTPConfig{URL: plain.URL + "/mcp"})
	if xe := refusal(t, h2, initLine); xe.Status != 403 || xe.Auth != nil || len(rec2.gets()) != 0 || strings.Contains(xe.Msg, "authorization:") {
		t.Errorf("plain 403: %+v", xe)
	}
}

// Refusals share one discovery per resource_metadata URL; a negative
// AuthTimeout turns discovery off.
func TestAuthDiscovery_OncePerConnection(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	h, rec := dialRec(t, HTTPConfig{URL: base + "/mcp"})
	for id := 1; id <= 3; id++ {
		line := strings.Replace(initLine, `"id":1`, `"id":`+string(rune('0'+id)), 1)
		if err := h.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		_, err := h.Read()
		var xe *ExchangeError
		if !errors.As(err, &xe) || xe.Auth == nil || xe.Auth.AS == nil {
			t.Fatalf("%v", err)
		}
	}
	if got := rec.gets(); len(got) != 2 {
		t.Errorf("GETs %q: want one discovery", got)
	}

	h2, rec2 := dialRec(t, HTTPConfig{URL: base + "/mcp", AuthTimeout: -1})
	if xe := refusal(t, h2, initLine); xe.Status != 401 || xe.Auth != nil || len(rec2.gets()) != 0 || !strings.Contains(xe.Msg, "(resource metadata: "+base+wkPRM+"/mcp)") {
		t.Errorf("discovery off: %+v", xe)
	}
}

// Over legacy HTTP+SSE the refused GET of the SSE stream is diagnosed, with
// the /sse resource's metadata.
func TestAuthDiscovery_LegacySSE(t *testing.T) {
	base := serveFixture(t, "--fault", "http-unauthorized")
	rec := newRecorder(t)
	_, err := DialHTTP(HTTPConfig{URL: base + "/sse", Mode: ModeSSE, Client: &http.Client{Transport: rec}}, rec.observe)
	var xe *ExchangeError
	if !errors.As(err, &xe) || xe.Status != 401 || xe.Auth == nil || xe.Auth.PRM == nil || xe.Auth.PRM.Resource != base+"/sse" || xe.Auth.AS == nil || len(xe.Auth.Problems) != 0 {
		t.Fatalf("%v", err)
	}
}

// Discovery is bounded: a metadata server that never answers, and a body
// over the cap, are problems, and the refusal still comes.
func TestAuthDiscovery_Bounds(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/mcp":
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/`+r.URL.Query().Get("prm")+`"`)
			w.WriteHeader(http.StatusUnauthorized)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"resource":"` + strings.Repeat("x", oauth.MaxBodyBytes) + `"}`))
		case "/odd":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"resource":"http://` + r.Host + `/mcp","authorization_servers":"not a list"}`))
		case "/noas":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"resource":"http://` + r.Host + `/mcp"}`))
		}
	}))
	defer srv.Close()
	defer close(release)
	cases := []struct {
		prm  string
		kind oauth.ProblemKind
		msg  string
	}{
		{"slow", oauth.ProblemNetwork, "protected resource metadata: GET " + srv.URL + "/slow: no answer within the discovery deadline (50ms)"},
		{"big", oauth.ProblemNotJSON, "protected resource metadata: GET " + srv.URL + "/big: the body is over 64 KiB"},
		{"odd", oauth.ProblemMalformed, "protected resource metadata: GET " + srv.URL + "/odd: json: cannot unmarshal string"},
		{"noas", oauth.ProblemMissing, "the protected resource metadata at " + srv.URL + "/noas names no authorization server"},
	}
	for _, tc := range cases {
		t.Run(tc.prm, func(t *testing.T) {
			// Only the slow case needs the deadline to pass: the others get
			// room for a loaded machine (64 KiB once took longer than 50ms).
			deadline := 10 * time.Second
			if tc.prm == "slow" {
				deadline = 50 * time.Millisecond
			}
			h, _ := dialRec(t, HTTPConfig{URL: srv.URL + "/mcp?prm=" + tc.prm, AuthTimeout: deadline})
			xe := refusal(t, h, initLine)
			a := xe.Auth
			if xe.Status != 401 || a == nil || len(a.Problems) != 1 || a.Problems[0].Kind != tc.kind || !strings.HasPrefix(a.Problems[0].Msg, tc.msg) {
				t.Fatalf("%+v %+v", xe, a)
			}
		})
	}
}

// A 2025-03-26 server has no PRM and is its own authorization server: its
// metadata at the root of its origin is found and marked so; the missing
// PRM stays a problem.
func TestAuthDiscovery_Legacy2503(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/mcp":
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
		case wkAS:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"issuer":"http://` + r.Host + `","authorization_endpoint":"http://` + r.Host + `/authorize","token_endpoint":"http://` + r.Host + `/token","code_challenge_methods_supported":["S256"]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	h, rec := dialRec(t, HTTPConfig{URL: srv.URL + "/mcp"})
	a := refusal(t, h, initLine).Auth
	if a == nil || a.PRM != nil || a.AS == nil || !a.LegacyAS || a.ASURL != srv.URL+wkAS || !slices.Equal(problemKinds(a), []oauth.ProblemKind{oauth.ProblemStatus, oauth.ProblemStatus}) {
		t.Fatalf("%+v", a)
	}
	if got := rec.gets(); !slices.Equal(got, []string{wkPRM + "/mcp", wkPRM, wkAS}) {
		t.Errorf("GETs %q", got)
	}
	if s := a.Summary(); !strings.HasPrefix(s, "error invalid_token, no protected resource metadata, authorization server "+srv.URL+" (the server itself, as in 2025-03-26, S256 ok, no dynamic registration); problems: ") {
		t.Errorf("summary %q", s)
	}
}
