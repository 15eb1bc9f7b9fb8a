package pending

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

func taskEv(ms int, status, msg string, end bool, err error) client.Event {
	return client.Event{Time: at(ms), Kind: client.EvTask, Task: &client.TaskInfo{Call: jsonrpc.Int(4), Tool: "research",
		Task: mcp.Task{TaskID: "t-1", Status: status, StatusMessage: msg}, End: end, Err: err}}
}

// A task has a row of its own, in flight with its status until the task
// call ends; c on it asks for tasks/cancel.
func TestTaskRow(t *testing.T) {
	m := newModel(Options{})
	m.Apply([]client.Event{
		queued(0, 4, "tools/call", "research", 30000),
		out(1, 4, "tools/call", client.StateSent),
		settle(out(5, 4, "tools/call", client.StateResolved), 5e6, nil),
		taskEv(6, mcp.TaskWorking, "Gathering sources...", false, nil),
	})
	m.SetNow(at(2006))
	var task *Entry
	for _, e := range m.Entries() {
		if e.Method == "task" {
			task = &e
		}
	}
	if task == nil || task.State != client.StateProgress || task.Tool != "research" || task.ID != jsonrpc.String("t-1") || m.InFlight() != 1 {
		t.Fatalf("%+v (in flight %d)", m.Entries(), m.InFlight())
	}
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "task research") || !strings.Contains(view, "working: Gathering") {
		t.Fatalf("view:\n%s", view)
	}
	for i := range m.Entries() {
		if m.Entries()[i].Method == "task" {
			m.lv.sel = i
		}
	}
	cmd := m.Update(press("c"))
	if cmd == nil {
		t.Fatal("no command for c on a task row")
	}
	if msg, ok := cmd().(CancelTaskMsg); !ok || msg.TaskID != "t-1" {
		t.Fatalf("%#v", cmd())
	}

	m.Apply([]client.Event{taskEv(3000, mcp.TaskCancelled, "", true, &client.Error{Code: client.CodeAborted, Message: "task t-1 was cancelled"})})
	e := m.Entries()
	last := e[0]
	if last.Method != "task" || last.State != client.StateCancelled || !strings.Contains(last.Err, "cancelled") || m.InFlight() != 0 {
		t.Fatalf("%+v", e)
	}
}

func TestTaskRowOutcomes(t *testing.T) {
	for _, tc := range []struct {
		status string
		err    error
		want   client.State
	}{
		{mcp.TaskCompleted, nil, client.StateResolved},
		{mcp.TaskFailed, nil, client.StateError},
		{mcp.TaskWorking, &client.Error{Code: client.CodeTimeout, Message: "tasks/get id 9: no response"}, client.StateError},
	} {
		m := newModel(Options{})
		m.Apply([]client.Event{taskEv(1, mcp.TaskWorking, "", false, nil), taskEv(900, tc.status, "", true, tc.err)})
		e := m.Entries()
		if len(e) != 1 || e[0].State != tc.want || e[0].Latency != 899e6 {
			t.Errorf("%s %v: %+v", tc.status, tc.err, e)
		}
	}
}
