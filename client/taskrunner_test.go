package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// acceptConfirm answers the fixture's confirm elicitation with yes.
func acceptConfirm(r ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
	if r.Method != mcp.MethodElicit {
		return nil, nil, false
	}
	return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil, true
}

// isTaskAsk reports whether id is the waiting request of a task sonde runs.
func isTaskAsk(id jsonrpc.ID) bool {
	s, ok := id.Str()
	return ok && strings.HasPrefix(s, "task:")
}

// confirmTask calls the fixture's confirm tool with the given task mode
// and returns its text.
func confirmTask(t *testing.T, s *session, mode string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, _, err := s.c.CallTool(ctx, "confirm", json.RawMessage(`{"task":"`+mode+`"}`), CallOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("empty result %+v", res)
	}
	return res.Content[0].Text
}

// clientTaskEvents returns the statuses of the EvTask events of tasks sonde
// ran for the server, and whether the last one ended the task.
func clientTaskEvents(s *session) (statuses []string, ended bool) {
	for _, ev := range s.snapshot() {
		if ev.Kind == EvTask && ev.Task.Dir == transport.In {
			statuses = append(statuses, ev.Task.Task.Status)
			ended = ev.Task.End
		}
	}
	return statuses, ended
}

func TestClientTaskPolled(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true, Tasks: true, Handler: acceptConfirm}}, fixtureArgs{})
	s.init()
	text := confirmTask(t, s, "poll")
	if !strings.HasPrefix(text, "task sonde-1-") || !strings.HasSuffix(text, ": created working, completed; confirmed") {
		t.Fatalf("text %q", text)
	}
	statuses, ended := clientTaskEvents(s)
	if strings.Join(statuses, ",") != "working,completed" || !ended {
		t.Fatalf("task events %v ended=%v", statuses, ended)
	}
	// The CreateTaskResult answered the request; the status went out too.
	var created, notified bool
	for _, f := range s.frames(VerdictSent) {
		created = created || strings.Contains(string(f.Raw), `"result":{"task":{"taskId":"sonde-1-`)
		notified = notified || (strings.Contains(string(f.Raw), mcp.MethodTaskStatus) && strings.Contains(string(f.Raw), `"status":"completed"`))
	}
	if !created || !notified {
		t.Fatalf("CreateTaskResult sent %v, status notification sent %v", created, notified)
	}
	if len(s.c.Waiting()) != 0 {
		t.Fatalf("waiting %+v", s.c.Waiting())
	}
}

func TestClientTaskAnsweredByRespond(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true, Tasks: true}}, fixtureArgs{})
	s.init()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	call := s.c.GoTool(ctx, "confirm", json.RawMessage(`{"task":"result"}`), CallOptions{Timeout: 20 * time.Second})
	ask := s.waitFor("the task's request waits", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.Dir == transport.In && isTaskAsk(ev.Req.ID) && ev.Req.State == StateReceived
	}).Req
	if ask.Method != mcp.MethodElicit || !strings.Contains(string(ask.Params), `"task":{"ttl":60000}`) {
		t.Fatalf("ask %+v", ask)
	}
	// The server's tasks/result waits for the task's end.
	res := s.waitFor("tasks/result received", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.Method == mcp.MethodTasksResult && ev.Req.State == StateReceived
	}).Req
	if w := s.c.Waiting(); len(w) != 1 || w[0].ID != ask.ID {
		t.Fatalf("waiting %+v (want only %s: tasks/result is not the user's to answer)", w, ask.ID)
	}
	if err := s.c.Respond(ask.ID, json.RawMessage(`{"action":"accept","content":{"confirm":true},"_meta":{"k":1}}`), nil); err != nil {
		t.Fatal(err)
	}
	raw, err := call.Wait()
	if err != nil {
		t.Fatal(err)
	}
	r, err := ToolResult("confirm", raw)
	if err != nil {
		t.Fatal(err)
	}
	if txt := r.Content[0].Text; !strings.HasSuffix(txt, ": created working; confirmed") {
		t.Fatalf("text %q", txt)
	}
	// tasks/result carried the answer, its _meta kept and the task linked.
	str, _ := ask.ID.Str()
	taskID := strings.TrimPrefix(str, "task:")
	if !strings.Contains(string(r.StructuredContent), `"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"`+taskID+`"},"k":1}`) {
		t.Fatalf("structured %s", r.StructuredContent)
	}
	s.waitFor("tasks/result answered", inState(res.ID.String(), StateAnswered))
	if err := s.c.Respond(ask.ID, nil, nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("second answer: %v", err)
	}
}

func TestClientTaskRefusedFails(t *testing.T) {
	refuse := func(ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
		return nil, &jsonrpc.Error{Code: -32001, Message: "no, thanks"}, true
	}
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true, Tasks: true, Handler: refuse}}, fixtureArgs{})
	s.init()
	text := confirmTask(t, s, "poll")
	if !strings.Contains(text, ": created working, failed; not confirmed: the client answered elicitation/create with an error: ") || !strings.Contains(text, "no, thanks") {
		t.Fatalf("text %q", text)
	}
	if statuses, ended := clientTaskEvents(s); strings.Join(statuses, ",") != "working,failed" || !ended {
		t.Fatalf("task events %v ended=%v", statuses, ended)
	}
}

