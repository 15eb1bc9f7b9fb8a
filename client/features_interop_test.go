package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// TestInteropFeatures runs the server features (resources, prompts,
// completion, logging, subscriptions, tasks) against server-everything over
// stdio and Streamable HTTP.
func TestInteropFeatures(t *testing.T) {
	bin := everythingServer(t)
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		interopFeatures(t, startPeer(t, Options{Timeout: 20 * time.Second}, bin))
	})
	t.Run("streamable", func(t *testing.T) {
		t.Parallel()
		base := peertest.EverythingHTTP(t, "streamableHttp")
		interopFeatures(t, dialSession(t, Options{Timeout: 20 * time.Second}, HTTP(transport.HTTPConfig{URL: base + "/mcp", Mode: transport.ModeStreamable})))
	})
}

// notifications returns the params of every notification with method
// received so far.
func (s *session) notifications(method string) []json.RawMessage {
	var out []json.RawMessage
	for _, ev := range s.snapshot() {
		if ev.Kind == EvFrame && ev.Frame.Dir == transport.In && ev.Frame.Msg.Method == method {
			out = append(out, ev.Frame.Msg.Params)
		}
	}
	return out
}

func interopFeatures(t *testing.T, s *session) {
	ctx := context.Background()
	s.init()
	caps := s.c.ServerCaps()
	if caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Logging == nil || caps.Completions == nil || !caps.Tasks.ToolCallTasks() {
		t.Fatalf("capabilities of server-everything: %+v", caps)
	}

	const doc = "demo://resource/static/document/architecture.md"
	t.Run("resources", func(t *testing.T) {
		res, err := s.c.ListResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range res {
			found = found || (r.URI == doc && r.MimeType == "text/markdown")
		}
		if !found {
			t.Fatalf("%s not among %+v", doc, res)
		}
		tpls, err := s.c.ListResourceTemplates(ctx)
		if err != nil || len(tpls) < 2 {
			t.Fatalf("%+v %v", tpls, err)
		}
		if tpls[0].URITemplate != "demo://resource/dynamic/text/{resourceId}" {
			t.Fatalf("%+v", tpls)
		}
		text, _, err := s.c.ReadResource(ctx, doc)
		if err != nil || len(text.Contents) != 1 || text.Contents[0].Text == nil || !strings.Contains(*text.Contents[0].Text, "#") {
			t.Fatalf("%+v %v", text, err)
		}
		blob, _, err := s.c.ReadResource(ctx, "demo://resource/dynamic/blob/7")
		if err != nil || len(blob.Contents) != 1 || blob.Contents[0].Blob == nil {
			t.Fatalf("%+v %v", blob, err)
		}
		b, err := base64.StdEncoding.DecodeString(*blob.Contents[0].Blob)
		if err != nil || !strings.HasPrefix(string(b), "Resource 7: This is a base64 blob") {
			t.Fatalf("%q %v", b, err)
		}
		_, _, err = s.c.ReadResource(ctx, "demo://resource/dynamic/text/0")
		if !errors.Is(err, ErrRemote) {
			t.Fatalf("reading a resource that does not exist: %v", err)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		ps, err := s.c.ListPrompts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var args *mcp.Prompt
		for i := range ps {
			if ps[i].Name == "args-prompt" {
				args = &ps[i]
			}
		}
		if args == nil || len(args.Arguments) != 2 || !args.Arguments[0].Required || args.Arguments[1].Required {
			t.Fatalf("%+v", ps)
		}
		r, _, err := s.c.GetPrompt(ctx, "args-prompt", map[string]string{"city": "Paris", "state": "TX"})
		if err != nil || len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Messages[0].Content.Text != "What's weather in Paris, TX?" {
			t.Fatalf("%+v %v", r, err)
		}
		r, _, err = s.c.GetPrompt(ctx, "resource-prompt", map[string]string{"resourceType": "Blob", "resourceId": "2"})
		if err != nil || len(r.Messages) != 2 || r.Messages[1].Content.Type != "resource" || r.Messages[1].Content.Resource == nil || r.Messages[1].Content.Resource.Blob == nil {
			t.Fatalf("%+v %v", r, err)
		}
		if _, _, err := s.c.GetPrompt(ctx, "args-prompt", nil); !errors.Is(err, ErrRemote) {
			t.Fatalf("a missing required argument: %v", err)
		}
	})

	t.Run("completion", func(t *testing.T) {
		c, err := s.c.Complete(ctx, mcp.CompleteRef{Type: mcp.RefPrompt, Name: "completable-prompt"}, mcp.CompleteArgument{Name: "department", Value: "S"}, nil)
		if err != nil || strings.Join(c.Values, ",") != "Sales,Support" {
			t.Fatalf("%+v %v", c, err)
		}
		c, err = s.c.Complete(ctx, mcp.CompleteRef{Type: mcp.RefPrompt, Name: "completable-prompt"}, mcp.CompleteArgument{Name: "name", Value: "A"}, map[string]string{"department": "Engineering"})
		if err != nil || strings.Join(c.Values, ",") != "Alice" {
			t.Fatalf("with context: %+v %v", c, err)
		}
		c, err = s.c.Complete(ctx, mcp.CompleteRef{Type: mcp.RefResource, URI: "demo://resource/dynamic/text/{resourceId}"}, mcp.CompleteArgument{Name: "resourceId", Value: "3"}, nil)
		if err != nil || strings.Join(c.Values, ",") != "3" {
			t.Fatalf("template variable: %+v %v", c, err)
		}
	})

	t.Run("logging and subscriptions", func(t *testing.T) {
		// The server logs every subscribe and unsubscribe at level info.
		if err := s.c.SetLogLevel(ctx, "emergency"); err != nil {
			t.Fatal(err)
		}
		if err := s.c.SubscribeResource(ctx, doc); err != nil {
			t.Fatal(err)
		}
		if err := s.c.SetLogLevel(ctx, "debug"); err != nil {
			t.Fatal(err)
		}
		// Updates for the subscribed resource: immediately, then every 5s.
		if _, _, err := s.c.CallTool(ctx, "toggle-subscriber-updates", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
		s.waitFor("notifications/resources/updated", func(ev Event) bool {
			return ev.Kind == EvFrame && ev.Frame.Msg.Method == mcp.MethodResourceUpdated && strings.Contains(string(ev.Frame.Msg.Params), doc)
		})
		if _, _, err := s.c.CallTool(ctx, "toggle-subscriber-updates", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := s.c.UnsubscribeResource(ctx, doc); err != nil {
			t.Fatal(err)
		}
		// The message comes before the response, but the recorder may see
		// it after Wait returned.
		var lm mcp.LogMessageParams
		s.waitUntil("an info message about the unsubscribe at level debug", func([]Event) bool {
			for _, p := range s.notifications(mcp.MethodLogMessage) {
				if strings.Contains(string(p), "Unsubscribe Resource") && json.Unmarshal(p, &lm) == nil {
					return true
				}
			}
			return false
		})
		if lm.Level != "info" {
			t.Fatalf("%+v", lm)
		}
		// Everything before the unsubscribe's message has been recorded by
		// now: the subscribe's message, sent at the emergency level, is not
		// there.
		for _, p := range s.notifications(mcp.MethodLogMessage) {
			if strings.Contains(string(p), "Received Subscribe Resource") {
				t.Fatalf("an info message passed the emergency level: %s", p)
			}
		}
		if err := s.c.SetLogLevel(ctx, "loud"); !errors.Is(err, ErrRemote) {
			t.Fatalf("an unknown level: %v", err)
		}
		// Simulated logging sends one message at once at a random level.
		before := len(s.notifications(mcp.MethodLogMessage))
		if _, _, err := s.c.CallTool(ctx, "toggle-simulated-logging", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
		s.waitUntil("a simulated log message", func([]Event) bool { return len(s.notifications(mcp.MethodLogMessage)) > before })
		if _, _, err := s.c.CallTool(ctx, "toggle-simulated-logging", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("task", func(t *testing.T) {
		tc := s.c.GoToolTask(ctx, "simulate-research-query", json.RawMessage(`{"topic":"tides"}`), TaskOptions{TTL: time.Minute})
		res, raw, err := tc.Wait()
		if err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "Research Report: tides") {
			t.Fatalf("%s %v", raw, err)
		}
		task := tc.Task()
		if task.Status != mcp.TaskCompleted || task.PollInterval == nil || *task.PollInterval != 1000 {
			t.Fatalf("%+v", task)
		}
		s.waitFor("the task's last event", func(ev Event) bool { return ev.Kind == EvTask && ev.Task.Call == tc.call && ev.Task.End })
		var statuses []string
		gets := 0
		for _, ev := range s.snapshot() {
			if ev.Kind == EvTask && ev.Task.Task.TaskID == task.TaskID {
				statuses = append(statuses, ev.Task.Task.Status)
				if ev.Task.Tool != "simulate-research-query" {
					t.Fatalf("%+v", ev.Task)
				}
			}
			if ev.Kind == EvRequest && ev.Req.Method == mcp.MethodTasksGet && ev.Req.State == StateResolved {
				gets++
			}
		}
		if len(statuses) < 2 || statuses[0] != mcp.TaskWorking || statuses[len(statuses)-1] != mcp.TaskCompleted {
			t.Fatalf("task events: %v", statuses)
		}
		// Four stages of 1s polled every 1s: a few polls, not a busy loop.
		if gets < 2 || gets > 8 {
			t.Fatalf("%d tasks/get for a 4s task polled every 1s", gets)
		}
	})

	t.Run("cancelled task", func(t *testing.T) {
		tc := s.c.GoToolTask(ctx, "simulate-research-query", json.RawMessage(`{"topic":"eels"}`), TaskOptions{})
		st, err := tc.Cancel(ctx)
		if err != nil || st.Status != mcp.TaskCancelled {
			t.Fatalf("%+v %v", st, err)
		}
		if _, _, err := tc.Wait(); !errors.Is(err, ErrAborted) {
			t.Fatalf("got %v", err)
		}
		if got := tc.Task().Status; got != mcp.TaskCancelled {
			t.Fatal(got)
		}
	})

	t.Run("task cancelled by id", func(t *testing.T) {
		tc := s.c.GoToolTask(ctx, "simulate-research-query", json.RawMessage(`{"topic":"kelp"}`), TaskOptions{})
		ev := s.waitFor("the task's first event", func(ev Event) bool { return ev.Kind == EvTask && ev.Task.Call == tc.call })
		st, err := s.c.CancelTask(ctx, ev.Task.Task.TaskID)
		if err != nil || st.Status != mcp.TaskCancelled {
			t.Fatalf("%+v %v", st, err)
		}
		if _, _, err := tc.Wait(); !errors.Is(err, ErrAborted) {
			t.Fatalf("got %v", err)
		}
		end := s.waitFor("the task's last event", func(ev Event) bool { return ev.Kind == EvTask && ev.Task.Call == tc.call && ev.Task.End })
		if end.Task.Task.Status != mcp.TaskCancelled || !errors.Is(end.Task.Err, ErrAborted) {
			t.Fatalf("%+v", end.Task)
		}
	})

	t.Run("task abandoned by the caller is cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		tc := s.c.GoToolTask(cctx, "simulate-research-query", json.RawMessage(`{"topic":"moss"}`), TaskOptions{})
		s.waitFor("the task's first event", func(ev Event) bool { return ev.Kind == EvTask && ev.Task.Call == tc.call })
		cancel()
		if _, _, err := tc.Wait(); !errors.Is(err, ErrAborted) {
			t.Fatalf("got %v", err)
		}
		s.waitFor("tasks/cancel resolved", func(ev Event) bool {
			return ev.Kind == EvRequest && ev.Req.Method == mcp.MethodTasksCancel && ev.Req.State == StateResolved
		})
	})
}
