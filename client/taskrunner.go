package client

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// Tasks sonde runs for the server (2025-11-25, tasks with the client as
// receiver): a sampling/createMessage or elicitation/create with
// params.task, when sonde declared tasks for it, is answered at once with
// a CreateTaskResult. The request then waits for its answer as before (the
// Handler, or Respond for the request id "task:<taskId>"), and that answer
// is the task's result, which the server fetches with tasks/result.
const (
	// maxClientTasks bounds the tasks kept: beyond it the oldest ended
	// task is forgotten, and with none ended a new task is refused.
	maxClientTasks = 256
	// clientTaskTTL is kept when the server asks for no ttl (or a longer
	// one): an ended task is forgotten that long after it was created.
	clientTaskTTL = 30 * time.Minute
	// maxResultWaits bounds the tasks/result requests waiting for one task.
	maxResultWaits = 16
	// clientTaskPoll is the pollInterval sonde suggests.
	clientTaskPoll = 1000
	// relatedTaskMeta is the _meta key linking a result to its task.
	relatedTaskMeta = "io.modelcontextprotocol/related-task"
)

// clientTasks are the tasks sonde runs for the server, by task id. They are
// guarded by Client.mu, and only the Client's server-request side calls
// them (srvState, Respond): the methods named *Locked with c.mu held;
// clientTasksDeclared and tasksCaps read only the options (either way).
type clientTasks struct {
	c    *Client // the client it belongs to
	byID map[string]*clientTask
	seq  int
}

// clientTask is one task sonde runs for the server.
type clientTask struct {
	seq     int
	task    mcp.Task
	method  string
	req     jsonrpc.ID // the server's request that created it
	ask     *ServerRequest
	created time.Time
	ttl     time.Duration
	result  json.RawMessage
	rpcErr  *jsonrpc.Error
	// results are the server's tasks/result requests waiting for the end.
	results []*ServerRequest
}

// clientTasksDeclared reports whether sonde declares tasks (see
// ServerRequests.Tasks): only in the legacy era (modern is false), from
// 2025-11-25, and for a declared sampling or elicitation. It reads only the
// options, which do not change after New: the caller need not hold c.mu.
func (s *clientTasks) clientTasksDeclared(modern bool) bool {
	c := s.c
	o := c.opts.ServerRequests
	return !modern && o.Tasks && (o.Sampling || o.Elicitation) && c.opts.ProtocolVersion >= "2025-11-25"
}

// tasksCaps is the tasks capability sonde declares, or nil.
func (s *clientTasks) tasksCaps(modern bool) any {
	c := s.c
	if !c.srv.tasks.clientTasksDeclared(modern) {
		return nil
	}
	o := c.opts.ServerRequests
	empty := struct{}{}
	reqs := map[string]any{}
	if o.Sampling {
		reqs["sampling"] = map[string]any{"createMessage": empty}
	}
	if o.Elicitation {
		reqs["elicitation"] = map[string]any{"create": empty}
	}
	return map[string]any{"list": empty, "cancel": empty, "requests": reqs}
}

