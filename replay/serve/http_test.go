package serve

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTP: Streamable HTTP: initialize opens a session (Mcp-Session-Id),
// a request is answered as JSON or as SSE after the lines played before
// it, a notification gets 202, an unknown session 404, DELETE ends the
// session; every session gets its own mock (the recorded answers start
// again). Legacy HTTP+SSE: the endpoint event, then the answers on the
// stream.
func TestHTTP(t *testing.T) {
	s := captureOf(t, "session 2025-06-18", initV1, initR1,
		`>{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`,
		`<{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"before"}}`,
		`<not json`,
		`<{"jsonrpc":"2.0","id":2,"result":{"n":1}}`,
		`>{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`,
		`<{"jsonrpc":"2.0","id":3,"result":{"n":2}}`,
	)
	srv := serveHTTP(t, s, Options{Repeat: RepeatFail})
	post := func(session, accept, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		if session != "" {
			req.Header.Set(SessionHeader, session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	const both = "application/json, text/event-stream"
	call := `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`
	for range 2 { // two sessions: each starts with the first recorded answer
		resp, body := post("", "application/json", strings.TrimPrefix(initV1, ">"))
		sid := resp.Header.Get(SessionHeader)
		if resp.StatusCode != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
			t.Fatalf("initialize: %d %q %s", resp.StatusCode, sid, body)
		}
		if resp, _ := post(sid, both, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 202 {
			t.Errorf("notification: %d", resp.StatusCode)
		}
		resp, body = post(sid, both, call)
		want := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"before\"}}\n\n" +
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"c\",\"result\":{\"n\":1}}\n\n"
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || body != want {
			t.Errorf("SSE call: %d %s\n%q\nwant %q", resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
		}
		resp, body = post(sid, "application/json", call)
		if resp.Header.Get("Content-Type") != "application/json" || body != `{"jsonrpc":"2.0","id":"c","result":{"n":2}}` {
			t.Errorf("JSON call: %s %s", resp.Header.Get("Content-Type"), body)
		}
		if _, body = post(sid, both, call); !strings.Contains(body, `"code":-32010`) {
			t.Errorf("third call (--repeat fail): %s", body)
		}
		req, _ := http.NewRequest("DELETE", srv.URL+"/mcp", nil)
		req.Header.Set(SessionHeader, sid)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
			t.Errorf("DELETE: %v %v", resp, err)
		}
		if resp, _ := post(sid, both, call); resp.StatusCode != 404 {
			t.Errorf("after DELETE: %d", resp.StatusCode)
		}
	}
	if resp, body := post("", both, `{"jsonrpc":"2.0","id":1,`); resp.StatusCode != 400 || !strings.Contains(body, "-32700") {
		t.Errorf("not JSON: %d %s", resp.StatusCode, body)
	}

	// Legacy HTTP+SSE.
	resp, err := http.Get(srv.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	event := func() string {
		var b strings.Builder
		for {
			l, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("SSE: %v (%q)", err, b.String())
			}
			if l == "\n" {
				return b.String()
			}
			b.WriteString(l)
		}
	}
	ev := event()
	endpoint := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(ev, "\n", 2)[1], "data: "))
	if !strings.HasPrefix(ev, "event: endpoint\ndata: /message?sessionId=") {
		t.Fatalf("endpoint event %q", ev)
	}
	r2, err := http.Post(srv.URL+endpoint, "application/json", strings.NewReader(call))
	if err != nil || r2.StatusCode != 202 {
		t.Fatalf("legacy POST: %v %v", r2, err)
	}
	r2.Body.Close()
	event() // the notification
	if ev := event(); ev != "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"c\",\"result\":{\"n\":1}}\n" {
		t.Errorf("legacy answer %q", ev)
	}
}

// TestHTTPAnswersAsRecorded: a capture whose server answered its POSTs as
// JSON is served as JSON to a client that accepts both.
func TestHTTPAnswersAsRecorded(t *testing.T) {
	s := captureOf(t, initV1,
		`http {"method":"POST","url":"http://x/mcp","status":200,"header":["> Accept: application/json, text/event-stream","< Content-Type: application/json"],"stream":"POST 1","id":1}`,
		initR1)
	if s.HTTPAnswers != "json" {
		t.Fatalf("HTTPAnswers %q", s.HTTPAnswers)
	}
	srv := serveHTTP(t, s, Options{})
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(strings.TrimPrefix(initV1, ">")))
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestHTTPLoopbackOnly: with LoopbackOnly, a Host or Origin that is not
// loopback gets 403 (DNS rebinding); loopback ones are served.
func TestHTTPLoopbackOnly(t *testing.T) {
	s := captureOf(t, initV1, initR1)
	srv := serveHTTP(t, s, Options{LoopbackOnly: true})
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"", "", 200},
		{"localhost:3001", "http://localhost:3001", 200},
		{"[::1]:3001", "", 200},
		{"evil.example.com", "", 403},
		{"", "http://evil.example.com", 403},
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(strings.TrimPrefix(initV1, ">")))
		req.Header.Set("Accept", "application/json")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q Origin %q: %d, want %d", tc.host, tc.origin, resp.StatusCode, tc.want)
		}
	}
}

// serveHTTP serves the script s over HTTP on a loopback test server,
// closed (the handler first) when the test ends.
func serveHTTP(t *testing.T, s *Script, o Options) *httptest.Server {
	t.Helper()
	h, err := NewHandler(s, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	return srv
}
