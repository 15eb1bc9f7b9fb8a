package serve

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestHTTPSessionsBounded: sessions never ended (no DELETE) are at most
// MaxSessions: the initialize past it ends the oldest (its id then gets
// 404) and the log says so. Before, every initialize kept a mock running
// until DELETE: 300 clients that never said goodbye, 300 mocks.
func TestHTTPSessionsBounded(t *testing.T) {
	s := captureOf(t, "session 2025-06-18", initV1, initR1)
	var log proctest.Buffer
	h, err := NewHandler(s, Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var ids []string
	for range MaxSessions + 44 {
		req, _ := http.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(strings.TrimPrefix(initV1, ">")))
		req.Header.Set("Accept", "application/json")
		w := newRecorder()
		h.ServeHTTP(w, req)
		if w.status != 200 {
			t.Fatalf("initialize: %d %s", w.status, w.body.String())
		}
		ids = append(ids, w.Header().Get(SessionHeader))
	}
	h.mu.Lock()
	n := len(h.sessions)
	h.mu.Unlock()
	if n > MaxSessions {
		t.Errorf("%d sessions, want at most %d", n, MaxSessions)
	}
	req, _ := http.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set(SessionHeader, ids[0])
	w := newRecorder()
	h.ServeHTTP(w, req)
	if w.status != 404 || !strings.Contains(log.String(), "ended the oldest session "+ids[0]) {
		t.Errorf("the oldest session: %d; log:\n%.1000s", w.status, log.String())
	}
}

// TestStreamBytesBounded: what waits on one stream for a reader that does
// not read is at most maxStreamBytes (as well as 256 lines): a stream of
// a capture with 1 MiB lines does not hold 256 MiB.
func TestStreamBytesBounded(t *testing.T) {
	st := newStream()
	line := bytes.Repeat([]byte("x"), 1<<20)
	taken := 0
	for range 256 {
		if st.send(line) {
			taken += len(line)
		}
	}
	if taken > maxStreamBytes {
		t.Errorf("%d bytes waiting on one stream, want at most %d", taken, maxStreamBytes)
	}
	got := st.take(<-st.ch)
	if !st.send(line) || len(got) != len(line) {
		t.Error("a line taken makes room for another")
	}
}

// recorder is an http.ResponseWriter that keeps the status and the body,
// and says whether a response was written at all.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{h: http.Header{}} }

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(200)
	if r.body.Len() > 4<<20 {
		return 0, io.ErrShortWrite
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() {}
