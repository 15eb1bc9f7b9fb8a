package tap

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
)

const (
	// jsonBody is answered as it is: odd spacing and key order, which a
	// proxy that re-encoded would change.
	jsonBody = "{ \"result\" : {\"b\":1,  \"a\":[ ]},\"id\":7,\"jsonrpc\":\"2.0\" }\n"
	sseFirst = "id: e1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":1}}\r\n\r\n"
	sseLast  = ": a comment\ndata: {\"jsonrpc\":\"2.0\",\"id\":8,\ndata:   \"result\":{}}\n\n"
)

// upstream is a server for the proxy's tests: what it received, and a
// gate that holds the second SSE event until the test saw the first.
type upstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen http.Header
	gate chan struct{}
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{gate: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = r.Header.Clone()
		u.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Mcp-Session-Id", "sess-1")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jsonBody)
	})
	mux.HandleFunc("POST /stream", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseFirst)
		w.(http.Flusher).Flush()
		select {
		case <-u.gate:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, sseLast)
	})
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\r\ndata: "+u.srv.URL+"/message?sessionId=abc\r\n\r\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "event: endpoint\ndata: "+u.srv.URL+"/not-the-first\n\n")
	})
	mux.HandleFunc("GET /moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, u.srv.URL+"/elsewhere", http.StatusTemporaryRedirect)
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	return u
}

// newTestProxy serves a proxy to up on loopback, observed; done closes it
// and returns the events observed.
func newTestProxy(t *testing.T, up *upstream) (string, func() []client.Event) {
	target, _ := url.Parse(up.srv.URL)
	base, _, done := serveProxy(t, ProxyOptions{Target: target, LoopbackOnly: true})
	return base, done
}

// serveProxy serves a proxy with opts on loopback, observed; done (also
// run at the test's end) runs first (when set), closes the proxy, and
// returns the events observed.
func serveProxy(t *testing.T, opts ProxyOptions, first ...func()) (string, *Proxy, func() []client.Event) {
	obs := client.NewObserver(0)
	sub := obs.Subscribe(1 << 14)
	opts.Observer = obs
	if x := os.Getenv(breakEnv); x != "" && opts.Hold == nil {
		// TestHTTPTestsWithBreakpoints: the same tests, with a
		// breakpoint set that holds none of their frames.
		opts.Hold = hold.New(hold.Options{Timeout: hold.Forever})
		if _, err := opts.Hold.Add(x); err != nil {
			t.Fatal(err)
		}
		first = append(first, opts.Hold.Close)
	}
	p := NewProxy(opts)
	srv := httptest.NewServer(p)
	var once sync.Once
	var evs []client.Event
	done := func() []client.Event {
		once.Do(func() {
			for _, f := range first {
				f()
			}
			srv.CloseClientConnections()
			srv.Close()
			p.Close()
			obs.Close()
			for ev := range sub.C {
				evs = append(evs, ev)
			}
		})
		return evs
	}
	t.Cleanup(func() { done() })
	return srv.URL, p, done
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// readWithin reads n bytes of r (what, for the failure), and fails the
// test when they do not come within 5 s, while the server holds what
// follows them: the proxy would have held them back.
func readWithin(t *testing.T, r io.Reader, n int, what string) []byte {
	t.Helper()
	b := make([]byte, n)
	got := make(chan error, 1)
	go func() { _, err := io.ReadFull(r, b); got <- err }()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not reach the host while the server held what follows: buffered", what)
	}
	return b
}

