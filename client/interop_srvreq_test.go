package client

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// TestInteropServerRequests declares roots, sampling and elicitation to
// server-everything, over stdio, Streamable HTTP and legacy SSE, and answers what it
// asks: roots/list by itself, sampling and elicitation through Respond.
func TestInteropServerRequests(t *testing.T) {
	bin := everythingServer(t)
	opts := func(t *testing.T) Options {
		root, err := DirRoot(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return Options{Timeout: 20 * time.Second, ServerRequests: ServerRequests{
			Roots: true, RootList: []mcp.Root{root}, Sampling: true, Elicitation: true, Tasks: true,
		}}
	}
	t.Run("stdio", func(t *testing.T) {
		o := opts(t)
		s := startPeer(t, o, bin)
		interopServerRequests(t, s, o.ServerRequests.RootList[0])
		// Every request of the server was answered, so it exits by itself
		// when its stdin closes: no signal is needed.
		s.c.Close()
		<-s.done
		for _, ev := range s.snapshot() {
			if ev.Kind == EvProcess && ev.Proc.What == ProcSignal {
				t.Errorf("the server had to be signalled (%s): a request of its was left unanswered", ev.Proc.Signal)
			}
		}
		s.waitFor("the exit", func(ev Event) bool { return ev.Kind == EvProcess && ev.Proc.What == ProcExit })
	})
	t.Run("streamable", func(t *testing.T) {
		o := opts(t)
		base := peertest.EverythingHTTP(t, "streamableHttp")
		s := dialSession(t, o, HTTP(transport.HTTPConfig{URL: base + "/mcp", Mode: transport.ModeStreamable}))
		interopServerRequests(t, s, o.ServerRequests.RootList[0])
	})
	t.Run("legacy sse", func(t *testing.T) {
		o := opts(t)
		base := peertest.EverythingHTTP(t, "sse")
		s := dialSession(t, o, HTTP(transport.HTTPConfig{URL: base + "/sse", Mode: transport.ModeSSE}))
		interopServerRequests(t, s, o.ServerRequests.RootList[0])
	})
}

// waitingFor polls until the server's request method is waiting for an
// answer, and returns it.
func waitingFor(t *testing.T, s *session, method string) ServerRequest {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range s.c.Waiting() {
			if r.Method == method {
				return r
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s request from the server within 10s", method)
	return ServerRequest{}
}

func interopServerRequests(t *testing.T, s *session, root mcp.Root) {
	ctx := context.Background()
	if _, err := s.c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	// roots/list comes by itself after initialized and is answered.
	s.waitFor("roots/list answered", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.Method == mcp.MethodRootsList && ev.Req.State == StateAnswered && ev.Req.Err == nil
	})
	// The tools that need client capabilities are registered after
	// initialized, each announced with list_changed.
	wanted := []string{"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation",
		"trigger-sampling-request-async", "trigger-elicitation-request-async"}
	var names map[string]bool
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools, err := s.c.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		names = map[string]bool{}
		for _, tool := range tools {
			names[tool.Name] = true
		}
		all := true
		for _, w := range wanted {
			all = all && names[w]
		}
		if all || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range wanted {
		if !names[want] {
			t.Fatalf("no %s among %v", want, names)
		}
	}
	call := func(name, args string) *Call {
		return s.c.GoTool(ctx, name, json.RawMessage(args), CallOptions{})
	}
	text := func(c *Call) string {
		t.Helper()
		raw, err := c.Wait()
		if err != nil {
			t.Fatalf("%s: %v", c.Tool, err)
		}
		r, err := ToolResult(c.Tool, raw)
		if err != nil || r.IsError {
			t.Fatalf("%s: %s %v", c.Tool, raw, err)
		}
		var b strings.Builder
		for _, c := range r.Content {
			b.WriteString(c.Text)
		}
		return b.String()
	}

	t.Run("roots", func(t *testing.T) {
		if got := text(call("get-roots-list", `{}`)); !strings.Contains(got, root.URI) {
			t.Fatalf("roots: %s", got)
		}
		other, err := DirRoot(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		before := countIn(s.snapshot(), mcp.MethodRootsList, StateAnswered)
		if err := s.c.SetRoots([]mcp.Root{root, other}); err != nil {
			t.Fatal(err)
		}
		// list_changed makes the server ask again.
		s.waitUntil("a second roots/list", func(evs []Event) bool { return countIn(evs, mcp.MethodRootsList, StateAnswered) > before })
		got := text(call("get-roots-list", `{}`))
		if !strings.Contains(got, other.URI) || !strings.Contains(got, "2 total") {
			t.Fatalf("roots after SetRoots: %s", got)
		}
	})
	t.Run("sampling", func(t *testing.T) {
		c := call("trigger-sampling-request", `{"prompt":"say hi","maxTokens":5}`)
		r := waitingFor(t, s, mcp.MethodCreateMessage)
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(r.Params, &p); err != nil || len(p.Messages) != 1 || !strings.Contains(string(p.Messages[0].Content), "say hi") {
			t.Fatalf("params %s %v", r.Params, err)
		}
		if err := s.c.Respond(r.ID, json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi from sonde"},"model":"sonde-test"}`), nil); err != nil {
			t.Fatal(err)
		}
		if got := text(c); !strings.Contains(got, "hi from sonde") || !strings.Contains(got, "sonde-test") {
			t.Fatalf("sampling: %s", got)
		}
	})
	t.Run("sampling refused", func(t *testing.T) {
		c := call("trigger-sampling-request", `{"prompt":"no"}`)
		r := waitingFor(t, s, mcp.MethodCreateMessage)
		if err := s.c.Respond(r.ID, nil, &jsonrpc.Error{Code: -1, Message: "refused by the user"}); err != nil {
			t.Fatal(err)
		}
		raw, err := c.Wait()
		if err == nil && !strings.Contains(string(raw), "refused by the user") {
			t.Fatalf("refusal not seen: %s", raw)
		}
	})
	for _, tc := range []struct {
		action, result, want string
	}{
		{"accept", `{"action":"accept","content":{"name":"Ada","check":true,"integer":7}}`, "Name: Ada"},
		{"decline", `{"action":"decline"}`, "declined"},
		{"cancel", `{"action":"cancel"}`, "cancelled"},
	} {
		t.Run("elicitation "+tc.action, func(t *testing.T) {
			c := call("trigger-elicitation-request", `{}`)
			r := waitingFor(t, s, mcp.MethodElicit)
			var p mcp.ElicitParams
			if err := json.Unmarshal(r.Params, &p); err != nil || p.Mode != "" || !strings.Contains(string(p.RequestedSchema), `"required":["name"]`) {
				t.Fatalf("params %s %v", r.Params, err)
			}
			if err := s.c.Respond(r.ID, json.RawMessage(tc.result), nil); err != nil {
				t.Fatal(err)
			}
			if got := text(c); !strings.Contains(got, tc.want) {
				t.Fatalf("elicitation: %s", got)
			}
		})
	}
	t.Run("url elicitation", func(t *testing.T) {
		c := call("trigger-url-elicitation", `{"url":"https://example.com/login","elicitationId":"e-1"}`)
		r := waitingFor(t, s, mcp.MethodElicit)
		var p mcp.ElicitParams
		if err := json.Unmarshal(r.Params, &p); err != nil || p.Mode != "url" || p.URL != "https://example.com/login" || p.ElicitationID != "e-1" {
			t.Fatalf("params %s %v", r.Params, err)
		}
		if err := s.c.Respond(r.ID, json.RawMessage(`{"action":"accept"}`), nil); err != nil {
			t.Fatal(err)
		}
		if got := text(c); !strings.Contains(got, "completed the URL elicitation") {
			t.Fatalf("url elicitation: %s", got)
		}
	})
	// The async tools send their request as a task for sonde to run
	// (params.task): sonde answers with a CreateTaskResult, the request
	// waits as "task:<taskId>", and the server polls tasks/get, then
	// fetches the answer with tasks/result.
	t.Run("sampling as a task", func(t *testing.T) {
		c := call("trigger-sampling-request-async", `{"prompt":"task me"}`)
		r := waitingFor(t, s, mcp.MethodCreateMessage)
		if !isTaskAsk(r.ID) || !strings.Contains(string(r.Params), "task me") {
			t.Fatalf("request %s %s", r.ID, r.Params)
		}
		// Long enough for a poll (the server polls every second) to see it
		// working.
		s.waitFor("a tasks/get", func(ev Event) bool {
			return ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.Method == mcp.MethodTasksGet && ev.Req.State == StateAnswered
		})
		if err := s.c.Respond(r.ID, json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi from a task"},"model":"sonde-test"}`), nil); err != nil {
			t.Fatal(err)
		}
		str, _ := r.ID.Str()
		got := text(c)
		for _, want := range []string{"[COMPLETED] Async sampling completed", "Task created: " + strings.TrimPrefix(str, "task:"), "Poll 1: working", "hi from a task", "io.modelcontextprotocol/related-task"} {
			if !strings.Contains(got, want) {
				t.Fatalf("no %q in %s", want, got)
			}
		}
	})
	t.Run("elicitation as a task", func(t *testing.T) {
		c := call("trigger-elicitation-request-async", `{}`)
		r := waitingFor(t, s, mcp.MethodElicit)
		if !isTaskAsk(r.ID) {
			t.Fatalf("request %s %s", r.ID, r.Params)
		}
		if err := s.c.Respond(r.ID, json.RawMessage(`{"action":"accept","content":{"name":"Grace","favoriteColor":"Green"}}`), nil); err != nil {
			t.Fatal(err)
		}
		if got := text(c); !strings.Contains(got, "[COMPLETED] User provided the requested information!") || !strings.Contains(got, "Name: Grace") {
			t.Fatalf("elicitation task: %s", got)
		}
	})
	if st := s.c.Stats(); st.Malformed != 0 || st.Invalid != 0 || st.Unknown != 0 {
		t.Fatalf("protocol problems: %+v", st)
	}
	for _, f := range s.frames(VerdictUndeclared) {
		t.Errorf("undeclared request: %s", f.Raw)
	}
}

// TestInteropTaskInputRequired runs a task of server-everything's that
// needs input (simulate-research-query with ambiguous): the task reaches
// input_required, its elicitation arrives through tasks/result (sonde keeps
// polling meanwhile), is answered, and the task goes on to completed. The
// server keeps a timer for the task's ttl (5 minutes), so over stdio it does
// not exit by itself on EOF: the session's close signals it.
func TestInteropTaskInputRequired(t *testing.T) {
	bin := everythingServer(t)
	o := Options{Timeout: 20 * time.Second, ServerRequests: ServerRequests{Elicitation: true}}
	run := func(t *testing.T, s *session) {
		ctx := context.Background()
		if _, err := s.c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		// The tool is registered after initialized (it needs elicitation).
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			tools, err := s.c.ListTools(ctx)
			if err == nil && slices.ContainsFunc(tools, func(t mcp.Tool) bool { return t.Name == "simulate-research-query" }) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("simulate-research-query not listed within 10s (%v)", err)
			}
		}
		tc := s.c.GoToolTask(ctx, "simulate-research-query", json.RawMessage(`{"topic":"python","ambiguous":true}`), TaskOptions{Timeout: 30 * time.Second})
		r := waitingFor(t, s, mcp.MethodElicit)
		if isTaskAsk(r.ID) || !strings.Contains(string(r.Params), "interpretation") {
			t.Fatalf("request %s %s", r.ID, r.Params)
		}
		if got := tc.Task().Status; got != mcp.TaskInputRequired {
			t.Fatalf("task status %s while its input is asked for", got)
		}
		if err := s.c.Respond(r.ID, json.RawMessage(`{"action":"accept","content":{"interpretation":"snakes"}}`), nil); err != nil {
			t.Fatal(err)
		}
		res, _, err := tc.Wait()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			b.WriteString(c.Text)
		}
		if !strings.Contains(b.String(), `After receiving clarification ("snakes")`) {
			t.Fatalf("research: %s", b.String())
		}
		var statuses []string
		for _, ev := range s.snapshot() {
			if ev.Kind == EvTask && ev.Task.Call == tc.CallID() {
				statuses = append(statuses, ev.Task.Task.Status)
			}
		}
		seq := strings.Join(statuses, ",")
		if !strings.Contains(seq, "working,input_required,") || !strings.HasSuffix(seq, ",completed") {
			t.Fatalf("statuses %s", seq)
		}
	}
	t.Run("stdio", func(t *testing.T) { run(t, startPeer(t, o, bin)) })
	t.Run("streamable", func(t *testing.T) {
		base := peertest.EverythingHTTP(t, "streamableHttp")
		run(t, dialSession(t, o, HTTP(transport.HTTPConfig{URL: base + "/mcp", Mode: transport.ModeStreamable})))
	})
	t.Run("legacy sse", func(t *testing.T) {
		base := peertest.EverythingHTTP(t, "sse")
		run(t, dialSession(t, o, HTTP(transport.HTTPConfig{URL: base + "/sse", Mode: transport.ModeSSE})))
	})
}

// countIn counts the server's requests of method that reached state.
func countIn(evs []Event, method string, state State) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.Method == method && ev.Req.State == state {
			n++
		}
	}
	return n
}
