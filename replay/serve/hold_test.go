package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
)

// holdScript answers two echo calls (ids 2 and 3 recorded) with n:1, n:2.
func holdScript(t *testing.T) *Script {
	return captureOf(t, "session 2025-06-18", initV1, initR1,
		`>{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`,
		`<{"jsonrpc":"2.0","id":2,"result":{"n":1}}`,
		`>{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`,
		`<{"jsonrpc":"2.0","id":3,"result":{"n":2}}`,
	)
}

func waitHeld(t *testing.T, e *hold.Engine, n int) []hold.Held {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if l := e.List(); len(l) >= n {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("held %+v, want %d", e.List(), n)
		}
	}
}

// stdioMock runs Serve with e on pipes: send writes a line, next reads one.
func stdioMock(t *testing.T, e *hold.Engine, log io.Writer) (send func(string), next func() string) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), holdScript(t), inR, outW, Options{Speed: 0, Hold: e, Log: log})
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	br := bufio.NewReader(outR)
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.TrimSpace(l)
		}
	}()
	send = func(l string) { io.WriteString(inW, l+"\n") }
	next = func() string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no line from the mock")
			return ""
		}
	}
	return send, next
}

const (
	echoA = `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`
	echoB = `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`
)

// TestServeHoldStdio: the mock's answers go through the breakpoints: two
// held answers released in reverse order reach the client in that order,
// each with its own id; an edit is what the client gets; a held request
// answered is answered, and the mock never played for it (the next call
// gets the first recorded answer); a dropped one gets nothing.
func TestServeHoldStdio(t *testing.T) {
	e := hold.New(hold.Options{Timeout: hold.Forever})
	defer e.Close()
	if _, err := e.Add("dir:in kind:response tool:echo"); err != nil {
		t.Fatal(err)
	}
	var log syncLog
	send, next := stdioMock(t, e, &log)
	send(echoA)
	waitHeld(t, e, 1)
	send(echoB)
	l := waitHeld(t, e, 2)
	if err := e.Release(client.HoldBySocket, l[1].Handle, l[0].Handle); err != nil {
		t.Fatal(err)
	}
	if a, b := next(), next(); a != `{"jsonrpc":"2.0","id":"b","result":{"n":2}}` || b != `{"jsonrpc":"2.0","id":"a","result":{"n":1}}` {
		t.Fatalf("released b then a: got\n%s\n%s", a, b)
	}
	// An edit.
	send(strings.Replace(echoA, `"a"`, `"c"`, 1))
	h := waitHeld(t, e, 1)[0]
	if err := e.Edit(client.HoldBySocket, h.Handle, []byte(`{"jsonrpc":"2.0","id":"c","result":{"edited":true}}`)); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != `{"jsonrpc":"2.0","id":"c","result":{"edited":true}}` {
		t.Fatalf("edited: %s", got)
	}
	// A held request, answered in the mock's place; one dropped.
	e.Remove(1)
	e.Add("dir:out tool:echo")
	send(strings.Replace(echoA, `"a"`, `"d"`, 1))
	h = waitHeld(t, e, 1)[0]
	if err := e.Answer(client.HoldBySocket, h.Handle, json.RawMessage(`{"from":"breaks"}`), nil); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != `{"jsonrpc":"2.0","id":"d","result":{"from":"breaks"}}` {
		t.Fatalf("answered: %s", got)
	}
	send(strings.Replace(echoA, `"a"`, `"e"`, 1))
	h = waitHeld(t, e, 1)[0]
	if err := e.Drop(client.HoldBySocket, h.Handle); err != nil {
		t.Fatal(err)
	}
	e.Remove(2)
	send(strings.Replace(echoA, `"a"`, `"f"`, 1))
	if got := next(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"f","result":`) {
		t.Fatalf("after the answered and dropped calls: %s", got)
	}
	// The mock answered a, b, c and f, never d (answered in its place)
	// nor e (dropped).
	l2 := log.String()
	for _, id := range []string{`"a"`, `"b"`, `"c"`, `"f"`} {
		if !strings.Contains(l2, "tools/call id "+id+":") {
			t.Errorf("the mock's log lacks %s:\n%s", id, l2)
		}
	}
	for _, id := range []string{`"d"`, `"e"`} {
		if strings.Contains(l2, "tools/call id "+id+":") {
			t.Errorf("the mock saw %s:\n%s", id, l2)
		}
	}
}

// syncLog is a log safe for the mock's goroutines.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeHoldHTTP: over --listen, a held answer on a POST's SSE stream
// released reaches that POST's stream; a decision for a POST whose client
// went away is undelivered.
func TestServeHoldHTTP(t *testing.T) {
	e := hold.New(hold.Options{Timeout: hold.Forever})
	defer e.Close()
	if _, err := e.Add("dir:in kind:response tool:echo"); err != nil {
		t.Fatal(err)
	}
	srv := serveHTTP(t, holdScript(t), Options{Hold: e})
	post := func(ctx context.Context, session, body string) (*http.Response, string, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(SessionHeader, session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, "", err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b), nil
	}
	resp, _, err := post(context.Background(), "", strings.TrimPrefix(initV1, ">"))
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.Header.Get(SessionHeader)
	got := make(chan string, 1)
	go func() { _, body, _ := post(context.Background(), sid, echoA); got <- body }()
	h := waitHeld(t, e, 1)[0]
	if err := e.Release(client.HoldBySocket, h.Handle); err != nil {
		t.Fatal(err)
	}
	if body := <-got; !strings.Contains(body, `{"jsonrpc":"2.0","id":"a","result":{"n":1}}`) {
		t.Fatalf("released: %q", body)
	}
	// The client goes away while its answer is held.
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() { post(ctx, sid, echoB); close(ended) }()
	h = waitHeld(t, e, 1)[0]
	cancel()
	<-ended
	time.Sleep(300 * time.Millisecond) // the mock sees the stream close
	if err := e.Release(client.HoldBySocket, h.Handle); !errors.Is(err, hold.ErrUndelivered) {
		t.Fatalf("release for a closed stream: %v, want ErrUndelivered", err)
	}
}
