// Package otlptest is a test helper: an OTLP/HTTP collector on a loopback
// socket that keeps what it is sent (protobuf, as the SDK's exporters send
// it), for the tests of the commands that export a session.
package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector receives /v1/traces and /v1/metrics.
type Collector struct {
	// URL is the base URL (--otlp-endpoint).
	URL string

	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []string
	headers []http.Header
}

// Start starts a collector, closed when the test ends.
func Start(t testing.TB) *Collector {
	c := &Collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.headers = append(c.headers, r.Header.Clone())
		switch r.URL.Path {
		case "/v1/traces":
			var req coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				t.Errorf("otlptest: traces: %v", err)
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					c.spans = append(c.spans, ss.Spans...)
				}
			}
		case "/v1/metrics":
			var req colmetricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				t.Errorf("otlptest: metrics: %v", err)
			}
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						c.metrics = append(c.metrics, m.Name)
					}
				}
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// Spans returns the spans received so far.
func (c *Collector) Spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// Span returns the first span named name, or nil.
func (c *Collector) Span(name string) *tracepb.Span {
	for _, s := range c.Spans() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Metrics returns the names of the metrics received so far.
func (c *Collector) Metrics() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.metrics...)
}

// Headers returns the headers of every export received so far.
func (c *Collector) Headers() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]http.Header(nil), c.headers...)
}

// Attr returns the string value of a span's attribute key ("" if none).
func Attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// Discard starts a collector that reads every export and keeps nothing
// (a collector on another machine, for benchmarks), and returns its base
// URL; it is closed when the test ends.
func Discard(t testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
