package pending

import (
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// CancelTaskMsg asks the root to cancel task TaskID (tasks/cancel): the
// user pressed `c` on a task's row.
type CancelTaskMsg struct{ TaskID string }

// taskMethod is the method column of a task's row.
const taskMethod = "task"

// applyTask folds a task event into a row of its own, keyed by the task id
// (a string id, so it never collides with sonde's integer request ids). The
// row stays in flight, with the task's status as its detail, until the
// task call ends. A task sonde runs for the server (Dir In) is a row in
// the server's direction, named after the request it runs.
func (m *Model) applyTask(t time.Time, ti *client.TaskInfo) {
	if ti.Task.TaskID == "" {
		return
	}
	id := jsonrpc.String(ti.Task.TaskID)
	dir, tool := client.Out, ti.Tool
	if ti.Dir == client.In {
		dir, tool = client.In, ti.Method
	}
	r := &client.ReqInfo{Dir: dir, ID: id, Method: taskMethod, Tool: tool, State: client.StateProgress}
	if ti.End {
		r.State, r.Err = client.StateResolved, ti.Err
		switch {
		case ti.Task.Status == mcp.TaskCancelled || errors.Is(ti.Err, client.ErrAborted):
			r.State = client.StateCancelled
		case ti.Err != nil || ti.Task.Status == mcp.TaskFailed:
			r.State = client.StateError
		}
		if e := m.byKey[reqKey{dir, id}]; e != nil {
			r.Latency = t.Sub(e.queued)
		}
	}
	m.apply(t, r)
	if e := m.byKey[reqKey{dir, id}]; e != nil {
		e.task = ti.Task.Status
		if ti.Task.StatusMessage != "" {
			e.task += ": " + clean(ti.Task.StatusMessage, 200)
		}
	}
}

// cancelTask returns the command that asks for the cancel of a task row.
func cancelTask(e *entry) tea.Cmd {
	id, ok := e.key.id.Str()
	if !ok || e.method != taskMethod || e.key.dir != client.Out {
		return nil
	}
	return func() tea.Msg { return CancelTaskMsg{TaskID: id} }
}
