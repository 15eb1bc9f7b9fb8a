package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// sentInitialize returns the params of the initialize request as written.
func sentInitialize(t *testing.T, s *session) mcp.InitializeParams {
	t.Helper()
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.Method == mcp.MethodInitialize {
			var req struct {
				Params mcp.InitializeParams `json:"params"`
			}
			if err := json.Unmarshal(f.Raw, &req); err != nil {
				t.Fatal(err)
			}
			return req.Params
		}
	}
	t.Fatal("no initialize frame")
	return mcp.InitializeParams{}
}

// inState finds the transition of the server's request id to state.
func inState(id string, state State) func(Event) bool {
	return func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.ID.String() == id && ev.Req.State == state
	}
}

func TestCapabilitiesFollowOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    ServerRequests
		version string
		want    string
	}{
		{"none", ServerRequests{}, "", `{}`},
		{"roots", ServerRequests{Roots: true}, "", `{"roots":{"listChanged":true}}`},
		{"all", ServerRequests{Roots: true, Sampling: true, Elicitation: true}, "",
			`{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`},
		{"elicitation before url mode", ServerRequests{Elicitation: true}, "2025-06-18", `{"elicitation":{}}`},
		{"tasks for sampling and elicitation", ServerRequests{Sampling: true, Elicitation: true, Tasks: true}, "",
			`{"elicitation":{"form":{},"url":{}},"sampling":{},"tasks":{"cancel":{},"list":{},"requests":{"elicitation":{"create":{}},"sampling":{"createMessage":{}}}}}`},
		{"tasks for elicitation only", ServerRequests{Elicitation: true, Tasks: true}, "",
			`{"elicitation":{"form":{},"url":{}},"tasks":{"cancel":{},"list":{},"requests":{"elicitation":{"create":{}}}}}`},
		{"tasks with nothing to run as one", ServerRequests{Roots: true, Tasks: true}, "", `{"roots":{"listChanged":true}}`},
		{"tasks before they existed", ServerRequests{Sampling: true, Tasks: true}, "2025-06-18", `{"sampling":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, Options{ServerRequests: tc.opts, ProtocolVersion: tc.version}, fixtureArgs{})
			s.init()
			if got := string(sentInitialize(t, s).Capabilities); got != tc.want {
				t.Fatalf("capabilities %s, want %s", got, tc.want)
			}
		})
	}
}

func TestServerRequestUndeclared(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Undeclared: map[string]string{mcp.MethodCreateMessage: "give --sampling-reply FILE"}}},
		fixtureArgs{faults: []string{"server-ping"}})
	s.init()
	f := s.waitFor("undeclared frame", isFrame(VerdictUndeclared, "sampling capability")).Frame
	if f.Msg.Method != mcp.MethodCreateMessage {
		t.Fatalf("undeclared frame %+v", f)
	}
	ev := s.waitFor("answered", inState("7", StateAnswered))
	var rpc *jsonrpc.Error
	if !errors.As(ev.Req.Err, &rpc) || rpc.Code != jsonrpc.CodeMethodNotFound || !strings.Contains(rpc.Message, "give --sampling-reply FILE") {
		t.Fatalf("answer %v", ev.Req.Err)
	}
	s.waitUntil("the fixture logs the error", func(evs []Event) bool {
		return strings.Contains(stderrText(evs), "id=7 error=") && strings.Contains(stderrText(evs), "--sampling-reply")
	})
	if st := s.c.Stats(); st.Undeclared != 1 || st.ServerReqs != 2 {
		t.Fatalf("stats %+v", st)
	}
	// ping needs no capability.
	if len(s.frames(VerdictServerRequest)) != 1 {
		t.Fatalf("server-request frames: %d", len(s.frames(VerdictServerRequest)))
	}
}

func TestServerRequestWaitsForRespond(t *testing.T) {
	s := start(t, Options{Timeout: time.Second, ServerRequests: ServerRequests{Sampling: true}}, fixtureArgs{faults: []string{"server-ping"}})
	s.init()
	ev := s.waitFor("sampling received", inState("7", StateReceived))
	if !strings.Contains(string(ev.Req.Params), "hello from sonde-fixture") {
		t.Fatalf("params %s", ev.Req.Params)
	}
	// Well past sonde's own request timeout: still waiting, never timed out.
	time.Sleep(1200 * time.Millisecond)
	w := s.c.Waiting()
	if len(w) != 1 || w[0].ID != jsonrpc.Int(7) || w[0].Method != mcp.MethodCreateMessage {
		t.Fatalf("waiting %+v", w)
	}
	for _, ev := range s.snapshot() {
		if ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.ID == jsonrpc.Int(7) && ev.Req.State.Final() {
			t.Fatalf("request 7 ended by itself: %+v", ev.Req)
		}
	}
	if err := s.c.Respond(jsonrpc.Int(7), json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"sonde"}`), nil); err != nil {
		t.Fatal(err)
	}
	s.waitUntil("the fixture logs the result", func(evs []Event) bool {
		return strings.Contains(stderrText(evs), `id=7 result={"role":"assistant"`)
	})
	s.waitFor("answered", inState("7", StateAnswered))
	if err := s.c.Respond(jsonrpc.Int(7), nil, nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("second answer: %v", err)
	}
	if err := s.c.Respond(jsonrpc.String("7"), nil, nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("string id: %v", err)
	}
	if len(s.c.Waiting()) != 0 {
		t.Fatal("still waiting")
	}
}

