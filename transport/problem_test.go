package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStreamNoteProblem: a response stream that ends before the response
// is a stream note marked Problem (Frames counts it with n/N), a priming
// event is not, and the resumed stream brings the response.
func TestStreamNoteProblem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: e1\nretry: 10\ndata: \n\n")) // a priming event, then the stream ends
		case r.Header.Get("Last-Event-ID") == "e1":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	defer srv.Close()
	var mu sync.Mutex
	var notes []HTTPEvent
	h, err := DialHTTP(HTTPConfig{URL: srv.URL + "/mcp", Mode: ModeStreamable}, func(ev Event) {
		if ev.Kind == EventHTTP && ev.HTTP.Method == "" && ev.HTTP.Stream == "POST 1" {
			mu.Lock()
			notes = append(notes, *ev.HTTP)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	time.AfterFunc(5*time.Second, func() {
		select {
		case <-done:
		default:
			h.Close()
		}
	})
	f, err := h.Read()
	close(done)
	if err != nil || f.Msg.ID.String() != "1" {
		t.Fatalf("read: %+v %v", f, err)
	}
	mu.Lock()
	defer mu.Unlock()
	var priming, resume bool
	for _, n := range notes {
		switch {
		case strings.Contains(n.Note, "priming"):
			priming = true
			if n.Problem {
				t.Errorf("priming note marked a problem: %q", n.Note)
			}
		case strings.Contains(n.Note, "resuming"):
			resume = true
			if !n.Problem {
				t.Errorf("resume note not marked a problem: %q", n.Note)
			}
		}
	}
	if !priming || !resume {
		t.Fatalf("notes %+v: want a priming note and a resume note", notes)
	}
}
