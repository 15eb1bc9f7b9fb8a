package oauth

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Discoverer on its own: the challenge's resource_metadata URL, then
// the issuer's RFC 8414 metadata; one run per resource_metadata URL, its
// GETs reported as events of stream "auth"; the challenge part is each
// refusal's own.
func TestDiscoverer(t *testing.T) {
	var mu sync.Mutex
	var gets []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets = append(gets, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/prm":
			fmt.Fprintf(w, `{"resource":"http://%s/mcp","authorization_servers":["http://%s/as"],"scopes_supported":["a"]}`, r.Host, r.Host)
		case "/.well-known/oauth-authorization-server/as":
			fmt.Fprintf(w, `{"issuer":"http://%s/as","authorization_endpoint":"http://%[1]s/as/authorize","token_endpoint":"http://%[1]s/as/token","code_challenge_methods_supported":["S256"]}`, r.Host)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	server, _ := url.Parse(srv.URL + "/mcp")
	d := NewDiscoverer(server, srv.Client(), 5*time.Second)
	var events []Event
	note := func(ev Event) { events = append(events, ev) }
	challenge := `Bearer resource_metadata="` + srv.URL + `/prm", scope="x"`
	a := d.Discover(t.Context(), 401, challenge, note)
	if a.PRM == nil || a.AS == nil || a.Scope != "x" || len(a.Problems) != 0 || a.AS.TokenEndpoint != srv.URL+"/as/token" {
		t.Fatalf("%+v", a)
	}
	b := d.Discover(t.Context(), 403, `Bearer error="insufficient_scope", resource_metadata="`+srv.URL+`/prm", scope="y"`, note)
	if b.Status != 403 || b.Scope != "y" || b.Error != "insufficient_scope" || b.AS == nil || b.PRMURL != srv.URL+"/prm" {
		t.Fatalf("%+v", b)
	}
	if fmt.Sprint(gets) != "[/prm /.well-known/oauth-authorization-server/as]" {
		t.Errorf("GETs %q: want one run", gets)
	}
	if len(events) != 2 || events[0].Stream != StreamDiscovery || events[0].Status != 200 || !strings.HasPrefix(events[1].Note, "authorization server metadata") {
		t.Errorf("events %+v", events)
	}
}
