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
	Dir    Direction
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
		c.hub.emit(Event{Kind: EvNote, Note: "tools/call " + name + ": the server did not declare the tasks.requests.tools.call capability; sent with params.task anyway"})
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

// run follows the task of a GoToolTask to its end: the tools/call's answer
// (the task, or a plain result), the poll until the task ends, then its
// result.
func (t *TaskCall) run(ctx context.Context, call *Call, o TaskOptions) {
	defer close(t.done)
	if !t.awaitTask(call) {
		return
	}
	p := t.startPoll(ctx, o)
	defer p.stop()
	if !p.untilEnd() || t.endCancelled(p) {
		return
	}
	p.fetchResult()
}

// finish ends the task call with its outcome, and emits the task's last
// event when a task was created.
func (t *TaskCall) finish(res *mcp.CallToolResult, raw json.RawMessage, err error) {
	t.res, t.raw, t.err, t.ended = res, raw, err, time.Now()
	task := t.Task()
	if task.TaskID != "" {
		t.c.hub.emit(Event{Kind: EvTask, Task: &TaskInfo{Call: t.call, Tool: t.tool, Task: task, Err: err, End: true}})
	}
}

// awaitTask waits for the answer to the tools/call. It returns true when
// the answer created a task (recorded as the task's first state);
// otherwise it has ended the call, with the call's error, or with the plain
// result of a server that ran the call directly. Either way, created is
// closed.
func (t *TaskCall) awaitTask(call *Call) bool {
	defer close(t.created)
	raw, err := call.Wait()
	if err != nil {
		t.finish(nil, raw, err)
		return false
	}
	var ctr struct {
		Task *mcp.Task `json:"task"`
	}
	if json.Unmarshal(raw, &ctr) != nil || ctr.Task == nil || ctr.Task.TaskID == "" {
		// No task: the server ran the call directly.
		res, err := ToolResult(t.tool, raw)
		if err == nil {
			t.c.hub.emit(Event{Kind: EvNote, Note: "tools/call " + t.tool + ": the server answered a task-augmented call with a plain result (no task created)"})
		}
		t.finish(res, raw, err)
		return false
	}
	t.update(*ctr.Task)
	return true
}

// taskPoll follows a created task until it ends. Status notifications wake
// the poll early; a missed one only delays it. At input_required
// tasks/result starts (the server delivers its requests through it) and
// the poll goes on, so that the status shown stays live until the result
// arrives.
type taskPoll struct {
	t      *TaskCall
	ctx    context.Context
	o      TaskOptions
	sub    *Subscription
	events <-chan Event // the subscription's events; nil once it closed
	timer  *time.Timer
	next   time.Time // when the next tasks/get goes out
	result *Call     // the tasks/result under way, or nil
}

// startPoll subscribes to the client's events (for status notifications)
// and arms the first tasks/get at the task's poll interval.
func (t *TaskCall) startPoll(ctx context.Context, o TaskOptions) *taskPoll {
	sub := t.c.Subscribe(64)
	p := &taskPoll{t: t, ctx: ctx, o: o, sub: sub, events: sub.C}
	p.next = time.Now().Add(pollInterval(t.Task().PollInterval))
	p.timer = time.NewTimer(time.Until(p.next))
	return p
}

// stop releases the timer and the subscription.
func (p *taskPoll) stop() {
	p.timer.Stop()
	p.sub.Close()
}

// startResult sends tasks/result for the task; it has the deadline of any
// request of the task.
func (p *taskPoll) startResult() {
	p.result = p.t.c.goFeature(p.ctx, mcp.MethodTasksResult, mcp.TaskIDParams{TaskID: p.t.Task().TaskID}, p.o.Timeout)
}

// resultDone is the Done channel of the tasks/result under way (nil, which
// never fires, when there is none).
func (p *taskPoll) resultDone() <-chan struct{} {
	if p.result == nil {
		return nil
	}
	return p.result.Done()
}

// settled waits for a tasks/result under way to settle (by ctx, its own
// deadline, or the server's answer once the task ended): the task call
// ends after every request it made.
func (p *taskPoll) settled() {
	if p.result != nil {
		<-p.result.Done()
	}
}

// untilEnd polls until the task's status is terminal, or a tasks/result
// started at input_required has answered, and then returns true. It
// returns false when it ended the call itself: the caller gave up (ctx;
// tasks/cancel sent), or a tasks/get failed.
func (p *taskPoll) untilEnd() bool {
	for {
		task := p.t.Task()
		if mcp.TaskTerminal(task.Status) {
			return true
		}
		if task.Status == mcp.TaskInputRequired && p.result == nil {
			p.startResult()
		}
		p.timer.Reset(time.Until(p.next))
		select {
		case <-p.ctx.Done():
			p.abort(task.TaskID)
			return false
		case <-p.resultDone():
			return true
		case <-p.t.wake:
			p.next = time.Now()
		case ev, ok := <-p.events:
			if !ok {
				p.events = nil
			} else if st, ok := statusNotification(ev, task.TaskID); ok {
				p.t.update(st)
			}
		case <-p.timer.C:
			if !p.get(task.TaskID) {
				return false
			}
		}
	}
}

