// Hostile servers on real loopback sockets: what a server may not make
// sonde do with the user's credentials (issue 13). A second listener on
// another port is another origin.

package transport

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// sink is a server that records every request it gets (method, path and
// the credential headers), answering 200 with an empty JSON-RPC result.
type sink struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, fmt.Sprintf("%s %s Authorization=%q X-Api-Key=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// legacySSE serves a legacy HTTP+SSE stream at /sse whose endpoint event
// names endpoint (computed once the server's URL is known), and holds the
// stream open.
func legacySSE(t *testing.T, srv func(http.Handler) *httptest.Server, endpoint func(base string) string) *httptest.Server {
	var base string
	stop := make(chan struct{})
	s := srv(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/sse" && r.Method == http.MethodPost: // no Streamable HTTP here
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case r.URL.Path != "/sse":
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint(base))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	base = s.URL
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(stop) })
	return s
}

var secretHeaders = http.Header{"Authorization": {"Bearer s3cret"}, "X-Api-Key": {"k3y"}}

// A legacy endpoint event that names another origin is refused before any
// POST: the POSTs would carry the user's headers there.
func TestHostile_SSEEndpointOtherOrigin(t *testing.T) {
	evil := newSink(t)
	sse := legacySSE(t, httptest.NewServer, func(string) string { return evil.URL + "/messages?sessionId=1" })
	_, err := DialHTTP(HTTPConfig{URL: sse.URL + "/sse", Mode: ModeSSE, Header: secretHeaders, ConnectTimeout: 5 * time.Second}, nil)
	var xe *ExchangeError
	if !errors.As(err, &xe) || xe.Kind != ExchangeProtocol || !errors.Is(err, ErrEndpointOrigin) {
		t.Fatalf("DialHTTP: %v", err)
	}
	for _, w := range []string{"names " + evil.URL + "/messages?sessionId=1", "another origin (" + evil.URL + ")", "than the SSE stream (" + sse.URL + ")"} {
		if !strings.Contains(xe.Msg, w) {
			t.Errorf("message lacks %q: %s", w, xe.Msg)
		}
	}
	if got := evil.requests(); len(got) != 0 {
		t.Errorf("the other origin got %q", got)
	}
}

// In auto mode, the fallback to a legacy endpoint on another origin fails
// the initialize with the refusal.
func TestHostile_SSEEndpointOtherOriginAuto(t *testing.T) {
	evil := newSink(t)
	sse := legacySSE(t, httptest.NewServer, func(string) string { return evil.URL + "/messages" })
	h, err := DialHTTP(HTTPConfig{URL: sse.URL + "/sse", Mode: ModeAuto, Header: secretHeaders, ConnectTimeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	xe := refusal(t, h, initLine)
	if xe.Kind != ExchangeProtocol || xe.ID != jsonrpc.Int(1) || !errors.Is(xe, ErrEndpointOrigin) || !strings.Contains(xe.Msg, "another origin") {
		t.Fatalf("%+v", xe)
	}
	if got := evil.requests(); len(got) != 0 {
		t.Errorf("the other origin got %q", got)
	}
}

// An https SSE stream whose endpoint is http on the same host is a
// downgrade, refused; a relative endpoint resolves against the SSE URL.
func TestHostile_SSEEndpointDowngrade(t *testing.T) {
	sse := legacySSE(t, httptest.NewTLSServer, func(base string) string { return "http" + strings.TrimPrefix(base, "https") + "/messages" })
	_, err := DialHTTP(HTTPConfig{URL: sse.URL + "/sse", Mode: ModeSSE, Header: secretHeaders, Insecure: true, ConnectTimeout: 5 * time.Second}, nil)
	var xe *ExchangeError
	if !errors.As(err, &xe) || xe.Kind != ExchangeProtocol || !strings.Contains(xe.Msg, "from https to http") {
		t.Fatalf("DialHTTP: %v", err)
	}

	rel := legacySSE(t, httptest.NewServer, func(string) string { return "/messages?sessionId=1" })
	h, err := DialHTTP(HTTPConfig{URL: rel.URL + "/sse", Mode: ModeSSE, Header: secretHeaders, ConnectTimeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("relative endpoint: %v", err)
	}
	defer h.Close()
	if u, _ := h.target(); u.String() != rel.URL+"/messages?sessionId=1" {
		t.Errorf("endpoint %s", u)
	}
}

// redirector answers every request with status to target.
func redirector(t *testing.T, status int, target func() string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", target())
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	return s
}

// A 307 or 308 to another host is not followed, for the POSTs, the GET
// stream and the DELETE: Go would strip Authorization but send every
// other header there. It is a failed exchange naming the Location.
func TestHostile_RedirectNotFollowed(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			evil := newSink(t)
			red := redirector(t, status, func() string { return evil.URL + "/steal?x=" + strings.Repeat("a", 500) })
			h, err := DialHTTP(HTTPConfig{URL: red.URL + "/mcp", Mode: ModeStreamable, Header: secretHeaders}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			xe := refusal(t, h, initLine)
			if xe.Kind != ExchangeStatus || xe.Status != status || xe.ID != jsonrpc.Int(1) {
				t.Fatalf("%+v", xe)
			}
			if !strings.Contains(xe.Msg, "redirects to "+evil.URL+"/steal?x=aaa") || !strings.Contains(xe.Msg, "not followed") || strings.Contains(xe.Msg, strings.Repeat("a", 300)) {
				t.Errorf("message %s", xe.Msg)
			}
			// The GET stream and the DELETE.
			h.mu.Lock()
			h.session = "s1"
			h.mu.Unlock()
			if _, e := h.get("GET", "", jsonrpc.ID{}); e == nil || e.Status != status {
				t.Errorf("GET: %v", e)
			}
			h.deleteSession()
			if got := evil.requests(); len(got) != 0 {
				t.Errorf("the other host got %q", got)
			}
		})
	}
}

// authServer is a hostile MCP server with its own protected resource
// metadata (at /prm) naming authorization server as (computed from the
// server's URL), whose metadata at the RFC 8414 URI is meta; every
// request is recorded.
type authServer struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newAuthServer(t *testing.T, as func(base string) string, meta func(base string) string) *authServer {
	s := &authServer{}
	var base string
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/mcp":
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/prm"`)
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/prm":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", as(base))
		case strings.HasPrefix(r.URL.Path, wkAS):
			fmt.Fprint(w, meta(base))
		default:
			http.NotFound(w, r)
		}
	}))
	base = s.URL
	t.Cleanup(s.Close)
	return s
}