func TestClientTaskCancelledByServer(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true, Tasks: true}}, fixtureArgs{})
	s.init()
	text := confirmTask(t, s, "cancel")
	if !strings.Contains(text, `tasks/cancel {"taskId":"sonde-1-`) || !strings.Contains(text, `"status":"cancelled"`) ||
		!strings.Contains(text, "with an error: ") || !strings.Contains(text, "was cancelled: it has no result") {
		t.Fatalf("text %q", text)
	}
	ev := s.waitFor("the task's request ends", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.Dir == transport.In && isTaskAsk(ev.Req.ID) && ev.Req.State == StateCancelled
	})
	if len(s.c.Waiting()) != 0 {
		t.Fatalf("waiting %+v", s.c.Waiting())
	}
	if err := s.c.Respond(ev.Req.ID, nil, nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("answer after cancel: %v", err)
	}
	if statuses, ended := clientTaskEvents(s); strings.Join(statuses, ",") != "working,cancelled" || !ended {
		t.Fatalf("task events %v ended=%v", statuses, ended)
	}
}

func TestClientTaskList(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true, Tasks: true, Handler: acceptConfirm}}, fixtureArgs{})
	s.init()
	first := confirmTask(t, s, "list")
	second := confirmTask(t, s, "list")
	if !strings.Contains(first, `tasks/list {"tasks":[{"taskId":"sonde-1-`) || !strings.HasSuffix(first, "confirmed") {
		t.Fatalf("first %q", first)
	}
	// Ended tasks stay listed (until their ttl), oldest first.
	if !strings.Contains(second, `tasks/list {"tasks":[{"taskId":"sonde-1-`) || !strings.Contains(second, `"status":"completed"`) {
		t.Fatalf("second %q", second)
	}
}

func TestClientTaskNotDeclared(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true, Handler: acceptConfirm}}, fixtureArgs{})
	s.init()
	if text := confirmTask(t, s, "poll"); text != "no task: the client answered directly; confirmed" {
		t.Fatalf("text %q", text)
	}
	s.waitFor("a note", func(ev Event) bool {
		return ev.Kind == EvNote && strings.Contains(ev.Note, "did not declare tasks for it: answered directly")
	})
}

func TestClientTaskEndsWithSession(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true, Tasks: true}}, fixtureArgs{})
	s.init()
	call := s.c.GoTool(context.Background(), "confirm", json.RawMessage(`{"task":"result"}`), CallOptions{Timeout: 20 * time.Second})
	res := s.waitFor("tasks/result received", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.Method == mcp.MethodTasksResult && ev.Req.State == StateReceived
	}).Req
	s.c.Close()
	if _, err := call.Wait(); !errors.Is(err, ErrClosed) {
		t.Fatalf("call: %v", err)
	}
	s.waitFor("tasks/result ends", inState(res.ID.String(), StateClosed))
	s.waitFor("the task ends", func(ev Event) bool {
		return ev.Kind == EvTask && ev.Task.Dir == transport.In && ev.Task.End && ev.Task.Task.Status == mcp.TaskWorking
	})
}

func TestClientTaskOutcomeKeepsMeta(t *testing.T) {
	for _, tc := range []struct{ result, want string }{
		{`{"action":"decline"}`, `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}},"action":"decline"}`},
		{`{"action":"accept","_meta":{"a":"b"}}`, `{"_meta":{"a":"b","io.modelcontextprotocol/related-task":{"taskId":"t1"}},"action":"accept"}`},
		{`[1]`, `[1]`}, // not an object: sent as it is
	} {
		ct := &clientTask{task: mcp.Task{TaskID: "t1", Status: mcp.TaskCompleted}, result: json.RawMessage(tc.result)}
		got, rpcErr := ct.outcome()
		if rpcErr != nil || string(got) != tc.want {
			t.Errorf("outcome of %s: %s %v, want %s", tc.result, got, rpcErr, tc.want)
		}
	}
	ct := &clientTask{task: mcp.Task{TaskID: "t1", Status: mcp.TaskCancelled}}
	if _, rpcErr := ct.outcome(); rpcErr == nil || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("cancelled: %v", rpcErr)
	}
}

func TestClientTasksBounded(t *testing.T) {
	var ts clientTasks
	ts.byID = map[string]*clientTask{}
	for i := range maxClientTasks {
		id := "t" + string(rune('a'+i%26)) + jsonrpc.Int(int64(i)).String()
		ts.byID[id] = &clientTask{seq: i + 1, task: mcp.Task{TaskID: id, Status: mcp.TaskWorking}, created: time.Now(), ttl: time.Hour}
	}
	if ts.makeRoom() {
		t.Fatal("room with every task running")
	}
	// One ended: it makes room. One expired: forgotten first.
	var oldest *clientTask
	for _, ct := range ts.byID {
		if ct.seq == 10 {
			ct.task.Status = mcp.TaskCompleted
			oldest = ct
		}
		if ct.seq == 20 {
			ct.task.Status, ct.created = mcp.TaskFailed, time.Now().Add(-2*time.Hour)
		}
	}
	if !ts.makeRoom() || len(ts.byID) != maxClientTasks-1 || ts.byID[oldest.task.TaskID] == nil {
		t.Fatalf("after expiry: %d tasks, ended one kept %v", len(ts.byID), ts.byID[oldest.task.TaskID] != nil)
	}
	ts.byID["extra"] = &clientTask{seq: 999, task: mcp.Task{TaskID: "extra", Status: mcp.TaskWorking}, created: time.Now(), ttl: time.Hour}
	if !ts.makeRoom() || ts.byID[oldest.task.TaskID] != nil || len(ts.byID) != maxClientTasks-1 {
		t.Fatalf("full: %d tasks, oldest ended kept %v", len(ts.byID), ts.byID[oldest.task.TaskID] != nil)
	}
}