func TestServerRequestRespondRejectsBadJSON(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Sampling: true}}, fixtureArgs{faults: []string{"server-ping"}})
	s.init()
	s.waitFor("sampling received", inState("7", StateReceived))
	if err := s.c.Respond(jsonrpc.Int(7), json.RawMessage(`{"role":`), nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("got %v", err)
	}
	if len(s.c.Waiting()) != 1 {
		t.Fatal("a refused answer must leave the request waiting")
	}
	if err := s.c.Respond(jsonrpc.Int(7), nil, &jsonrpc.Error{Code: -1, Message: "refused by the user"}); err != nil {
		t.Fatal(err)
	}
	s.waitUntil("the fixture logs the error", func(evs []Event) bool {
		return strings.Contains(stderrText(evs), "refused by the user")
	})
}

func TestServerRequestHandler(t *testing.T) {
	var got ServerRequest
	h := func(r ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
		got = r
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"from handler"},"model":"m"}`), nil, true
	}
	s := start(t, Options{ServerRequests: ServerRequests{Sampling: true, Handler: h}}, fixtureArgs{faults: []string{"server-ping"}})
	s.init()
	s.waitUntil("the fixture logs the result", func(evs []Event) bool {
		return strings.Contains(stderrText(evs), "from handler")
	})
	s.waitFor("answered", inState("7", StateAnswered))
	if got.Method != mcp.MethodCreateMessage || got.ID != jsonrpc.Int(7) {
		t.Fatalf("handler saw %+v", got)
	}
}

func TestServerRequestEndsWithSession(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Sampling: true}}, fixtureArgs{faults: []string{"server-ping"}})
	s.init()
	s.waitFor("sampling received", inState("7", StateReceived))
	s.c.Close()
	s.waitFor("closed", inState("7", StateClosed))
	if err := s.c.Respond(jsonrpc.Int(7), nil, nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("got %v", err)
	}
}

func TestDirRoot(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a b")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := DirRoot(sub)
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + filepath.ToSlash(dir) + "/a%20b"; r.URI != want || r.Name != "a b" {
		t.Fatalf("root %+v, want %s", r, want)
	}
	wd, _ := os.Getwd()
	t.Chdir(dir)
	r, err = DirRoot("a b")
	if err != nil || !strings.HasSuffix(r.URI, "/a%20b") || !strings.HasPrefix(r.URI, "file:///") {
		t.Fatalf("relative: %+v %v", r, err)
	}
	t.Chdir(wd)
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for _, bad := range []string{"", filepath.Join(dir, "missing"), file} {
		if _, err := DirRoot(bad); err == nil {
			t.Errorf("DirRoot(%q) succeeded", bad)
		}
	}
}

func TestSetRoots(t *testing.T) {
	t.Run("without the capability", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{})
		s.init()
		if err := s.c.SetRoots([]mcp.Root{{URI: "file:///tmp"}}); !errors.Is(err, ErrProtocol) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("list_changed after the handshake only", func(t *testing.T) {
		s := start(t, Options{ServerRequests: ServerRequests{Roots: true, RootList: []mcp.Root{{URI: "file:///a"}}}}, fixtureArgs{})
		if err := s.c.SetRoots([]mcp.Root{{URI: "file:///b"}}); err != nil {
			t.Fatal(err)
		}
		s.init()
		if err := s.c.SetRoots([]mcp.Root{{URI: "file:///c"}}); err != nil {
			t.Fatal(err)
		}
		s.waitFor("list_changed sent", func(ev Event) bool {
			return ev.Kind == EvFrame && ev.Frame.Verdict == VerdictSent && ev.Frame.Msg.Method == mcp.MethodRootsChanged
		})
		n := 0
		for _, f := range s.frames(VerdictSent) {
			if f.Msg.Method == mcp.MethodRootsChanged {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d list_changed notifications, want 1", n)
		}
		if r := s.c.Roots(); len(r) != 1 || r[0].URI != "file:///c" {
			t.Fatalf("roots %+v", r)
		}
		// The fixture does not use roots; it ignores the notification.
		if _, err := s.c.Call(context.Background(), "ping", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestServerRequestsWaitingBounded(t *testing.T) {
	const extra = 10
	s := start(t, Options{ServerRequests: ServerRequests{Sampling: true}},
		fixtureArgs{faults: []string{"server-request-flood"}, extra: []string{"--flood-count", strconv.Itoa(maxWaiting + extra)}})
	s.init()
	s.waitUntil("every flood request received or refused", func(evs []Event) bool {
		return countIn(evs, mcp.MethodCreateMessage, StateReceived) == maxWaiting+extra
	})
	if n := len(s.c.Waiting()); n != maxWaiting {
		t.Fatalf("%d waiting, want %d", n, maxWaiting)
	}
	refused := 0
	for _, ev := range s.snapshot() {
		if ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.State == StateAnswered {
			var rpc *jsonrpc.Error
			if !errors.As(ev.Req.Err, &rpc) || rpc.Code != jsonrpc.CodeInternalError || !strings.Contains(rpc.Message, "requests from this server waiting") {
				t.Fatalf("refusal %+v", ev.Req)
			}
			refused++
		}
	}
	if refused != extra {
		t.Fatalf("%d refused, want %d", refused, extra)
	}
	// An answer frees a place.
	w := s.c.Waiting()
	if err := s.c.Respond(w[0].ID, json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(s.c.Waiting()); n != maxWaiting-1 {
		t.Fatalf("%d waiting after an answer", n)
	}
}