func (s *authServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// asMeta is authorization server metadata with issuer and the endpoints
// at ep.
func asMeta(issuer, ep string) string {
	return fmt.Sprintf(`{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"registration_endpoint":%q,"code_challenge_methods_supported":["S256"]}`,
		issuer, ep+"/authorize", ep+"/token", ep+"/register")
}

// Discovery refuses to fetch a link-local address (cloud metadata
// services) that a server names, in resource_metadata or in
// authorization_servers.
func TestHostile_DiscoveryLinkLocal(t *testing.T) {
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]:9/prm"} {
		t.Run(target, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+target+`"`)
				w.WriteHeader(http.StatusUnauthorized)
			}))
			defer srv.Close()
			h, err := DialHTTP(HTTPConfig{URL: srv.URL + "/mcp", Mode: ModeStreamable, AuthTimeout: 2 * time.Second}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			a := refusal(t, h, initLine).Auth
			if a == nil || len(a.Problems) != 1 || a.Problems[0].Kind != oauth.ProblemRefused || !strings.Contains(a.Problems[0].Msg, "link-local") {
				t.Fatalf("%+v", a)
			}
		})
	}
	t.Run("authorization_servers", func(t *testing.T) {
		srv := newAuthServer(t, func(string) string { return "http://169.254.169.254/as" }, func(string) string { return "{}" })
		h, err := DialHTTP(HTTPConfig{URL: srv.URL + "/mcp", Mode: ModeStreamable, AuthTimeout: 2 * time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		a := refusal(t, h, initLine).Auth
		if a == nil || a.PRM == nil || len(a.Problems) == 0 || a.Problems[0].Kind != oauth.ProblemRefused {
			t.Fatalf("%+v", a)
		}
	})
}

// Metadata fetched from another origin than the server's is noted in the
// summary.
func TestHostile_DiscoveryOtherOrigin(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"resource":"http://elsewhere.invalid/mcp"}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+other.URL+`/prm"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	h, err := DialHTTP(HTTPConfig{URL: srv.URL + "/mcp", Mode: ModeStreamable}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	xe := refusal(t, h, initLine)
	if xe.Auth == nil || !strings.Contains(xe.Auth.Summary(), "fetched from another origin than the server's: "+other.URL) {
		t.Fatalf("%+v", xe.Auth)
	}
}

// Discovery's GETs follow at most a few redirects, with none of the
// user's headers.
func TestHostile_DiscoveryRedirects(t *testing.T) {
	var hops int
	var mu sync.Mutex
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/prm/0"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/prm/") {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		hops++
		mu.Unlock()
		if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Authorization") != "" {
			t.Errorf("discovery GET %s carried %v", r.URL, r.Header)
		}
		var n int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/prm/"), "%d", &n)
		http.Redirect(w, r, fmt.Sprintf("/prm/%d", n+1), http.StatusFound)
	}))
	defer srv.Close()
	h, err := DialHTTP(HTTPConfig{URL: srv.URL + "/mcp", Mode: ModeStreamable, Header: secretHeaders}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	a := refusal(t, h, initLine).Auth
	if a == nil || len(a.Problems) == 0 || !strings.Contains(a.Problems[0].Msg, "stopped after 3 redirects") {
		t.Fatalf("%+v", a)
	}
	mu.Lock()
	defer mu.Unlock()
	if hops != 1+3 {
		t.Errorf("%d GETs", hops)
	}
}
