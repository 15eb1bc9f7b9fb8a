package peertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// JaegerVersion is the jaeger program `make peers` builds into interop/bin.
const JaegerVersion = "v1.76.0"

// Jaeger is a Jaeger all-in-one with in-memory storage, on loopback
// ports of its own.
type Jaeger struct {
	// OTLP is the base URL of its OTLP/HTTP receiver (--otlp-endpoint).
	OTLP string
	// Query is the base URL of its query API (/api/traces/ID).
	Query string
}

// StartJaeger runs interop/bin/jaeger (skipped, or failed in CI, when it is
// not installed) with a configuration of free loopback ports, and returns
// once its query API answers. It is killed when the test ends.
func StartJaeger(t testing.TB) *Jaeger {
	t.Helper()
	bin := Need(t, filepath.Join("interop", "bin", "jaeger"))
	otlp, query, grpc := freeAddr(t), freeAddr(t), freeAddr(t)
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	conf := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, query, grpc, otlp)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	waitListen(t, otlp, "jaeger's OTLP receiver")
	waitListen(t, query, "jaeger's query API")
	return &Jaeger{OTLP: "http://" + otlp, Query: "http://" + query}
}

// JaegerSpan is a span as Jaeger's query API (/api/traces) returns it.
type JaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
	Logs []struct {
		Fields []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"fields"`
	} `json:"logs"`
	ProcessID string `json:"processID"`
}

// Tag is the value of a span's tag as text ("" when it has none).
func (s *JaegerSpan) Tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// Parent is the span id the span is a CHILD_OF ("" for a root).
func (s *JaegerSpan) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Trace reads the trace traceID back through the query API, waiting (up to
// 20 s) until it holds at least n spans.
func (j *Jaeger) Trace(t testing.TB, traceID string, n int) []JaegerSpan {
	t.Helper()
	var got []JaegerSpan
	for deadline := time.Now().Add(20 * time.Second); ; {
		got = j.get(t, traceID)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger: trace %s has %d spans, want %d", traceID, len(got), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (j *Jaeger) get(t testing.TB, traceID string) []JaegerSpan {
	resp, err := http.Get(j.Query + "/api/traces/" + traceID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Spans []JaegerSpan `json:"spans"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil // not there yet (404)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("jaeger: /api/traces/%s: %v", traceID, err)
	}
	if len(body.Data) == 0 {
		return nil
	}
	return body.Data[0].Spans
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// waitListen waits (up to 20 s) until addr accepts connections.
func waitListen(t testing.TB, addr, what string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s: %v", what, addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