// TestProxyForwardsUnchanged: a JSON body and an SSE body reach the host
// byte for byte; the first SSE event reaches it before the server writes
// the second (nothing is buffered); the session, protocol, resume and
// auth headers reach the server and the session id comes back; a redirect
// is passed on as it is; what is observed has the messages of both sides
// with their stream labels, and the recorded headers hide credentials.
func TestProxyForwardsUnchanged(t *testing.T) {
	up := newUpstream(t)
	base, done := newTestProxy(t, up)
	hc := &http.Client{CheckRedirect: noRedirect}

	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	for k, v := range map[string]string{
		"Authorization": "Bearer s3cret", "Mcp-Session-Id": "sess-1", "MCP-Protocol-Version": "2025-11-25",
		"Last-Event-ID": "e0", "X-Api-Key": "k3y", "Content-Type": "application/json",
	} {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != jsonBody {
		t.Errorf("JSON body through the proxy:\n%q\nwant\n%q", b, jsonBody)
	}
	if got := resp.Header.Get("Mcp-Session-Id"); got != "sess-1" {
		t.Errorf("Mcp-Session-Id back to the host: %q", got)
	}
	up.mu.Lock()
	for k, v := range map[string]string{"Authorization": "Bearer s3cret", "Mcp-Session-Id": "sess-1", "Mcp-Protocol-Version": "2025-11-25", "Last-Event-Id": "e0", "X-Api-Key": "k3y"} {
		if got := up.seen.Get(k); got != v {
			t.Errorf("the server got %s: %q, want %q", k, got, v)
		}
	}
	if xf := up.seen.Get("X-Forwarded-For"); xf != "" {
		t.Errorf("the server got X-Forwarded-For %q: the proxy adds nothing", xf)
	}
	up.mu.Unlock()

	// SSE: the first event arrives while the server holds the second.
	resp, err = hc.Post(base+"/stream", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":7}}}`))
	if err != nil {
		t.Fatal(err)
	}
	first := readWithin(t, resp.Body, len(sseFirst), "the first SSE event")
	close(up.gate)
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if s := string(first) + string(rest); s != sseFirst+sseLast {
		t.Errorf("SSE body through the proxy:\n%q\nwant\n%q", s, sseFirst+sseLast)
	}

	// A redirect goes to the host as it is.
	resp, err = hc.Get(base + "/moved")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != up.srv.URL+"/elsewhere" {
		t.Errorf("redirect: %d to %q, want 307 to %s", resp.StatusCode, resp.Header.Get("Location"), up.srv.URL+"/elsewhere")
	}

	evs := done()
	var frames []string
	var headers []string
	for _, ev := range evs {
		switch ev.Kind {
		case client.EvFrame:
			f := ev.Frame
			frames = append(frames, f.Dir.String()+" "+f.Frame.Stream+" "+f.Frame.EventID+" "+string(f.Verdict))
		case client.EvHTTP:
			headers = append(headers, ev.HTTP.Header...)
		}
	}
	want := []string{
		"out POST 1  sent", "in POST 1  resolved",
		"out POST 2  sent", "in POST 2 e1 progress", "in POST 2  resolved",
	}
	if strings.Join(frames, "\n") != strings.Join(want, "\n") {
		t.Errorf("observed frames:\n%s\nwant\n%s", strings.Join(frames, "\n"), strings.Join(want, "\n"))
	}
	all := strings.Join(headers, "\n")
	for _, secret := range []string{"s3cret", "k3y"} {
		if strings.Contains(all, secret) {
			t.Errorf("recorded headers hold %q:\n%s", secret, all)
		}
	}
	for _, line := range []string{"> Authorization: " + Redacted, "> X-Api-Key: " + Redacted, "> Mcp-Session-Id: sess-1", "< Mcp-Session-Id: sess-1"} {
		if !strings.Contains(all, line) {
			t.Errorf("recorded headers lack %q:\n%s", line, all)
		}
	}
}

// TestProxyEndpointRewrite: the legacy endpoint event that names the
// server, first on its stream, is rewritten to the proxy (its line ends
// kept); the rest of the stream is byte for byte, a later endpoint event
// included.
func TestProxyEndpointRewrite(t *testing.T) {
	up := newUpstream(t)
	base, done := newTestProxy(t, up)
	resp, err := http.Get(base + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "event: endpoint\r\ndata: " + base + "/message?sessionId=abc\r\n\r\n" + "event: endpoint\ndata: " + up.srv.URL + "/not-the-first\n\n"
	if string(b) != want {
		t.Errorf("legacy stream through the proxy:\n%q\nwant\n%q", b, want)
	}
	var notes []string
	for _, ev := range done() {
		if ev.Kind == client.EvNote {
			notes = append(notes, ev.Note)
		}
	}
	if !strings.Contains(strings.Join(notes, "\n"), "endpoint event rewritten") {
		t.Errorf("no note of the rewrite: %q", notes)
	}
}

// TestProxyLoopbackHost: a request whose Host is not loopback is refused
// (403) and never reaches the server.
func TestProxyLoopbackHost(t *testing.T) {
	up := newUpstream(t)
	base, _ := newTestProxy(t, up)
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host evil.example: %d, want 403", resp.StatusCode)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.seen != nil {
		t.Errorf("the server got the refused request")
	}
}

// TestProxyUnreachable: a target that refuses connections gives the host
// 502, and the observed exchange says why.
func TestProxyUnreachable(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	target, _ := url.Parse(up.URL)
	up.Close()
	obs := client.NewObserver(0)
	sub := obs.Subscribe(64)
	p := NewProxy(ProxyOptions{Target: target, Observer: obs, LoopbackOnly: true})
	srv := httptest.NewServer(p)
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close()
	p.Close()
	obs.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	var problem bool
	for ev := range sub.C {
		if ev.Kind == client.EvHTTP && ev.HTTP.Problem && strings.Contains(ev.HTTP.Note, "could not be reached") {
			problem = true
		}
	}
	if !problem {
		t.Errorf("no observed exchange says the server could not be reached")
	}
}

// TestEndpointRewriterOneByte: the rewrite is the same when the stream
// comes one byte per read, whatever its line ends; a relative endpoint
// and a stream whose first event is not an endpoint pass unchanged.
func TestEndpointRewriterOneByte(t *testing.T) {
	target, _ := url.Parse("http://up.example:8080")
	p := &Proxy{closed: make(chan struct{})}
	for _, tc := range []struct{ in, want string }{
		{"event: endpoint\r\ndata: http://up.example:8080/message?s=1\r\n\r\ndata: x\n\n", "event: endpoint\r\ndata: http://127.0.0.1:9/message?s=1\r\n\r\ndata: x\n\n"},
		{"data:http://up.example:8080/m\revent:endpoint\r\rrest", "data:http://127.0.0.1:9/m\revent:endpoint\r\rrest"},
		{"event: endpoint\ndata: /message?s=1\n\n", "event: endpoint\ndata: /message?s=1\n\n"},
		{"event: endpoint\ndata: http://other.example/m\n\n", "event: endpoint\ndata: http://other.example/m\n\n"},
		{"id: 1\ndata: {}\n\nevent: endpoint\ndata: http://up.example:8080/m\n\n", "id: 1\ndata: {}\n\nevent: endpoint\ndata: http://up.example:8080/m\n\n"},
		{"event: endpoint\ndata: http://up.example:8080/m", "event: endpoint\ndata: http://up.example:8080/m"},
	} {
		e := &endpointRewriter{rc: io.NopCloser(iotest.OneByteReader(strings.NewReader(tc.in))), p: p, ex: &exchange{origin: "http://127.0.0.1:9"}, target: target}
		got, err := io.ReadAll(e)
		if err != nil || string(got) != tc.want {
			t.Errorf("%q:\ngot  %q %v\nwant %q", tc.in, got, err, tc.want)
		}
	}
}

// TestProxyQueueFull: with an observation queue of one small chunk, a
// stream of 2,000 flushed events still reaches the host byte for byte;
// what observation could not take is counted, and reported as missed.
func TestProxyQueueFull(t *testing.T) {
	var want strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&want, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":%d}}\n\n", i, i)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range strings.SplitAfter(want.String(), "\n\n") {
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	target, _ := url.Parse(up.URL)
	obs := client.NewObserver(0)
	sub := obs.Subscribe(1 << 16)
	p := NewProxy(ProxyOptions{Target: target, Observer: obs, Queue: 1, QueueBytes: 512})
	srv := httptest.NewServer(p)
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close()
	st := p.Close()
	obs.Close()
	if string(got) != want.String() {
		t.Errorf("the host got %d bytes, want %d, the same", len(got), want.Len())
	}
	var missedNote bool
	for ev := range sub.C {
		if ev.Kind == client.EvNote && strings.Contains(ev.Note, "observation fell behind") {
			missedNote = true
		}
	}
	if st.MissedChunks == 0 || !missedNote {
		t.Errorf("missed %d chunks, note %v: want some, reported", st.MissedChunks, missedNote)
	}
}

// TestRedactURL: a password and the values of query parameters named like
// secrets are kept out; the rest stays.
func TestRedactURL(t *testing.T) {
	u, _ := url.Parse("https://me:pw@mcp.example.com/mcp?api_key=k1&access_token=t1&team=x")
	got := RedactURL(u)
	for _, secret := range []string{"pw", "k1", "t1"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s holds %q", got, secret)
		}
	}
	if !strings.Contains(got, "team=x") || !strings.Contains(got, "mcp.example.com/mcp") {
		t.Errorf("%s lost what is not secret", got)
	}
}

// TestProxySessions: with ProxyOptions.Sessions, two hosts' sessions
// through one proxy, which use the same request ids at once, are each
// observed whole by an observer of their own (the initialize that started
// each among them, though it was sent without a session id), with every
// answer resolved and nothing unknown or duplicate; a request of a server
// that gives no session goes to Observer.
func TestProxySessions(t *testing.T) {
	var mu sync.Mutex
	var started int
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &msg)
		switch {
		case r.URL.Path == "/none":
		case msg.Method == "initialize":
			mu.Lock()
			started++
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s-%d", started))
			mu.Unlock()
		case r.Header.Get("Mcp-Session-Id") == "":
			http.Error(w, "no session", http.StatusBadRequest)
			return
		}
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"session":%q}}`, msg.ID, r.Header.Get("Mcp-Session-Id"))
	}))
	t.Cleanup(upstream.Close)
	target, _ := url.Parse(upstream.URL)

	type session struct {
		obs *client.Observer
		sub *client.Subscription
	}
	var sessions sync.Map // id → *session
	base, _, done := serveProxy(t, ProxyOptions{Target: target, Sessions: func(id string, _ time.Time) *client.Observer {
		s := &session{obs: client.NewObserver(0)}
		s.sub = s.obs.Subscribe(1 << 10)
		sessions.Store(id, s)
		return s.obs
	}})
	post := func(path, sid, body string) string { t.Helper(); return postSession(t, base+path, sid, body) }
	const initCall = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	a := post("/mcp", "", initCall)
	b := post("/mcp", "", initCall)
	for _, sid := range []string{a, b} {
		post("/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		post("/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}
	post("/none", "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)

	evs := done()
	verdicts := func(evs []client.Event) string {
		var v []string
		for _, ev := range evs {
			if ev.Kind == client.EvFrame {
				v = append(v, fmt.Sprintf("%s %s", ev.Frame.Dir, ev.Frame.Verdict))
			}
		}
		return strings.Join(v, ", ")
	}
	want := "out sent, in resolved, out sent, out sent, in resolved"
	for _, sid := range []string{a, b} {
		v, ok := sessions.Load(sid)
		if !ok {
			t.Fatalf("no observer for session %q", sid)
		}
		s := v.(*session)
		s.obs.Close()
		var got []client.Event
		for ev := range s.sub.C {
			got = append(got, ev)
		}
		if g := verdicts(got); g != want {
			t.Errorf("session %s: %s\nwant %s", sid, g, want)
		}
	}
	if g := verdicts(evs); g != "out sent, in resolved" {
		t.Errorf("no session: %s\nwant out sent, in resolved", g)
	}
}

// TestProxyCloseEndNotSent: an end offerEnd counted but then did not
// send (it saw the close first, while the observer, closing, had already
// seen it counted) does not keep Close waiting.
func TestProxyCloseEndNotSent(t *testing.T) {
	obs := client.NewObserver(0)
	defer obs.Close()
	p := NewProxy(ProxyOptions{Target: mustParse("http://127.0.0.1:1"), Observer: obs})
	p.ends.Add(1) // offerEnd counted its end…
	closed := make(chan struct{})
	go func() {
		p.Close()
		close(closed)
	}()
	<-p.closed
	time.Sleep(50 * time.Millisecond) // the observer sees the end counted
	p.ends.Add(-1)                    // …and, seeing the close, went without sending it
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waits for an end that will not come")
	}
}
