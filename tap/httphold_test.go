package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/transport"
)

// holdProxy is an HTTP tap with breakpoints in front of the fixture (over
// HTTP, in this process), with a counter of what reached the fixture, and
// sonde's own client as the host.
type holdProxy struct {
	e    *hold.Engine
	c    *client.Client
	base string
	done func() []client.Event
	mu   sync.Mutex
	seen []string // the bodies of the POSTs that reached the server
}

// newHoldProxy: json makes the fixture answer POSTs with JSON bodies (else
// SSE streams); mode is the host's transport (/mcp, or /sse for legacy).
func newHoldProxy(t *testing.T, json bool, mode transport.HTTPMode, timeout time.Duration, exprs ...string) *holdProxy {
	t.Helper()
	var args []string
	if json {
		args = append(args, "--http-json")
	}
	fix, _ := url.Parse(fixturetest.ServeHTTP(t, args...))
	hp := &holdProxy{}
	var proxy *Proxy
	hp.e = hold.New(hold.Options{Timeout: timeout, Note: func(h client.Hold) { proxy.NoteHold(h) }})
	if err := hp.e.Load(exprs, "", nil); err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(fix); pr.Out.Host = "" }, FlushInterval: -1}
	counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			hp.mu.Lock()
			hp.seen = append(hp.seen, string(b))
			hp.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(counter.Close)
	target, _ := url.Parse(counter.URL)
	hp.c = client.New(client.Options{Timeout: 10 * time.Second})
	base, p, done := serveProxy(t, ProxyOptions{Target: target, LoopbackOnly: true, Hold: hp.e}, func() { hp.e.Close(); hp.c.Close() })
	proxy = p
	hp.base, hp.done = base, done
	path := "/mcp"
	if mode == transport.ModeSSE {
		path = "/sse"
	}
	if err := hp.c.Connect(client.HTTP(transport.HTTPConfig{URL: base + path, Mode: mode})); err != nil {
		t.Fatal(err)
	}
	if _, err := hp.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return hp
}

// echo calls the fixture's echo tool in the background.
func (hp *holdProxy) echo(value string, timeout time.Duration) <-chan string {
	out := make(chan string, 1)
	go func() {
		args, _ := json.Marshal(map[string]any{"value": value})
		res, _, err := hp.c.CallTool(context.Background(), "echo", args, client.CallOptions{Timeout: timeout})
		switch {
		case err != nil:
			out <- "error: " + err.Error()
		case len(res.Content) == 0:
			out <- "no content"
		default:
			out <- res.Content[0].Text
		}
	}()
	return out
}

// waitHeld waits until n frames are held and returns them.
func (hp *holdProxy) waitHeld(t *testing.T, n int) []hold.Held {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l := hp.e.List()
		if len(l) >= n {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d frame(s) held after 10 s, want %d: %+v", len(l), n, l)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (hp *holdProxy) calls() int {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	n := 0
	for _, b := range hp.seen {
		if strings.Contains(b, `"tools/call"`) {
			n++
		}
	}
	return n
}

func result(t *testing.T, c <-chan string) string {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(15 * time.Second):
		t.Fatal("the call did not end")
		return ""
	}
}

var holdModes = []struct {
	name string
	json bool
	mode transport.HTTPMode
}{{"json", true, transport.ModeStreamable}, {"sse", false, transport.ModeStreamable}, {"legacy", false, transport.ModeSSE}}

