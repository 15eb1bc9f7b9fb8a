package client

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// Poll intervals of a task: the server's pollInterval, or DefaultPollInterval
// when it gives none, kept between MinPollInterval and MaxPollInterval.
const (
	DefaultPollInterval = time.Second
	MinPollInterval     = 20 * time.Millisecond
	MaxPollInterval     = 30 * time.Second
)

// TaskInfo is a task's state as sonde last saw it (EvTask). Call is the id
// of the request that created it: sonde's tools/call (Dir Out, or zero), or
// the server's task-augmented request that sonde runs as a task (Dir In,
// Method its method, Tool empty).
type TaskInfo struct {
	Call   jsonrpc.ID
	Tool   string
	Dir    transport.Direction
	Method string
	Task   mcp.Task
	// Err is set on the last event of a task that ended without a result.
	Err error
	// End is set on the last event of the task.
	End bool
}

// TaskOptions adjust a task-augmented call.
type TaskOptions struct {
	// TTL is sent as params.task.ttl (0: not sent; the server decides).
	TTL time.Duration
	// Timeout is the deadline of each request of the task (the tools/call,
	// each tasks/get, tasks/result); the task itself lives until it ends
	// or ctx is done.
	Timeout time.Duration
}

// TaskCall is a task-augmented tools/call in progress: created by
// GoToolTask, it ends when the task reaches a terminal status and its
// result was fetched, or fails.
type TaskCall struct {
	c    *Client
	tool string
	done chan struct{}
	wake chan struct{}

	mu      sync.Mutex
	call    jsonrpc.ID
	task    mcp.Task
	created chan struct{} // closed once the taskId is known, or the call failed

	started, ended time.Time

	res *mcp.CallToolResult
	raw json.RawMessage
	err error
}

// CallID is the id of the tools/call that created the task.
func (t *TaskCall) CallID() jsonrpc.ID { return t.call }

// Latency is the time from the tools/call to the end of the task call (so
// far, while it runs).
func (t *TaskCall) Latency() time.Duration {
	select {
	case <-t.done:
		return t.ended.Sub(t.started)
	default:
		return time.Since(t.started)
	}
}

// Done is closed when the task call has ended.
func (t *TaskCall) Done() <-chan struct{} { return t.done }

// Wait waits for the end of the task and returns its tools/call result (as
// tasks/result gave it) and the raw result. A task that was cancelled is
// MCP_ABORTED when sonde cancelled it, MCP_ERROR otherwise.
func (t *TaskCall) Wait() (*mcp.CallToolResult, json.RawMessage, error) {
	<-t.done
	return t.res, t.raw, t.err
}

// Task returns the task's last known state (empty before it was created).
func (t *TaskCall) Task() mcp.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.task
}

// Cancel sends tasks/cancel for the task once it exists, and returns the
// state the server answered. The task call then ends (its poll sees the
// terminal status).
func (t *TaskCall) Cancel(ctx context.Context) (*mcp.Task, error) {
	select {
	case <-t.created:
	case <-ctx.Done():
		return nil, &Error{Code: CodeAborted, Message: "tasks/cancel: stopped waiting for the task to be created", Err: context.Cause(ctx)}
	}
	t.mu.Lock()
	id := t.task.TaskID
	t.mu.Unlock()
	if id == "" {
		return nil, newErr(CodeProtocol, "tasks/cancel: the tools/call of %s created no task", t.tool)
	}
	task, err := t.c.CancelTask(ctx, id)
	if err != nil {
		return nil, err
	}
	t.update(*task)
	select {
	case t.wake <- struct{}{}:
	default:
	}
	return task, nil
}