// taskAugmentedLocked reports whether req asks to run as a task that sonde
// declared, and the ttl it asked for. params.task on a request sonde did
// not declare tasks for is ignored, as the spec asks, with a note.
func (s *clientTasks) taskAugmentedLocked(req *ServerRequest) (ttl time.Duration, ok bool) {
	c := s.c
	var p struct {
		Task *mcp.TaskMetadata `json:"task"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.Task == nil {
		return 0, false
	}
	if !c.srv.tasks.clientTasksDeclared(c.era.modernLocked()) {
		c.hub.emit(Event{Kind: EvNote, Note: fmt.Sprintf("%s %s asks to run as a task (params.task), but sonde did not declare tasks for it: answered directly, as the spec asks", req.Method, req.ID)})
		return 0, false
	}
	ttl = clientTaskTTL
	if p.Task.TTL != nil && *p.Task.TTL > 0 {
		ttl = min(time.Duration(*p.Task.TTL)*time.Millisecond, clientTaskTTL)
	}
	return ttl, true
}

// startClientTaskLocked runs req as a task: the CreateTaskResult goes out
// at once, then the Handler's answer (or, left to Respond, the answer to
// the waiting request "task:<taskId>") ends the task.
func (s *clientTasks) startClientTaskLocked(req *ServerRequest, ttl time.Duration) {
	c := s.c
	ts := &c.srv.tasks
	if !ts.makeRoom() {
		c.srv.answerLocked(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("sonde already runs %d tasks for this server, none of them ended: %s refused", maxClientTasks, req.Method)})
		return
	}
	now := time.Now()
	ts.seq++
	var b [6]byte
	_, _ = rand.Read(b[:])
	ms := ttl.Milliseconds()
	poll := int64(clientTaskPoll)
	stamp := now.UTC().Format(time.RFC3339Nano)
	t := &clientTask{
		seq: ts.seq, method: req.Method, req: req.ID, created: now, ttl: ttl,
		task: mcp.Task{TaskID: fmt.Sprintf("sonde-%d-%s", ts.seq, hex.EncodeToString(b[:])), Status: mcp.TaskWorking,
			StatusMessage: "waiting for sonde's user to answer", CreatedAt: stamp, LastUpdatedAt: stamp, TTL: &ms, PollInterval: &poll},
	}
	if ts.byID == nil {
		ts.byID = map[string]*clientTask{}
	}
	ts.byID[t.task.TaskID] = t
	res, _ := json.Marshal(mcp.CreateTaskResult{Task: t.task})
	c.srv.answerLocked(req, res, nil)
	c.hub.emit(Event{Time: now, Kind: EvTask, Task: &TaskInfo{Call: req.ID, Dir: transport.In, Method: req.Method, Task: t.task}})
	if h := c.opts.ServerRequests.Handler; h != nil {
		if res, rpcErr, answered := h(*req); answered {
			c.srv.tasks.finishClientTaskLocked(t, res, rpcErr)
			return
		}
	}
	ask := &ServerRequest{ID: jsonrpc.String("task:" + t.task.TaskID), Method: req.Method, Params: req.Params, Received: now, task: t}
	if !c.srv.addWaitingLocked(ask) {
		c.hub.emit(Event{Kind: EvNote, Note: fmt.Sprintf("task %s fails: %d requests from the server already wait for an answer", t.task.TaskID, maxWaiting)})
		c.srv.tasks.finishClientTaskLocked(t, nil, tooManyWaiting(req.Method))
		return
	}
	t.ask = ask
	c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: ask.ID, Method: ask.Method, State: StateReceived, Params: ask.Params}})
}

// makeRoom forgets expired tasks and, when the table is full, the oldest
// ended one. It reports whether a new task fits.
func (ts *clientTasks) makeRoom() bool {
	now := time.Now()
	var oldest *clientTask
	for id, t := range ts.byID {
		if !mcp.TaskTerminal(t.task.Status) {
			continue
		}
		if now.Sub(t.created) > t.ttl {
			delete(ts.byID, id)
			continue
		}
		if oldest == nil || t.seq < oldest.seq {
			oldest = t
		}
	}
	if len(ts.byID) < maxClientTasks {
		return true
	}
	if oldest == nil {
		return false
	}
	delete(ts.byID, oldest.task.TaskID)
	return true
}

// setStatusLocked moves t to status, telling the server
// (notifications/tasks/status) and the event stream.
func (s *clientTasks) setStatusLocked(t *clientTask, status, message string, notify bool) {
	c := s.c
	t.task.Status, t.task.StatusMessage = status, message
	t.task.LastUpdatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if notify {
		params, _ := json.Marshal(t.task)
		raw, _ := jsonrpc.EncodeNotification(mcp.MethodTaskStatus, params)
		if !c.out.push(outItem{raw: raw, method: mcp.MethodTaskStatus}) {
			c.hub.emit(Event{Kind: EvNote, Note: "notifications/tasks/status for task " + t.task.TaskID + " not sent: write queue full"})
		}
	}
	var err error
	if t.rpcErr != nil {
		err = t.rpcErr
	}
	c.hub.emit(Event{Kind: EvTask, Task: &TaskInfo{Call: t.req, Dir: transport.In, Method: t.method, Task: t.task, Err: err, End: mcp.TaskTerminal(status)}})
}

// finishClientTaskLocked ends t with the answer to its request: completed
// with result, or failed with rpcErr. The server's waiting tasks/result
// requests get it.
func (s *clientTasks) finishClientTaskLocked(t *clientTask, result json.RawMessage, rpcErr *jsonrpc.Error) {
	c := s.c
	if mcp.TaskTerminal(t.task.Status) {
		return
	}
	t.result, t.rpcErr = result, rpcErr
	if rpcErr != nil {
		c.srv.tasks.setStatusLocked(t, mcp.TaskFailed, bounded(rpcErr.Message, 200), true)
	} else {
		c.srv.tasks.setStatusLocked(t, mcp.TaskCompleted, "", true)
	}
	c.srv.tasks.answerResultsLocked(t)
}

// answerResultsLocked answers the server's tasks/result requests waiting
// for t, which has ended.
func (s *clientTasks) answerResultsLocked(t *clientTask) {
	c := s.c
	for _, r := range t.results {
		res, rpcErr := t.outcome()
		c.srv.answerLocked(r, res, rpcErr)
	}
	t.results = nil
}

// outcome is what tasks/result answers for an ended task: the result of
// its request with _meta linking it to the task, or its error.
func (t *clientTask) outcome() (json.RawMessage, *jsonrpc.Error) {
	switch {
	case t.task.Status == mcp.TaskCancelled:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task " + t.task.TaskID + " was cancelled: it has no result"}
	case t.rpcErr != nil:
		return nil, t.rpcErr
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(t.result, &obj) != nil || obj == nil {
		return t.result, nil
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok {
		_ = json.Unmarshal(m, &meta)
	}
	meta[relatedTaskMeta], _ = json.Marshal(mcp.TaskIDParams{TaskID: t.task.TaskID})
	obj["_meta"], _ = json.Marshal(meta)
	raw, _ := json.Marshal(obj)
	return raw, nil
}

// serveTaskLocked answers the server's tasks/get, tasks/result, tasks/list
// and tasks/cancel about the tasks sonde runs for it. tasks/result on a
// task still running waits for its end.
func (s *clientTasks) serveTaskLocked(req *ServerRequest) {
	c := s.c
	ts := &c.srv.tasks
	ts.makeRoom()
	if req.Method == mcp.MethodTasksList {
		list := make([]*clientTask, 0, len(ts.byID))
		for _, t := range ts.byID {
			list = append(list, t)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].seq < list[j].seq })
		tasks := make([]mcp.Task, len(list))
		for i, t := range list {
			tasks[i] = t.task
		}
		raw, _ := json.Marshal(map[string]any{"tasks": tasks})
		c.srv.answerLocked(req, raw, nil)
		return
	}
	var p mcp.TaskIDParams
	_ = json.Unmarshal(req.Params, &p)
	t := ts.byID[p.TaskID]
	if t == nil {
		c.srv.answerLocked(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: sonde runs no task with id %q for this server", req.Method, p.TaskID)})
		return
	}
	switch req.Method {
	case mcp.MethodTasksGet:
		raw, _ := json.Marshal(t.task)
		c.srv.answerLocked(req, raw, nil)
	case mcp.MethodTasksResult:
		if mcp.TaskTerminal(t.task.Status) {
			res, rpcErr := t.outcome()
			c.srv.answerLocked(req, res, rpcErr)
			return
		}
		if len(t.results) >= maxResultWaits {
			c.srv.answerLocked(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%d tasks/result requests already wait for task %s", maxResultWaits, t.task.TaskID)})
			return
		}
		t.results = append(t.results, req)
	case mcp.MethodTasksCancel:
		if mcp.TaskTerminal(t.task.Status) {
			c.srv.answerLocked(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task " + t.task.TaskID + " has already ended (" + t.task.Status + "): it cannot be cancelled"})
			return
		}
		if a := t.ask; a != nil && c.srv.waiting[a.ID] == a {
			delete(c.srv.waiting, a.ID)
			c.hold.holdCheckLocked()
			c.hub.emit(Event{Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: a.ID, Method: a.Method, State: StateCancelled,
				Latency: time.Since(a.Received), Err: newErr(CodeAborted, "the server cancelled task %s (tasks/cancel)", t.task.TaskID)}})
		}
		c.srv.tasks.setStatusLocked(t, mcp.TaskCancelled, "cancelled by the server (tasks/cancel)", false)
		raw, _ := json.Marshal(t.task)
		c.srv.answerLocked(req, raw, nil)
		c.srv.tasks.answerResultsLocked(t)
	}
}

// endClientTasksLocked ends, when the session ends, the server's
// tasks/result requests still waiting and the tasks still running.
func (s *clientTasks) endClientTasksLocked(now time.Time, state State, err *Error) {
	c := s.c
	for id, t := range c.srv.tasks.byID {
		for _, r := range t.results {
			c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: r.ID, Method: r.Method, State: state, Latency: now.Sub(r.Received), Err: err}})
		}
		t.results = nil
		if !mcp.TaskTerminal(t.task.Status) {
			c.hub.emit(Event{Time: now, Kind: EvTask, Task: &TaskInfo{Call: t.req, Dir: transport.In, Method: t.method, Task: t.task, Err: err, End: true}})
		}
		delete(c.srv.tasks.byID, id)
	}
}
