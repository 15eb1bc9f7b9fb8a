package transport

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"greet":              "greet",
		"greet (structured)": "greet (structured)",
		"héllo":              "=?base64?aMOpbGxv?=",
		" padded":            "=?base64?IHBhZGRlZA==?=",
		"tab\t":              "=?base64?dGFiCQ==?=",
		"=?base64?abc?=":     "=?base64?PT9iYXNlNjQ/YWJjPz0=?=",
		"":                   "",
	} {
		if got := headerValue(in); got != want {
			t.Errorf("headerValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestModernPOSTHeaders sends modern and legacy requests to a real loopback
// server and checks the headers each POST carried, and that a modern
// response stream that drops is not resumed.
func TestModernPOSTHeaders(t *testing.T) {
	var mu sync.Mutex
	got := map[string]http.Header{}
	var gets int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			mu.Lock()
			gets++
			mu.Unlock()
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		got[r.Header.Get("Mcp-Method")+"|"+r.Header.Get("Mcp-Name")] = r.Header.Clone()
		mu.Unlock()
		if r.Header.Get("Mcp-Name") == "drop" {
			// A stream with an event id that ends before the response.
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: 1\ndata: \n\n"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + idOf(r) + `,"result":{}}`))
	}))
	defer srv.Close()
	h, err := DialHTTP(HTTPConfig{URL: srv.URL + "/mcp", Mode: ModeStreamable}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"héllo",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
	} {
		if err := h.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if f, err := h.Read(); err != nil || f.Msg.ID.String() != string(rune('1'+i)) {
			t.Fatalf("read %d: %+v %v", i, f, err)
		}
	}
	mu.Lock()
	for key, want := range map[string][3]string{
		"tools/call|=?base64?aMOpbGxv?=": {"2026-07-28", "tools/call", "=?base64?aMOpbGxv?="},
		"resources/read|file:///a":       {"2026-07-28", "resources/read", "file:///a"},
		"tools/list|":                    {"2026-07-28", "tools/list", ""},
	} {
		hd := got[key]
		if hd == nil || hd.Get("Mcp-Protocol-Version") != want[0] || hd.Get("Mcp-Method") != want[1] || hd.Get("Mcp-Name") != want[2] || hd.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: headers %v", key, hd)
		}
	}
	if hd := got["|"]; hd == nil || hd.Get("Mcp-Protocol-Version") != "" {
		t.Errorf("legacy request: headers %v", hd)
	}
	mu.Unlock()
	if err := h.Write([]byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"drop",` + meta + `}}`)); err != nil {
		t.Fatal(err)
	}
	_, err = h.Read()
	var xe *ExchangeError
	if !errors.As(err, &xe) || xe.Kind != ExchangeStreamEnded || !strings.Contains(xe.Msg, "the modern era has no resumption") {
		t.Fatalf("dropped modern stream: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if gets != 0 {
		t.Errorf("%d GETs: a modern stream was resumed (or a GET stream opened)", gets)
	}
}

// idOf returns the raw id of the request in r's body (test server only).
func idOf(r *http.Request) string {
	b := make([]byte, 4096)
	n, _ := r.Body.Read(b)
	s := string(b[:n])
	i := strings.Index(s, `"id":`)
	j := strings.Index(s[i:], ",")
	return s[i+5 : i+j]
}
