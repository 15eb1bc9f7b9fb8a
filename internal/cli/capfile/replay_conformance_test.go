package capfile_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// httpRecorder is a recording client for the test: an HTTP proxy in front
// of a Streamable HTTP server that writes what goes through it as a sonde
// capture (docs/capture-format.md): the client's messages out, the
// server's in (JSON bodies and SSE events alike), a restart record before
// each new session's initialize. It stands in for a `sonde tap` over HTTP,
// which does not exist yet.
type httpRecorder struct {
	upstream string // the server's endpoint URL
	start    time.Time

	mu      sync.Mutex
	records []string
	seq     int
	started bool
}

func (rc *httpRecorder) add(dir string, raw []byte) {
	msg, err := jsonrpc.Decode(raw)
	if err != nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.seq++
	rec := map[string]any{"type": "frame", "seq": rc.seq, "t": time.Since(rc.start).Nanoseconds(), "dir": dir, "raw": string(raw)}
	switch msg.Kind {
	case jsonrpc.KindRequest:
		rec["kind"], rec["method"], rec["id"] = "request", msg.Method, msg.ID
		if dir == "out" && msg.Method == "initialize" {
			if rc.started {
				rc.records = append(rc.records, fmt.Sprintf(`{"type":"restart","seq":%d,"t":%d}`, rc.seq, time.Since(rc.start).Nanoseconds()))
				rc.seq++
				rec["seq"] = rc.seq
			}
			rc.started = true
		}
	case jsonrpc.KindNotification:
		rec["kind"], rec["method"] = "notification", msg.Method
	case jsonrpc.KindResponse:
		rec["kind"], rec["id"] = "response", msg.ID
	}
	b, _ := json.Marshal(rec)
	rc.records = append(rc.records, string(b))
}

// ServeHTTP forwards one exchange and records its messages.
func (rc *httpRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if len(bytes.TrimSpace(body)) > 0 {
		rc.add("out", bytes.TrimSpace(body))
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, rc.upstream, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		w.Write(b)
		if resp.Header.Get("Content-Type") == "application/json" {
			rc.add("in", bytes.TrimSpace(b))
		}
		return
	}
	flusher, _ := w.(http.Flusher)
	rd := bufio.NewReader(resp.Body)
	var data strings.Builder
	for {
		line, err := rd.ReadString('\n')
		w.Write([]byte(line))
		if flusher != nil {
			flusher.Flush()
		}
		switch t := strings.TrimRight(line, "\r\n"); {
		case strings.HasPrefix(t, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(t, "data:"), " "))
		case t == "":
			if d := data.String(); d != "" && d != "{}" {
				rc.add("in", []byte(d))
			}
			data.Reset()
		}
		if err != nil {
			return
		}
	}
}

// write saves the capture.
func (rc *httpRecorder) write(t *testing.T, path string) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	head := fmt.Sprintf(`{"type":"header","format":"sonde-capture","version":"1.2","sonde":"test","start":%q,"transport":"http"}`, rc.start.UTC().Format(time.RFC3339Nano))
	if err := os.WriteFile(path, []byte(head+"\n"+strings.Join(rc.records, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReplayServeConformance: the official conformance suite's server
// scenarios, run against server-everything over Streamable HTTP through a
// recording proxy, then against `sonde replay --serve --listen` on that
// capture: every scenario that passed against the real server passes
// against the mock (the others fail against both: server-everything does
// not have the conformance server's tools, prompts and resources).
func TestReplayServeConformance(t *testing.T) {
	peertest.Conformance(t) // skip early when it is not installed
	rc := &httpRecorder{upstream: peertest.EverythingHTTP(t, "streamableHttp") + "/mcp", start: time.Now()}
	proxy := httptest.NewServer(rc)
	defer proxy.Close()
	live := peertest.ConformanceResults(t, proxy.URL+"/mcp")
	capture := filepath.Join(t.TempDir(), "conformance.jsonl")
	rc.write(t, capture)

	mocked := peertest.ConformanceResults(t, listenMock(t, capture)+"/mcp")
	var passed, lost, gained []string
	for name, ok := range live {
		switch {
		case ok && mocked[name]:
			passed = append(passed, name)
		case ok:
			lost = append(lost, name)
		case mocked[name]:
			gained = append(gained, name)
		}
	}
	sort.Strings(passed)
	sort.Strings(lost)
	sort.Strings(gained)
	t.Logf("passed against server-everything and the mock: %s", strings.Join(passed, ", "))
	if len(gained) > 0 {
		t.Logf("passed against the mock only: %s", strings.Join(gained, ", "))
	}
	if len(lost) > 0 {
		t.Errorf("passed against server-everything, not against the mock: %s", strings.Join(lost, ", "))
	}
	// What server-everything 2026.8.31 passes (docs/replay.md): the others
	// need the conformance server's own tools, prompts and resources.
	const want = "logging-set-level, ping, prompts-list, resources-list, resources-subscribe, resources-unsubscribe, server-initialize, server-sse-multiple-streams, tools-call-error, tools-call-simple-text, tools-list"
	if got := strings.Join(passed, ", "); got != want {
		t.Errorf("passed on both: %s\nwant %s", got, want)
	}
}
