package observe

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
)

// seen is a loopback HTTP server that answers 200 to every export and
// keeps the headers of each request it got.
type seen struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []http.Header
	// redirect, when set, answers 307 to it + the request's path
	// instead (for paths under /old/, when sameOrigin is set).
	redirect   string
	sameOrigin bool
}

func newSeen(t *testing.T, redirect string, sameOrigin bool) *seen {
	s := &seen{redirect: redirect, sameOrigin: sameOrigin}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, r.Header.Clone())
		s.mu.Unlock()
		switch {
		case s.sameOrigin && strings.HasPrefix(r.URL.Path, "/old/"):
			http.Redirect(w, r, strings.TrimPrefix(r.URL.Path, "/old"), http.StatusTemporaryRedirect)
		case s.redirect != "":
			http.Redirect(w, r, s.redirect+r.URL.Path, http.StatusTemporaryRedirect)
		default:
			w.Header().Set("Content-Type", "application/x-protobuf")
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *seen) headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.got...)
}

// export runs a short fixture session exported to endpoint with header
// X-Api-Key: key (traces and metrics) and returns the stats of Shutdown.
func export(t *testing.T, endpoint, key string) Stats {
	t.Helper()
	tel, err := New(context.Background(), Config{Endpoint: endpoint, Headers: map[string]string{"X-Api-Key": key}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(client.Options{RequestMeta: NewInjector(trace.SpanContext{}).Meta})
	tel.Follow(c.Subscribe(DefaultBuffer), FoldOptions{})
	start(t, c)
	if _, _, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"value":"v"}`), client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return tel.Shutdown(ctx)
}

// TestRedirectCrossOrigin: a collector that answers 307 to another origin
// (here another port of the same host: Go's own rule, which strips only
// Authorization and Cookie and only for another host, would carry the
// header there) never gets sonde's --otlp-header there, for traces and
// metrics alike; the export fails with a message that says why.
func TestRedirectCrossOrigin(t *testing.T) {
	other := newSeen(t, "", false)
	first := newSeen(t, other.srv.URL, false)
	st := export(t, first.srv.URL, "secret-key-1")
	if len(first.headers()) < 2 {
		t.Fatalf("the first collector got %d requests, want traces and metrics", len(first.headers()))
	}
	if n := len(other.headers()); n != 0 {
		t.Fatalf("the other origin got %d requests (%v), want none", n, other.headers())
	}
	if st.Err == nil || !strings.Contains(st.Err.Error(), "another origin") {
		t.Errorf("traces: err %v, want the redirect refused", st.Err)
	}
	if st.MetricsErr == nil || !strings.Contains(st.MetricsErr.Error(), "another origin") {
		t.Errorf("metrics: err %v, want the redirect refused", st.MetricsErr)
	}
	if w := st.Warning(); strings.Count(w, "another origin") != 2 || strings.Contains(w, "secret-key-1") {
		t.Errorf("warning %q", w)
	}
}

// TestRedirectSameOrigin: a redirect within the collector's origin is
// followed, headers and all.
func TestRedirectSameOrigin(t *testing.T) {
	s := newSeen(t, "", true)
	st := export(t, s.srv.URL+"/old", "secret-key-2")
	if st.Err != nil || st.MetricsErr != nil || st.Exported == 0 {
		t.Fatalf("stats %+v", st)
	}
	var followed int
	for _, h := range s.headers() {
		if h.Get("X-Api-Key") != "secret-key-2" {
			t.Errorf("a request without the header: %v", h)
		}
		followed++
	}
	if followed < 4 {
		t.Errorf("%d requests, want traces and metrics each redirected then followed", followed)
	}
}

// TestOrigin: the origin fills in the scheme's port and ignores case, so
// http://H and http://h:80 are one origin and http://h:81 another.
func TestOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"http://Example.com/v1/traces", "http://example.com:80/v1/metrics", true},
		{"https://example.com/a", "https://example.com:443/b", true},
		{"http://example.com/a", "https://example.com/a", false},
		{"http://127.0.0.1:4318/a", "http://127.0.0.1:4319/a", false},
		{"http://example.com/a", "http://example.com.evil/a", false},
		{"http://[::1]:4318/a", "http://[::1]:4318/b", true},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := origin(a) == origin(b); got != tc.same {
			t.Errorf("origin(%s) %s, origin(%s) %s: same %v, want %v", tc.a, origin(a), tc.b, origin(b), got, tc.same)
		}
	}
}