// CancelTask sends tasks/cancel for taskID and returns the state the
// server answered. A TaskCall following that task notices the cancel (it
// then ends with MCP_ABORTED).
func (c *Client) CancelTask(ctx context.Context, taskID string) (*mcp.Task, error) {
	raw, err := c.featureCall(ctx, mcp.MethodTasksCancel, mcp.TaskIDParams{TaskID: taskID})
	if err != nil {
		return nil, err
	}
	var task mcp.Task
	if err := json.Unmarshal(raw, &task); err != nil || task.TaskID == "" {
		return nil, newErr(CodeProtocol, "tasks/cancel: result is not a Task: %s", bounded(string(raw), 200))
	}
	return &task, nil
}

// CallToolTask runs a task-augmented tools/call to its end (see
// GoToolTask).
func (c *Client) CallToolTask(ctx context.Context, name string, args json.RawMessage, o TaskOptions) (*mcp.CallToolResult, json.RawMessage, error) {
	return c.GoToolTask(ctx, name, args, o).Wait()
}

// GoToolTask starts a task-augmented tools/call (params.task, 2025-11-25)
// and follows the task in a goroutine: tasks/get at the server's
// pollInterval (sooner when notifications/tasks/status reports a change)
// until the status is terminal, then tasks/result. input_required goes to
// tasks/result at once (the server delivers its requests through it). A
// server that answers with a plain CallToolResult (it ignored params.task)
// ends the call with that result and a note. When ctx ends, tasks/cancel is
// sent and the call fails with MCP_ABORTED. Every change of the task is an
// EvTask event.
func (c *Client) GoToolTask(ctx context.Context, name string, args json.RawMessage, o TaskOptions) *TaskCall {
	t := &TaskCall{c: c, tool: name, done: make(chan struct{}), wake: make(chan struct{}, 1), created: make(chan struct{}), started: time.Now()}
	if !c.ServerCaps().Tasks.ToolCallTasks() {
		c.emit(Event{Kind: EvNote, Note: "tools/call " + name + ": the server did not declare the tasks.requests.tools.call capability; sent with params.task anyway"})
	}
	p := mcp.CallToolTaskParams{Name: name, Arguments: args}
	if o.TTL > 0 {
		ms := o.TTL.Milliseconds()
		p.Task.TTL = &ms
	}
	call := c.Go(ctx, mcp.MethodToolsCall, p, CallOptions{Tool: name, ProgressToken: true, Timeout: o.Timeout})
	t.call = call.ID
	go t.run(ctx, call, o)
	return t
}