// TestHTTPHoldEditAnswer: a held tools/call answer (a JSON body, an event
// of a POST's SSE stream, an event of the legacy stream) edited reaches
// the host edited, and the frame held is the server's answer.
func TestHTTPHoldEditAnswer(t *testing.T) {
	for _, m := range holdModes {
		t.Run(m.name, func(t *testing.T) {
			hp := newHoldProxy(t, m.json, m.mode, hold.Forever, "dir:in kind:response tool:echo")
			got := hp.echo("abc", 0)
			h := hp.waitHeld(t, 1)[0]
			if h.Method != "tools/call" || h.Tool != "echo" || !strings.Contains(string(h.Frame), "abc") {
				t.Fatalf("held %+v", h)
			}
			var msg map[string]any
			json.Unmarshal(h.Frame, &msg)
			msg["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "edited by the test"}}}
			edit, _ := json.Marshal(msg)
			if err := hp.e.Edit(client.HoldBySocket, h.Handle, edit); err != nil {
				t.Fatal(err)
			}
			if s := result(t, got); s != "edited by the test" {
				t.Fatalf("the host got %q, want the edit", s)
			}
			// The recording has both steps, the edit with the original.
			var steps []string
			for _, ev := range hp.done() {
				if ev.Kind == client.EvNote && ev.Hold != nil {
					steps = append(steps, string(ev.Hold.Action)+" "+string(ev.Hold.By))
					if ev.Hold.Action == client.HoldEdited && (!strings.Contains(string(ev.Hold.Original), "abc") || !strings.Contains(string(ev.Hold.Frame), "edited by the test")) {
						t.Errorf("the edit's step: %+v", ev.Hold)
					}
				}
			}
			if strings.Join(steps, ",") != "held ,edited socket" {
				t.Fatalf("recorded steps %q", steps)
			}
		})
	}
}

// TestHTTPHoldAnswerRequest: a held tools/call request answered by the tap
// gives the host that answer, and the server never gets the request.
func TestHTTPHoldAnswerRequest(t *testing.T) {
	for _, m := range holdModes {
		t.Run(m.name, func(t *testing.T) {
			hp := newHoldProxy(t, m.json, m.mode, hold.Forever, "dir:out tool:echo")
			got := hp.echo("abc", 0)
			h := hp.waitHeld(t, 1)[0]
			if err := hp.e.Answer(client.HoldBySocket, h.Handle, json.RawMessage(`{"content":[{"type":"text","text":"from the tap"}]}`), nil); err != nil {
				t.Fatal(err)
			}
			if s := result(t, got); s != "from the tap" {
				t.Fatalf("the host got %q", s)
			}
			if n := hp.calls(); n != 0 {
				t.Fatalf("the server got %d tools/call POST(s), want none", n)
			}
		})
	}
}

// TestHTTPHoldReverseOrder: two held answers released second first are
// each matched to their own call, and an event held does not hold back
// the stream's other events.
func TestHTTPHoldReverseOrder(t *testing.T) {
	for _, m := range holdModes {
		t.Run(m.name, func(t *testing.T) {
			hp := newHoldProxy(t, m.json, m.mode, hold.Forever, "dir:in kind:response tool:echo")
			one := hp.echo("one", 0)
			hp.waitHeld(t, 1)
			two := hp.echo("two", 0)
			l := hp.waitHeld(t, 2)
			if err := hp.e.Release(client.HoldBySocket, l[1].Handle, l[0].Handle); err != nil {
				t.Fatal(err)
			}
			if a, b := result(t, one), result(t, two); a != "one" || b != "two" {
				t.Fatalf("calls got %q and %q", a, b)
			}
		})
	}
}

// TestHTTPHoldAutoContinue: past the break timeout the answer goes on
// unchanged.
func TestHTTPHoldAutoContinue(t *testing.T) {
	hp := newHoldProxy(t, false, transport.ModeStreamable, 200*time.Millisecond, "dir:in tool:echo")
	if s := result(t, hp.echo("orig", 0)); s != "orig" {
		t.Fatalf("got %q", s)
	}
	if len(hp.e.List()) != 0 {
		t.Fatal("still held")
	}
}

// TestHTTPHoldDrop: a dropped request never reaches the server and its
// host gets 504 once the break timeout passed again; a dropped
// notification is accepted (202).
func TestHTTPHoldDrop(t *testing.T) {
	hp := newHoldProxy(t, true, transport.ModeStreamable, 30*time.Second, "dir:out tool:echo", "dir:out method:notifications/x")
	got := hp.echo("abc", 0)
	h := hp.waitHeld(t, 1)[0]
	// The 504 is not waited for here: the host gives up first (its
	// timeout is 10 s).
	if err := hp.e.Drop(client.HoldBySocket, h.Handle); err != nil {
		t.Fatal(err)
	}
	if s := result(t, got); !strings.HasPrefix(s, "error:") {
		t.Fatalf("a dropped request got %q", s)
	}
	if n := hp.calls(); n != 0 {
		t.Fatalf("the server got %d tools/call POST(s)", n)
	}
	resp := postNote(t, hp.base, hp.e)
	if resp != http.StatusAccepted {
		t.Fatalf("a dropped notification got %d, want 202", resp)
	}
}

// postNote posts a notification the engine holds, drops it, and returns
// the status the host got.
func postNote(t *testing.T, base string, e *hold.Engine) int {
	t.Helper()
	code := make(chan int, 1)
	go func() {
		resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/x"}`))
		if err != nil {
			code <- 0
			return
		}
		resp.Body.Close()
		code <- resp.StatusCode
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.List()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	l := e.List()
	if len(l) != 1 {
		t.Fatalf("held %+v", l)
	}
	if err := e.Drop(client.HoldBySocket, l[0].Handle); err != nil {
		t.Fatal(err)
	}
	return <-code
}

// TestHTTPHoldDroppedRequestTimesOut: with a short break timeout, a dropped
// request's POST is answered 504 (the server never answered), not held
// forever.
func TestHTTPHoldDroppedRequestTimesOut(t *testing.T) {
	hp := newHoldProxy(t, true, transport.ModeStreamable, 300*time.Millisecond, "dir:out method:tools/list")
	code := make(chan int, 1)
	go func() {
		resp, err := http.Post(hp.base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`))
		if err != nil {
			code <- 0
			return
		}
		resp.Body.Close()
		code <- resp.StatusCode
	}()
	h := hp.waitHeld(t, 1)[0]
	if err := hp.e.Drop(client.HoldBySocket, h.Handle); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != http.StatusGatewayTimeout {
		t.Fatalf("a dropped request got %d, want 504", c)
	}
}

// TestHTTPHoldClosedStream: a decision on a frame whose host went away is
// reported undelivered, and nothing stays held.
func TestHTTPHoldClosedStream(t *testing.T) {
	for _, m := range holdModes[:2] {
		t.Run(m.name, func(t *testing.T) {
			hp := newHoldProxy(t, m.json, m.mode, hold.Forever, "dir:in tool:echo")
			sid := rawSession(t, hp.base)
			ctx, cancel := context.WithCancel(context.Background())
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hp.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"value":"x"}}}`))
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			h := hp.waitHeld(t, 1)[0]
			cancel() // the host goes away
			<-ended
			// The tap sees the connection close a moment later.
			time.Sleep(500 * time.Millisecond)
			err := hp.e.Release(client.HoldBySocket, h.Handle)
			if !errors.Is(err, hold.ErrUndelivered) {
				t.Fatalf("release for a closed stream: %v, want ErrUndelivered", err)
			}
			if l := hp.e.List(); len(l) != 0 {
				t.Fatalf("still held: %+v", l)
			}
		})
	}
}

