package tap

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sonde-mcp/sonde/transport"
)

// FuzzEndpointRewriter: whatever a legacy server puts in its endpoint
// event, read as the host reads it (resolveEndpoint against the tap's
// URL): an endpoint that reaches the server is never left unrewritten,
// and a rewritten one reaches the tap; what is not rewritten passes byte
// for byte; the rewrite is the same when the stream comes a byte per
// read.
func FuzzEndpointRewriter(f *testing.F) {
	for _, data := range endpointSpellings("up.example:8080") {
		f.Add("event: endpoint\n" + data + "\n")
	}
	f.Add("event: endpoint\ndata: /message?sessionId=1\n\n")
	f.Add(": c\n\nevent:endpoint\r\ndata://up.example:8080/m\r\n\r\n")
	f.Add("event: endpoint\ndata: http://UP.EXAMPLE.:8080/m\n\n")
	f.Add("event: endpoint\ndata: http://0x7f.1:8080/m\n\n")
	f.Add("event: endpoint\ndata: https:up.example:8080/m\n\n")
	f.Add("event: endpoint\ndata: http:up.example:8080/m\n\n")
	f.Add("event: endpoint\ndata: //127.0.0.1:9/m\n\n")
	f.Add("event: endpoint\ndata: //other.example/m\n\n")
	f.Add("id: 1\n\nevent: message\ndata: {}\n\n")
	f.Add("event: endpoint\ndata: http://%75p.example:8080/m\n\n")
	f.Add("event: endpoint\ndata: http://up.example:08080/m?x=\\y\n\n")
	f.Fuzz(func(t *testing.T, stream string) {
		target, _ := url.Parse("http://up.example:8080")
		tapBase, _ := url.Parse("http://127.0.0.1:9/sse")
		run := func(r io.Reader) []byte {
			p := &Proxy{closed: make(chan struct{})}
			e := &endpointRewriter{rc: io.NopCloser(r), p: p, ex: &exchange{origin: "http://127.0.0.1:9", uri: "/sse"}, target: target}
			out, err := io.ReadAll(e)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		out := run(strings.NewReader(stream))
		if slow := run(iotest.OneByteReader(strings.NewReader(stream))); !bytes.Equal(out, slow) {
			t.Fatalf("%q: %q whole, %q a byte at a time", stream, out, slow)
		}
		// The event the host looks at: the first it dispatches.
		in, rest, atStart := firstDispatched([]byte(stream))
		if in == nil {
			if string(out) != stream {
				t.Fatalf("no whole event, yet changed: %q → %q", stream, out)
			}
			return
		}
		inEv, _ := transport.ParseSSEEvent(in, atStart)
		data := inEv.Data
		before, err := resolveEndpoint(string(data), tapBase)
		toServer := err == nil && inEv.Event == "endpoint" && sameServer(before, target) && !sameServer(before, tapBase)
		if !toServer {
			if string(out) != stream {
				t.Fatalf("%q: not an endpoint to the server, yet changed to %q", stream, out)
			}
			return
		}
		outEv, outRest, outAtStart := firstDispatched(out)
		if outEv == nil || !bytes.Equal(outRest, rest) {
			t.Fatalf("%q: the rewritten stream %q lost its event or what follows it", stream, out)
		}
		outParsed, _ := transport.ParseSSEEvent(outEv, outAtStart)
		outData := outParsed.Data
		after, err := resolveEndpoint(string(outData), tapBase)
		if err != nil || outParsed.Event != "endpoint" || !sameServer(after, tapBase) {
			t.Fatalf("endpoint %q (reaching the server) was rewritten to %q, which does not reach the tap (%v)", data, outData, err)
		}
		if after.RequestURI() != before.RequestURI() {
			t.Fatalf("endpoint %q: path and query %q, rewritten %q", data, before.RequestURI(), after.RequestURI())
		}
	})
}

// firstDispatched is the first event of b with a data line (what a host
// dispatches), and what follows it; nil when b holds none whole. Blocks
// before it are skipped; atStart says it begins the stream.
func firstDispatched(b []byte) (ev, rest []byte, atStart bool) {
	for atStart = true; ; atStart = false {
		n := transport.SSEEventEnd(b)
		if n < 0 || n > maxEndpointHold {
			return nil, nil, false // (past the hold, the rewriter passes the stream as it is)
		}
		if e, ok := transport.ParseSSEEvent(b[:n], atStart); ok && e.HasData {
			return b[:n], b[n:], atStart
		}
		b = b[n:]
	}
}

// FuzzLearnHeaders: whatever headers and URI a host's POST carries, what
// the tap keeps for an injected request into its session is the URI and
// exactly the session headers (Mcp-Session-Id, Mcp-Protocol-Version,
// Authorization, Cookie) it sent, nothing else, handed out as a copy; a
// session id the answer gave is kept with them.
func FuzzLearnHeaders(f *testing.F) {
	f.Add("/mcp?x=1", "s-1", "Bearer t", "X-Other", "v", "s-2")
	f.Add("/", "", "", "Host", "evil", "")
	f.Add("/m%20a?b=%zz", "id\r\nX: y", "\x00", "Cookie", "a=b", "new")
	f.Add("//evil/path", "s", "Basic x", "mcp-session-id", "other", "")
	f.Fuzz(func(t *testing.T, uri, sid, auth, name, value, answered string) {
		u, err := url.ParseRequestURI(uri)
		if err != nil {
			return
		}
		h := http.Header{}
		if sid != "" {
			h.Set("Mcp-Session-Id", sid)
		}
		if auth != "" {
			h.Set("Authorization", auth)
		}
		if name != "" {
			h.Add(name, value)
		}
		var s hostSessions
		r := &http.Request{Method: http.MethodPost, URL: u, Header: h}
		key := h.Get("Mcp-Session-Id")
		s.learn(r, key)
		if answered != "" && key == "" {
			resp := &http.Response{Header: http.Header{"Mcp-Session-Id": {answered}}}
			s.learnAnswer(resp, &exchange{method: http.MethodPost, uri: u.RequestURI(), reqHdr: h})
			key = answered
		}
		path, got, _, err := s.target(key)
		if err != nil {
			t.Fatalf("no session %q after its POST: %v", key, err)
		}
		if path != u.RequestURI() {
			t.Fatalf("path %q, want %q", path, u.RequestURI())
		}
		for k, v := range got {
			if !slices.Contains(sessionHeaders, k) {
				t.Fatalf("kept header %q, not a session header", k)
			}
			want := h.Values(k)
			if k == "Mcp-Session-Id" && answered != "" && h.Get(k) == "" {
				want = []string{answered}
			}
			if !slices.Equal(v, want) {
				t.Fatalf("header %s: kept %q, the host sent %q", k, v, want)
			}
		}
		for _, k := range sessionHeaders {
			if h.Get(k) != "" && got.Get(k) == "" {
				t.Fatalf("header %s the host sent was not kept", k)
			}
		}
		got.Set("Authorization", "changed")
		if _, again, _, _ := s.target(key); again.Get("Authorization") == "changed" && auth != "changed" {
			t.Fatal("the kept headers were handed out, not a copy")
		}
	})
}