func (t *TaskCall) run(ctx context.Context, call *Call, o TaskOptions) {
	defer close(t.done)
	finish := func(res *mcp.CallToolResult, raw json.RawMessage, err error) {
		t.res, t.raw, t.err, t.ended = res, raw, err, time.Now()
		t.mu.Lock()
		task := t.task
		t.mu.Unlock()
		if task.TaskID != "" {
			t.c.emit(Event{Kind: EvTask, Task: &TaskInfo{Call: t.call, Tool: t.tool, Task: task, Err: err, End: true}})
		}
	}
	raw, err := call.Wait()
	if err != nil {
		close(t.created)
		finish(nil, raw, err)
		return
	}
	var ctr struct {
		Task *mcp.Task `json:"task"`
	}
	if json.Unmarshal(raw, &ctr) != nil || ctr.Task == nil || ctr.Task.TaskID == "" {
		close(t.created)
		// No task: the server ran the call directly.
		res, err := ToolResult(t.tool, raw)
		if err == nil {
			t.c.emit(Event{Kind: EvNote, Note: "tools/call " + t.tool + ": the server answered a task-augmented call with a plain result (no task created)"})
		}
		finish(res, raw, err)
		return
	}
	t.update(*ctr.Task)
	close(t.created)

	// Status notifications wake the poll early; a missed one only delays it.
	// At input_required tasks/result starts (the server delivers its
	// requests through it) and the poll goes on, so that the status shown
	// stays live until the result arrives.
	sub := t.c.Subscribe(64)
	defer sub.Close()
	events := sub.C
	next := time.Now().Add(pollInterval(t.Task().PollInterval))
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	var result *Call // tasks/result
	var resultDone <-chan struct{}
	// settled waits for a tasks/result under way to settle (by ctx, its own
	// deadline, or the server's answer once the task ended): the task call
	// ends after every request it made.
	settled := func() {
		if result != nil {
			<-resultDone
		}
	}
	for {
		task := t.Task()
		if mcp.TaskTerminal(task.Status) {
			break
		}
		if task.Status == mcp.TaskInputRequired && result == nil {
			result = t.c.goFeature(ctx, mcp.MethodTasksResult, mcp.TaskIDParams{TaskID: task.TaskID}, o.Timeout)
			resultDone = result.Done()
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			t.cancelOnAbort(task.TaskID, o)
			settled()
			finish(nil, nil, &Error{Code: CodeAborted, Message: "task " + task.TaskID + " of tools/call " + t.tool + ": cancelled by the caller (tasks/cancel sent)", Err: context.Cause(ctx)})
			return
		case <-resultDone:
		case <-t.wake:
			next = time.Now()
			continue
		case ev, ok := <-events:
			if !ok {
				events = nil
			} else if st, ok := statusNotification(ev, task.TaskID); ok {
				t.update(st)
			}
			continue
		case <-timer.C:
			raw, err := t.c.featureCallTimeout(ctx, mcp.MethodTasksGet, mcp.TaskIDParams{TaskID: task.TaskID}, o.Timeout)
			if err != nil {
				if ctx.Err() != nil {
					t.cancelOnAbort(task.TaskID, o)
				}
				settled()
				finish(nil, raw, err)
				return
			}
			var st mcp.Task
			if err := json.Unmarshal(raw, &st); err != nil || st.Status == "" {
				settled()
				finish(nil, raw, newErr(CodeProtocol, "tasks/get %s: result is not a Task: %s", task.TaskID, bounded(string(raw), 200)))
				return
			}
			if st.TaskID == "" {
				st.TaskID = task.TaskID
			}
			t.update(st)
			next = time.Now().Add(pollInterval(t.Task().PollInterval))
			continue
		}
		break // tasks/result answered
	}
	task := t.Task()
	if task.Status == mcp.TaskCancelled {
		settled()
		// A tasks/cancel of sonde's (TaskCall.Cancel, CancelTask, or any
		// request sent with that method) makes it an abort.
		byUs := t.c.sentTaskCancel(task.TaskID)
		e := newErr(CodeRemote, "task %s of tools/call %s was cancelled by the server%s", task.TaskID, t.tool, statusSuffix(task))
		if byUs {
			e = newErr(CodeAborted, "task %s of tools/call %s was cancelled (tasks/cancel)%s", task.TaskID, t.tool, statusSuffix(task))
		}
		finish(nil, nil, e)
		return
	}
	// tasks/result blocks until the task ends; it has the deadline of any
	// request of the task.
	if result == nil {
		result = t.c.goFeature(ctx, mcp.MethodTasksResult, mcp.TaskIDParams{TaskID: task.TaskID}, o.Timeout)
	}
	raw, err = result.Wait()
	if err != nil {
		finish(nil, raw, err)
		return
	}
	res, err := ToolResult(t.tool, raw)
	if err == nil && !mcp.TaskTerminal(t.Task().Status) {
		// The result arrived: the task has ended even if no status said so
		// (the message of the last status no longer applies).
		st := t.Task()
		st.StatusMessage = ""
		if res.IsError {
			st.Status = mcp.TaskFailed
		} else {
			st.Status = mcp.TaskCompleted
		}
		t.update(st)
	}
	finish(res, raw, err)
}

// TaskTerminalOrInput reports whether the poll of a task in status s stops:
// the task ended, or needs input that only tasks/result delivers.
func TaskTerminalOrInput(s string) bool {
	return mcp.TaskTerminal(s) || s == mcp.TaskInputRequired
}