// rawSession initializes a session of its own through base and returns
// its Mcp-Session-Id.
func rawSession(t *testing.T, base string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no session id (HTTP %d)", resp.StatusCode)
	}
	return sid
}

// TestHTTPHoldHostileEdits: an edit that is not JSON, one over the limit,
// and one whose id collides with a request in flight are refused with the
// reason, and the frame stays held; released, it goes on unchanged.
func TestHTTPHoldHostileEdits(t *testing.T) {
	hp := newHoldProxy(t, false, transport.ModeStreamable, hold.Forever, "dir:out tool:echo heldme")
	// A request in flight (not held) whose id an edit takes.
	slowArgs, _ := json.Marshal(map[string]any{"value": "slow", "delay_ms": 1500})
	slow := hp.c.GoTool(context.Background(), "echo", slowArgs, client.CallOptions{})
	time.Sleep(100 * time.Millisecond) // (only the order of the ids needs it)
	got := hp.echo("heldme", 0)
	h := hp.waitHeld(t, 1)[0]
	var msg map[string]any
	json.Unmarshal(h.Frame, &msg)
	msg["id"] = msg["id"].(float64) - 1 // the slow call's
	collide, _ := json.Marshal(msg)
	for _, edit := range []string{
		`{"jsonrpc":"2.0",`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":%q}}`, strings.Repeat("x", hold.MaxEditBytes)),
		string(collide),
	} {
		err := hp.e.Edit(client.HoldBySocket, h.Handle, []byte(edit))
		if !errors.Is(err, hold.ErrBadEdit) {
			t.Fatalf("edit %.60q: %v, want ErrBadEdit", edit, err)
		}
	}
	if l := hp.e.List(); len(l) != 1 {
		t.Fatalf("after refused edits: %+v", l)
	}
	if err := hp.e.Release(client.HoldBySocket, h.Handle); err != nil {
		t.Fatal(err)
	}
	if s := result(t, got); s != "heldme" {
		t.Fatalf("after release: %q", s)
	}
	if raw, err := slow.Wait(); err != nil || !strings.Contains(string(raw), "slow") {
		t.Fatalf("the slow call: %s %v", raw, err)
	}
}

// breakEnv, set, gives every proxy of serveProxy a breakpoint with that
// query (TestHTTPTestsWithBreakpoints).
const breakEnv = "SONDE_TEST_TAP_BREAK"

// TestHTTPTestsWithBreakpoints runs the HTTP tap's forwarding, SSE and
// fault tests again (in a child test process) with a breakpoint set that
// matches none of their frames: what no breakpoint holds is forwarded
// byte for byte, unbuffered, as without breakpoints.
func TestHTTPTestsWithBreakpoints(t *testing.T) {
	if os.Getenv(breakEnv) != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.run", "^(TestProxy|TestSSE|TestHTTPFaults|TestEndpointRewriter|TestHTTPInject)")
	cmd.Env = append(os.Environ(), breakEnv+"=method:sonde/never/sent")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the HTTP tap's tests with a breakpoint set: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("PASS")) {
		t.Fatalf("no test ran:\n%s", out)
	}
}
