package serve

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/loopback"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// FuzzHandler: any request (method, path, headers, body), with or without
// a session started first, driven through the mock's HTTP handler (sonde
// replay --serve --listen) never panics and always gets a response: 403
// for a Host or Origin that is not loopback, 405 for a method the mock
// does not serve, 406 for a GET that does not accept an event stream, a
// 4xx for a POST body that is not one JSON-RPC message (413 past the
// cap); otherwise nothing worse than 502 (the recorded server's exit
// ended the session). The response stays bounded (the recorder takes at
// most 4 MiB), and Close leaves no mock running (goleak).
func FuzzHandler(f *testing.F) {
	capt, err := os.ReadFile(sample)
	if err != nil {
		f.Fatal(err)
	}
	script, err := Build(bytes.NewReader(capt))
	if err != nil {
		f.Fatal(err)
	}
	const accept = "Accept: application/json, text/event-stream"
	for _, s := range []struct {
		method, path, header, body string
		session                    bool
	}{
		{"POST", "/mcp", accept, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, false},
		{"POST", "/mcp", accept, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":300}}}`, true},
		{"POST", "/mcp", "Accept: application/json", `{"jsonrpc":"2.0","id":"x","method":"tools/list"}`, true},
		{"POST", "/mcp", accept, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
		{"POST", "/mcp", accept, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false},
		{"POST", "/mcp", accept, `{"jsonrpc":"2.0","id":1,`, false},
		{"POST", "/mcp", accept, strings.Repeat("x", 5000), true},
		{"GET", "/mcp", "Accept: text/event-stream", "", true},
		{"GET", "/mcp", "", "", true},
		{"DELETE", "/mcp", "", "", true},
		{"PUT", "/mcp", "", "{}", false},
		{"GET", "/sse", "Accept: text/event-stream", "", false},
		{"POST", "/message?sessionId=nope", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, false},
		{"POST", "/mcp", "Origin: http://evil.example\n" + accept, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, false},
		{"POST", "/mcp", "Host: evil.example", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, false},
		{"POST", "/mcp", "Origin: null", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, true},
	} {
		f.Add(s.method, s.path, s.header, []byte(s.body), s.session)
	}
	f.Fuzz(func(t *testing.T, method, path, header string, body []byte, session bool) {
		const maxLine = 4 << 10
		h, err := NewHandler(script, Options{LoopbackOnly: true, MaxLineBytes: maxLine})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		sid := ""
		if session {
			req, _ := http.NewRequest("POST", "http://127.0.0.1:3001/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
			req.Header.Set("Accept", "application/json")
			w := newRecorder()
			h.ServeHTTP(w, req)
			if sid = w.Header().Get(SessionHeader); w.status != 200 || sid == "" {
				t.Fatalf("initialize: %d %q", w.status, w.body.String())
			}
		}
		// A GET may open a stream that lasts until the client goes: it
		// goes after a moment; anything else must be answered well before
		// its deadline.
		req, err := http.NewRequest(method, "http://127.0.0.1:3001"+path, bytes.NewReader(body))
		if err != nil {
			return // not a request a server could be given
		}
		method = req.Method // "" is GET
		wait := 20 * time.Second
		if method == http.MethodGet {
			wait = 100 * time.Millisecond
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		req = req.WithContext(ctx)
		req.Host = "127.0.0.1:3001"
		if sid != "" {
			req.Header.Set(SessionHeader, sid)
		}
		for _, l := range strings.Split(header, "\n") {
			name, value, ok := strings.Cut(l, ":")
			if !ok || name == "" {
				continue
			}
			value = strings.TrimSpace(value)
			if http.CanonicalHeaderKey(name) == "Host" {
				req.Host = value
				continue
			}
			req.Header.Set(name, value)
		}
		w := newRecorder()
		h.ServeHTTP(w, req)
		if w.status == 0 {
			t.Fatalf("%s %s: no response (deadline passed: %v)", method, path, ctx.Err() != nil)
		}
		refused := !loopback.Host(req.Host) || !loopback.Origin(req.Header.Get("Origin"))
		msg, derr := jsonrpc.Decode(bytes.TrimSpace(body))
		garbage := derr != nil || bytes.HasPrefix(bytes.TrimSpace(body), []byte("["))
		switch {
		case refused:
			if w.status != http.StatusForbidden {
				t.Fatalf("Host %q, Origin %q: %d, want 403", req.Host, req.Header.Get("Origin"), w.status)
			}
		case method != http.MethodGet && method != http.MethodPost && method != http.MethodDelete:
			if w.status != http.StatusMethodNotAllowed {
				t.Fatalf("%s: %d, want 405", method, w.status)
			}
		case method == http.MethodPost && len(body) > maxLine:
			if w.status != http.StatusRequestEntityTooLarge && w.status != http.StatusNotFound {
				t.Fatalf("a body of %d bytes: %d, want 413", len(body), w.status)
			}
		case method == http.MethodPost && garbage:
			if w.status < 400 || w.status > 499 {
				t.Fatalf("POST %q: %d %q, want a 4xx", body, w.status, w.body.String())
			}
		case method == http.MethodGet && req.URL.Path != "/sse" && !strings.Contains(req.Header.Get("Accept"), "text/event-stream"):
			if w.status != http.StatusNotAcceptable {
				t.Fatalf("GET without Accept: %d, want 406", w.status)
			}
		default:
			if w.status >= 500 && w.status != http.StatusBadGateway {
				t.Fatalf("%s %s %v: %d %q", method, path, msg.Kind, w.status, w.body.String())
			}
		}
		h.mu.Lock()
		n := len(h.sessions)
		h.mu.Unlock()
		if n > MaxSessions {
			t.Fatalf("%d sessions", n)
		}
	})
}
