package hold

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/transport"
)

// conn is a client on the fixture (a real subprocess) through a Conn that
// offers its frames to an Engine, with the server's stderr collected.
type connRig struct {
	t      *testing.T
	e      *Engine
	c      *client.Client
	mu     sync.Mutex
	stderr strings.Builder
	done   chan struct{}
}

func startConn(t *testing.T, faults []string, exprs ...string) *connRig {
	return startConnTimeout(t, 30*time.Second, faults, exprs...)
}

func startConnTimeout(t *testing.T, timeout time.Duration, faults []string, exprs ...string) *connRig {
	t.Helper()
	r := &connRig{t: t, done: make(chan struct{})}
	r.e = New(Options{Timeout: Forever})
	if err := r.e.Load(exprs, "", nil); err != nil {
		t.Fatal(err)
	}
	env, err := transport.BuildEnv(os.Environ(), nil, fixturetest.ChildEnv())
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{os.Args[0]}
	for _, f := range faults {
		argv = append(argv, "--fault", f)
	}
	r.c = client.New(client.Options{Timeout: timeout})
	sub := r.c.Subscribe(1 << 16)
	go func() {
		defer close(r.done)
		for ev := range sub.C {
			if ev.Kind == client.EvStderr {
				r.mu.Lock()
				r.stderr.Write(ev.Stderr)
				r.mu.Unlock()
			}
		}
	}()
	cfg := transport.StdioConfig{Argv: argv, Env: env, KillAfter: 300 * time.Millisecond}
	if err := r.c.Connect(Dialer(client.Stdio(cfg), r.e)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.c.Close()
		<-r.done
		r.e.Close()
	})
	if _, err := r.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitHeld waits until n frames are held and returns them.
func (r *connRig) waitHeld(n int) []Held {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l := r.e.List()
		if len(l) >= n {
			return l
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d frames held, want %d", len(l), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *connRig) waitStderr(want string) {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := r.stderr.String()
		r.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("stderr %q lacks %q", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func echoArgs(v string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"value": v})
	return b
}

// resultText is the text of a tools/call result.
func resultText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	if len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].Text
}

// Two answers of the server's held and released second first: the client
// matches each to its call by id.
func TestConnReleaseAnswersOutOfOrder(t *testing.T) {
	r := startConn(t, nil, "dir:in kind:response tool:echo")
	a := r.c.GoTool(context.Background(), "echo", echoArgs("first"), client.CallOptions{})
	b := r.c.GoTool(context.Background(), "echo", echoArgs("second"), client.CallOptions{})
	held := r.waitHeld(2)
	if held[0].Direction != "in" || held[0].Tool != "echo" {
		t.Fatalf("held %+v", held[0])
	}
	// Release the later-held first.
	if err := r.e.Release(client.HoldByUI, held[1].Handle, held[0].Handle); err != nil {
		t.Fatal(err)
	}
	ra, errA := a.Wait()
	rb, errB := b.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("errors %v %v", errA, errB)
	}
	if resultText(t, ra) != "first" || resultText(t, rb) != "second" {
		t.Fatalf("a=%s b=%s", ra, rb)
	}
}

// An edited answer reaches the client edited; a malformed edit is refused
// with its byte offset and the frame stays held.
func TestConnEditAnswer(t *testing.T) {
	r := startConn(t, nil, "dir:in tool:echo")
	call := r.c.GoTool(context.Background(), "echo", echoArgs("orig"), client.CallOptions{})
	h := r.waitHeld(1)[0]
	if err := r.e.Edit(client.HoldByUI, h.Handle, []byte(`{"jsonrpc":"2.0","id":`+h.ID+`,`)); err == nil || !strings.Contains(err.Error(), "at byte") {
		t.Fatalf("malformed edit: %v", err)
	}
	if len(r.e.List()) != 1 {
		t.Fatal("a refused edit let the frame go")
	}
	edit := `{"jsonrpc":"2.0","id":` + h.ID + `,"result":{"content":[{"type":"text","text":"edited"}]}}`
	if err := r.e.Edit(client.HoldByUI, h.Handle, []byte(edit)); err != nil {
		t.Fatal(err)
	}
	raw, err := call.Wait()
	if err != nil || resultText(t, raw) != "edited" {
		t.Fatalf("got %s, %v", raw, err)
	}
}

// A held call of sonde's answered in the server's place: the client gets
// the answer, and the server goes on (a later call works).
func TestConnAnswerHeldRequest(t *testing.T) {
	r := startConn(t, nil, "dir:out tool:echo")
	call := r.c.GoTool(context.Background(), "echo", echoArgs("never sent"), client.CallOptions{})
	h := r.waitHeld(1)[0]
	if h.Direction != "out" || h.Kind != "request" {
		t.Fatalf("held %+v", h)
	}
	if err := r.e.Answer(client.HoldByUI, h.Handle, json.RawMessage(`{"content":[{"type":"text","text":"from sonde"}]}`), nil); err != nil {
		t.Fatal(err)
	}
	raw, err := call.Wait()
	if err != nil || resultText(t, raw) != "from sonde" {
		t.Fatalf("got %s, %v", raw, err)
	}
	if _, err := r.c.ListTools(context.Background()); err != nil {
		t.Fatalf("the session broke: %v", err)
	}
}

// A held write returns at once and does not block other frames; released,
// the server receives it (its stderr says so). Here the held frame is
// sonde's answer to the server's ping (fault server-ping), and the release
// comes from the last watcher going away.
func TestConnDetachReleasesHeldWrite(t *testing.T) {
	r := startConn(t, []string{"server-ping"}, "dir:out method:ping")
	detach := r.e.Attach()
	h := r.waitHeld(1)[0]
	if h.Direction != "out" || h.Kind != "response" || h.ID != `"srv-1"` {
		t.Fatalf("held %+v", h)
	}
	if _, err := r.c.ListTools(context.Background()); err != nil { // not blocked by the held frame
		t.Fatal(err)
	}
	detach()
	r.waitStderr(`response id="srv-1" result={}`)
	if len(r.e.List()) != 0 {
		t.Fatal("still held after detach")
	}
}

// Closing the Conn releases what it holds (sonde's frames to the server
// first) and ends the pump; a held answer of the server's goes nowhere.
func TestConnCloseReleases(t *testing.T) {
	r := startConn(t, nil, "dir:in tool:echo")
	call := r.c.GoTool(context.Background(), "echo", echoArgs("x"), client.CallOptions{})
	r.waitHeld(1)
	r.c.Close()
	if _, err := call.Wait(); err == nil {
		t.Fatal("the call succeeded after Close")
	}
	if n := len(r.e.List()); n != 0 {
		t.Fatalf("%d still held after Close", n)
	}
}

// While frames are held (client.HoldForFrames), sonde's own request does
// not time out for the time its answer is held: here held for longer
// than its whole --timeout, then released, it resolves.
func TestConnHeldTimeNotCounted(t *testing.T) {
	const timeout = 2 * time.Second
	r := startConnTimeout(t, timeout, nil, "dir:in tool:echo")
	call := r.c.GoTool(context.Background(), "echo", echoArgs("kept"), client.CallOptions{})
	h := r.waitHeld(1)[0]
	r.c.HoldForFrames(true)
	time.Sleep(timeout + timeout/2)
	if err := r.e.Release(client.HoldByUI, h.Handle); err != nil {
		t.Fatal(err)
	}
	r.c.HoldForFrames(false)
	raw, err := call.Wait()
	if err != nil || resultText(t, raw) != "kept" {
		t.Fatalf("got %s, %v", raw, err)
	}
}