// abort ends the call of a caller that gave up: tasks/cancel goes out, and
// the call fails with MCP_ABORTED.
func (p *taskPoll) abort(taskID string) {
	p.t.cancelOnAbort(taskID, p.o)
	p.settled()
	p.t.finish(nil, nil, &Error{Code: CodeAborted, Message: "task " + taskID + " of tools/call " + p.t.tool + ": cancelled by the caller (tasks/cancel sent)", Err: context.Cause(p.ctx)})
}

// get polls the task with tasks/get and schedules the next poll. It
// returns false when the tasks/get failed, or answered something that is
// not a Task: the call has then ended with that failure.
func (p *taskPoll) get(taskID string) bool {
	raw, err := p.t.c.featureCallTimeout(p.ctx, mcp.MethodTasksGet, mcp.TaskIDParams{TaskID: taskID}, p.o.Timeout)
	if err != nil {
		if p.ctx.Err() != nil {
			p.t.cancelOnAbort(taskID, p.o)
		}
		p.settled()
		p.t.finish(nil, raw, err)
		return false
	}
	var st mcp.Task
	if err := json.Unmarshal(raw, &st); err != nil || st.Status == "" {
		p.settled()
		p.t.finish(nil, raw, newErr(CodeProtocol, "tasks/get %s: result is not a Task: %s", taskID, bounded(string(raw), 200)))
		return false
	}
	if st.TaskID == "" {
		st.TaskID = taskID
	}
	p.t.update(st)
	p.next = time.Now().Add(pollInterval(p.t.Task().PollInterval))
	return true
}

// endCancelled ends the call of a task that ended cancelled, and reports
// whether it did: MCP_ABORTED when sonde sent the tasks/cancel
// (TaskCall.Cancel, CancelTask, or any request sent with that method),
// MCP_ERROR when the server cancelled it.
func (t *TaskCall) endCancelled(p *taskPoll) bool {
	task := t.Task()
	if task.Status != mcp.TaskCancelled {
		return false
	}
	p.settled()
	e := newErr(CodeRemote, "task %s of tools/call %s was cancelled by the server%s", task.TaskID, t.tool, statusSuffix(task))
	if t.c.taskCancels.sentTaskCancel(task.TaskID) {
		e = newErr(CodeAborted, "task %s of tools/call %s was cancelled (tasks/cancel)%s", task.TaskID, t.tool, statusSuffix(task))
	}
	t.finish(nil, nil, e)
	return true
}

// fetchResult ends the call with the task's result: the answer to the
// tasks/result under way, or to one sent now (it blocks until the task
// ends). A result whose task shows no terminal status yet marks it
// completed (or failed, for an isError result).
func (p *taskPoll) fetchResult() {
	t := p.t
	if p.result == nil {
		p.startResult()
	}
	raw, err := p.result.Wait()
	if err != nil {
		t.finish(nil, raw, err)
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
	t.finish(res, raw, err)
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
		t.c.hub.emit(Event{Kind: EvTask, Task: &TaskInfo{Call: t.call, Tool: t.tool, Task: st}})
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
		t.c.hub.emit(Event{Kind: EvNote, Note: "tasks/cancel " + taskID + " after the caller gave up: " + err.Error()})
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
		c.hub.emit(Event{Kind: EvNote, Note: w})
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

// sentCancels are the task ids sonde sent tasks/cancel for (at most
// maxTaskCancels: beyond, it starts over), so that a task call tells a
// cancel of sonde's from the server's. It is guarded by Client.mu:
// noteTaskCancelLocked is called with it held (by the writer), sentTaskCancel
// takes it (a task call's goroutine).
type sentCancels struct {
	c   *Client // the client it belongs to
	ids map[string]struct{}
}

// maxTaskCancels bounds the task ids Client remembers cancelling.
const maxTaskCancels = 1024

// noteTaskCancelLocked remembers the task id of a tasks/cancel request
// sonde sends (params as encoded).
func (s *sentCancels) noteTaskCancelLocked(params json.RawMessage) {
	c := s.c
	var p mcp.TaskIDParams
	if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
		return
	}
	if c.taskCancels.ids == nil || len(c.taskCancels.ids) >= maxTaskCancels {
		c.taskCancels.ids = map[string]struct{}{}
	}
	c.taskCancels.ids[p.TaskID] = struct{}{}
}

// sentTaskCancel reports whether sonde sent tasks/cancel for taskID.
func (s *sentCancels) sentTaskCancel(taskID string) bool {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.taskCancels.ids[taskID]
	return ok
}