// update records a new state of the task and emits it when it changed.
func (t *TaskCall) update(st mcp.Task) {
	t.mu.Lock()
	old := t.task
	if old.TaskID != "" && st.TaskID != old.TaskID {
		t.mu.Unlock()
		return
	}
	if mcp.TaskTerminal(old.Status) && !mcp.TaskTerminal(st.Status) {
		// Terminal states never change; a late notification is ignored.
		t.mu.Unlock()
		return
	}
	if st.PollInterval == nil {
		st.PollInterval = old.PollInterval
	}
	t.task = st
	t.mu.Unlock()
	if st.Status != old.Status || st.StatusMessage != old.StatusMessage {
		t.c.emit(Event{Kind: EvTask, Task: &TaskInfo{Call: t.call, Tool: t.tool, Task: st}})
	}
}

// cancelOnAbort sends tasks/cancel for a task whose caller gave up, with a
// context of its own (the caller's is done), bounded by the request
// timeout. Its failure is a note.
func (t *TaskCall) cancelOnAbort(taskID string, o TaskOptions) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = t.c.opts.Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := t.c.featureCallTimeout(ctx, mcp.MethodTasksCancel, mcp.TaskIDParams{TaskID: taskID}, timeout); err != nil {
		t.c.emit(Event{Kind: EvNote, Note: "tasks/cancel " + taskID + " after the caller gave up: " + err.Error()})
	}
}

// featureCallTimeout is featureCall with a deadline of its own (0: the
// client's default).
func (c *Client) featureCallTimeout(ctx context.Context, method string, params any, timeout time.Duration) (json.RawMessage, error) {
	return c.goFeature(ctx, method, params, timeout).Wait()
}

// goFeature starts a feature request (see featureCall) with a deadline of
// its own (0: the client's default) without waiting for it.
func (c *Client) goFeature(ctx context.Context, method string, params any, timeout time.Duration) *Call {
	if w := c.Undeclared(method); w != "" {
		c.emit(Event{Kind: EvNote, Note: w})
	}
	return c.Go(ctx, method, params, CallOptions{Timeout: timeout})
}

// statusNotification decodes ev when it is notifications/tasks/status for
// taskID.
func statusNotification(ev Event, taskID string) (mcp.Task, bool) {
	if ev.Kind != EvFrame || ev.Frame == nil || ev.Frame.Dir != transport.In || ev.Frame.Msg.Method != mcp.MethodTaskStatus {
		return mcp.Task{}, false
	}
	var st mcp.Task
	if json.Unmarshal(ev.Frame.Msg.Params, &st) != nil || st.TaskID != taskID || st.Status == "" {
		return mcp.Task{}, false
	}
	return st, true
}

func pollInterval(ms *int64) time.Duration {
	if ms == nil {
		return DefaultPollInterval
	}
	return min(max(time.Duration(*ms)*time.Millisecond, MinPollInterval), MaxPollInterval)
}

func statusSuffix(t mcp.Task) string {
	if t.StatusMessage == "" {
		return ""
	}
	return " (" + bounded(t.StatusMessage, 200) + ")"
}

// maxTaskCancels bounds the task ids Client remembers cancelling.
const maxTaskCancels = 1024

// noteTaskCancelLocked remembers the task id of a tasks/cancel request
// sonde sends (params as encoded).
func (c *Client) noteTaskCancelLocked(params json.RawMessage) {
	var p mcp.TaskIDParams
	if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
		return
	}
	if c.taskCancels == nil || len(c.taskCancels) >= maxTaskCancels {
		c.taskCancels = map[string]struct{}{}
	}
	c.taskCancels[p.TaskID] = struct{}{}
}

// sentTaskCancel reports whether sonde sent tasks/cancel for taskID.
func (c *Client) sentTaskCancel(taskID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.taskCancels[taskID]
	return ok
}
