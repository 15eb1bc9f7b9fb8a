package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// The six cases of the seed document, against the fixture as a real
// subprocess.

func TestHappyPath(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{})
	res, err := s.c.Initialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerInfo.Name != "sonde-fixture" || res.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize result %+v", res)
	}
	tools, err := s.c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "echo,add,progress,fail,tool-error,big,crash,confirm,url-required" {
		t.Fatalf("tools %s", got)
	}
	r, _, err := s.c.CallTool(context.Background(), "echo", echoArgs("ok", 0), CallOptions{})
	if err != nil || len(r.Content) != 1 || r.Content[0].Text != "ok" || r.IsError {
		t.Fatalf("echo: %+v %v", r, err)
	}
	// initialize, notifications/initialized, tools/list, tools/call went out in that order.
	var out []string
	for _, f := range s.frames(VerdictSent) {
		out = append(out, f.Msg.Method)
	}
	if got := strings.Join(out, " "); got != "initialize notifications/initialized tools/list tools/call" {
		t.Fatalf("sent %s", got)
	}
}

func TestOutOfOrderMatchedByID(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{})
	s.init()
	ctx := context.Background()
	slow := s.c.Go(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":`+string(echoArgs("slow", 300))+`}`), CallOptions{Tool: "echo"})
	fast := s.c.Go(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":`+string(echoArgs("fast", 0))+`}`), CallOptions{Tool: "echo"})
	select {
	case <-fast.Done():
	case <-slow.Done():
		t.Fatal("slow call settled before the fast one")
	}
	for _, tc := range []struct {
		call *Call
		want string
	}{{fast, "fast"}, {slow, "slow"}} {
		raw, err := tc.call.Wait()
		if err != nil || !strings.Contains(string(raw), `"text":"`+tc.want+`"`) {
			t.Fatalf("call %s got %s %v", tc.call.ID, raw, err)
		}
	}
	// The resolved frames came back in the opposite order of the requests.
	s.waitUntil("both resolved frames", func([]Event) bool { return len(s.frames(VerdictResolved)) == 3 })
	last2 := s.frames(VerdictResolved)[1:]
	if last2[0].Msg.ID != fast.ID || last2[1].Msg.ID != slow.ID || fast.ID == slow.ID {
		t.Fatalf("resolved order %s then %s; want %s then %s", last2[0].Msg.ID, last2[1].Msg.ID, fast.ID, slow.ID)
	}
}

func TestRemoteErrorKeepsSession(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{})
	s.init()
	_, _, err := s.c.CallTool(context.Background(), "fail", json.RawMessage(`{"message":"boom"}`), CallOptions{})
	var e *Error
	if !errors.Is(err, ErrRemote) || !errors.As(err, &e) || e.RPC == nil || e.RPC.Code != -32001 || e.RPC.Message != "boom" {
		t.Fatalf("got %v", err)
	}
	if !strings.HasPrefix(err.Error(), "MCP_ERROR: ") {
		t.Fatalf("error prints as %q", err)
	}
	if r, _, err := s.c.CallTool(context.Background(), "add", json.RawMessage(`{"a":2,"b":3}`), CallOptions{}); err != nil || r.Content[0].Text != "5" {
		t.Fatalf("session unusable after a remote error: %+v %v", r, err)
	}
	// A tool result with isError is a result, not a Go error.
	r, _, err := s.c.CallTool(context.Background(), "tool-error", json.RawMessage(`{"message":"bad input"}`), CallOptions{})
	if err != nil || !r.IsError || r.Content[0].Text != "bad input" {
		t.Fatalf("tool-error: %+v %v", r, err)
	}
}

func TestTimeoutSendsCancelAndClears(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	call := s.c.Go(context.Background(), "tools/call", json.RawMessage(`{"name":"echo","arguments":{"value":"x"}}`), CallOptions{Timeout: 150 * time.Millisecond})
	_, err := call.Wait()
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "no response within 150ms") {
		t.Fatalf("got %v", err)
	}
	if n := s.c.Pending(); n != 0 {
		t.Fatalf("%d pending after timeout", n)
	}
	id, _ := call.ID.Int64()
	s.waitFor("cancel notification", func(ev Event) bool {
		return ev.Kind == EvFrame && ev.Frame.Dir == transport.Out && ev.Frame.Msg.Method == "notifications/cancelled" &&
			strings.Contains(string(ev.Frame.Raw), `"requestId":`+jsonrpc.Int(id).String())
	})
}

func TestAbort(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	t.Run("before the call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		call := s.c.Go(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"value":"x"}}`), CallOptions{})
		if _, err := call.Wait(); !errors.Is(err, ErrAborted) || call.ID.IsValid() {
			t.Fatalf("got %v, id %s", err, call.ID)
		}
		// Nothing was written: once a later ping is on the wire, no tools/call is.
		if err := s.c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.waitFor("ping frame", func(ev Event) bool { return ev.Kind == EvFrame && ev.Frame.Msg.Method == "ping" })
		for _, f := range s.frames(VerdictSent) {
			if f.Msg.Method == "tools/call" {
				t.Fatalf("a cancelled call was written: %s", f.Raw)
			}
		}
	})
	t.Run("in flight", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		call := s.c.Go(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"value":"x"}}`), CallOptions{})
		s.waitFor("request sent", func(ev Event) bool {
			return ev.Kind == EvRequest && ev.Req.ID == call.ID && ev.Req.State == StateSent
		})
		cancel()
		if _, err := call.Wait(); !errors.Is(err, ErrAborted) {
			t.Fatalf("got %v", err)
		}
		ev := s.waitFor("cancel notification", func(ev Event) bool {
			return ev.Kind == EvFrame && ev.Frame.Msg.Method == "notifications/cancelled"
		})
		id, _ := call.ID.Int64()
		var p struct {
			RequestID int64  `json:"requestId"`
			Reason    string `json:"reason"`
		}
		m, _ := jsonrpc.Decode(ev.Frame.Raw)
		if err := json.Unmarshal(m.Params, &p); err != nil || p.RequestID != id || p.Reason == "" {
			t.Fatalf("cancel params %s", m.Params)
		}
		if s.c.Pending() != 0 {
			t.Fatal("still pending after abort")
		}
	})
}

func TestServerExitFailsEveryPending(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"exit-mid-call"}})
	s.init()
	ctx := context.Background()
	var calls []*Call
	for i := 0; i < 5; i++ {
		calls = append(calls, s.c.Go(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"value":"x","delay_ms":50}}`), CallOptions{}))
	}
	for _, call := range calls {
		_, err := call.Wait()
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeProcessExit || e.Exit == nil || e.Exit.Code != 3 {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(err.Error(), "exit code 3") || !strings.Contains(err.Error(), "exit-mid-call") {
			t.Fatalf("message lacks exit status or stderr tail: %v", err)
		}
	}
	// The half-written line is shown, not lost.
	s.waitFor("incomplete line", isFrame(VerdictMalformed, "incomplete line"))
	// A call after the exit fails at once with the same code.
	if _, err := s.c.Call(ctx, "ping", nil, CallOptions{}); !errors.Is(err, ErrProcessExit) {
		t.Fatalf("after exit: %v", err)
	}
	<-s.c.Done()
}
