package oauth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// toServer sends every request, whatever host it names, to one loopback
// server: what a fuzzed document points at is never looked for outside.
type toServer struct{ tr *http.Transport }

func (s toServer) RoundTrip(r *http.Request) (*http.Response, error) { return s.tr.RoundTrip(r) }

// FuzzMetadataChecks: whatever protected resource and authorization
// server metadata a server serves ($ in them is its own host), discovery
// neither panics nor says yes to what it should refuse: every problem has
// a kind and a message, and a discovery without problems found a resource
// that is this server, an issuer that is the one named, both endpoints,
// and S256.
func FuzzMetadataChecks(f *testing.F) {
	good := `{"resource":"http://$/mcp","authorization_servers":["http://$/as"]}`
	as := `{"issuer":"http://$/as","authorization_endpoint":"http://$/as/authorize","token_endpoint":"http://$/as/token","code_challenge_methods_supported":["S256"]}`
	f.Add(good, as)
	f.Add(`{"resource":"http://$/","authorization_servers":["http://$/as/"]}`, strings.Replace(as, `"S256"`, `"plain"`, 1))
	f.Add(`{"resource":"http://$/mcp/other","authorization_servers":["http://$/as"]}`, strings.Replace(as, `http://$/as"`, `http://evil.example/as"`, 1))
	f.Add(`{"resource":"http://$:1/mcp","authorization_servers":[]}`, `{}`)
	f.Add(`{"resource":"https://$/mcp","authorization_servers":["ftp://$/as"]}`, `[]`)
	f.Add(`{"resource":"HTTP://$/MCP","authorization_servers":["http://169.254.169.254/as"]}`, `{"issuer":null}`)
	f.Add(`{"resource":"http://$/mcp","authorization_servers":"http://$/as"}`, `not json`)
	f.Add(`{"resource":"http://$/mcp?x#y","authorization_servers":["http://$/as","http://$/b"]}`, strings.Replace(as, `"token_endpoint":"http://$/as/token",`, ``, 1))
	f.Add(`{"resource":"http://$/mc","authorization_servers":["http://$/as"]}`, strings.Replace(as, `,"code_challenge_methods_supported":["S256"]`, ``, 1))
	saved := resolver
	f.Cleanup(func() { resolver = saved })
	resolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in this test")
	}}
	var mu sync.Mutex
	var prm, asm string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		p, a := prm, asm
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
			_, _ = w.Write([]byte(strings.ReplaceAll(p, "$", r.Host)))
		case strings.Contains(r.URL.Path, "/.well-known/"):
			_, _ = w.Write([]byte(strings.ReplaceAll(a, "$", r.Host)))
		default:
			http.NotFound(w, r)
		}
	}))
	f.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}, DisableKeepAlives: true}
	f.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: toServer{tr}}
	server, _ := url.Parse(srv.URL + "/mcp")
	f.Fuzz(func(t *testing.T, p, a string) {
		mu.Lock()
		prm, asm = p, a
		mu.Unlock()
		d := NewDiscoverer(server, hc, 10*time.Second).Discover(context.Background(), 401, "", func(Event) {})
		for _, pr := range d.Problems {
			if pr == nil || pr.Kind == 0 || pr.Msg == "" {
				t.Fatalf("prm %q, as %q: problem %+v", p, a, pr)
			}
		}
		if p == good && a == as && (len(d.Problems) > 0 || d.AS == nil) {
			t.Fatalf("the good metadata: %+v, problems %v", d, d.Problems)
		}
		if len(d.Problems) > 0 || d.LegacyAS {
			return
		}
		if d.PRM == nil || d.AS == nil {
			t.Fatalf("prm %q, as %q: no problem, but PRM %v, AS %v", p, a, d.PRM, d.AS)
		}
		if !resourceMatches(d.PRM.Resource, server) {
			t.Fatalf("prm %q: resource %q taken for %s", p, d.PRM.Resource, server)
		}
		issuer := d.PRM.AuthorizationServers[0]
		if strings.TrimSuffix(d.AS.Issuer, "/") != strings.TrimSuffix(issuer, "/") || d.AS.AuthorizationEndpoint == "" || d.AS.TokenEndpoint == "" || !d.AS.S256() {
			t.Fatalf("prm %q, as %q: metadata %+v taken for issuer %s", p, a, d.AS, issuer)
		}
	})
}

// FuzzResourceMatches: a resource matches only a server of its origin
// (scheme, host, port) whose path is the resource's or below it; every
// server URL matches itself, and a resource that matches a server matches
// the paths below it too.
func FuzzResourceMatches(f *testing.F) {
	for _, s := range [][2]string{
		{"http://h/mcp", "http://h/mcp"}, {"http://h/", "http://h:80/mcp/x"}, {"http://h/mc", "http://h/mcp"}, {"HTTPS://H/a/", "https://h:443/a?q"},
		{"http://h:81/mcp", "http://h/mcp"}, {"//h/mcp", "http://h/mcp"}, {"http://h/a%2Fb", "http://h/a/b"}, {"http://u@h/mcp", "http://h/mcp"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, resource, rawServer string) {
		server, err := url.Parse(rawServer)
		if err != nil || server.Host == "" {
			return
		}
		if !resourceMatches(server.String(), server) {
			t.Fatalf("%s does not match itself", server)
		}
		if !resourceMatches(resource, server) {
			return
		}
		r, _ := url.Parse(resource)
		if !SameOrigin(r, server) {
			t.Fatalf("resource %q matches %s, another origin", resource, server)
		}
		rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(server.EscapedPath(), "/")
		if sp != rp && !strings.HasPrefix(sp, rp+"/") {
			t.Fatalf("resource %q matches %s, not below its path", resource, server)
		}
		below := *server
		below.Path, below.RawPath = strings.TrimSuffix(server.Path, "/")+"/below", ""
		if server.RawPath != "" {
			below.RawPath = strings.TrimSuffix(server.RawPath, "/") + "/below"
		}
		if !resourceMatches(resource, &below) {
			t.Fatalf("resource %q matches %s but not %s", resource, server, below.String())
		}
	})
}
