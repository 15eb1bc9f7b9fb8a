package client

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// ServerRequests configures the client capabilities sonde declares in
// initialize and how it answers the requests a server sends it.
//
// roots/list is answered at once from Roots. sampling/createMessage and
// elicitation/create are handed to Handler when it is set; a request
// Handler leaves alone (or every one, without a Handler) waits, shown in
// the event stream as received, until Client.Respond answers it. sonde
// never times such a request out: the server does. A request for a
// capability that was not declared is answered with a JSON-RPC error and
// its frame has the verdict VerdictUndeclared.
type ServerRequests struct {
	// Roots declares roots (with listChanged); roots/list is answered from
	// RootList, which SetRoots replaces.
	Roots    bool
	RootList []mcp.Root
	// Sampling declares sampling.
	Sampling bool
	// Elicitation declares elicitation (form and, from 2025-11-25, url).
	Elicitation bool
	// Handler, if set, is offered every sampling and elicitation request
	// that was declared. It runs on the reader goroutine and must return
	// quickly without calling the Client. Returning ok false leaves the
	// request waiting for Respond.
	Handler Handler
	// Undeclared is added to the message of the error answering a request
	// for a capability that was not declared (how to declare it).
	Undeclared map[string]string
	// Tasks declares tasks for the declared sampling and elicitation
	// requests (2025-11-25, legacy era only: the modern era has no core
	// tasks), with tasks/list and tasks/cancel. A task-augmented request
	// (params.task) is then answered at once with a CreateTaskResult and
	// its answer becomes the task's result; the server follows it with
	// tasks/get, tasks/result, tasks/list and tasks/cancel (taskrunner.go).
	Tasks bool
	// Interactive says someone answers waiting requests with Respond (the
	// UI). In the modern era an input request of an input_required result
	// that the Handler left is then shown as a waiting request from the
	// server, with the id "input:<request id>:<key>", until Respond answers
	// it; without Interactive it goes to Options.Inputs.
	Interactive bool
}

// Handler answers a request from the server with a result or a JSON-RPC
// error, or reports ok false to leave it for Client.Respond.
type Handler func(r ServerRequest) (result json.RawMessage, rpcErr *jsonrpc.Error, ok bool)

// ServerRequest is a request from the server waiting for sonde's answer.
type ServerRequest struct {
	ID       jsonrpc.ID
	Method   string
	Params   json.RawMessage
	Received time.Time
	// input, for a modern input request, receives Respond's answer instead
	// of the wire (an input_required retry carries it).
	input chan inputReply
	// task, for the request of a task sonde runs for the server, receives
	// Respond's answer as the task's result.
	task *clientTask
}

// inputReply is Respond's answer to a modern input request.
type inputReply struct {
	result json.RawMessage
	rpcErr *jsonrpc.Error
}

// srvState is the client's side of the server's requests: sonde's roots,
// the requests waiting for Respond, the answers, and the tasks sonde runs
// for the server. It is guarded by Client.mu, and only the Client calls it:
// the methods named *Locked with c.mu held (the reader, Respond, the end of
// the session); capabilities, elicitationCaps and declared read only the
// options, which do not change after New (either way).
type srvState struct {
	c       *Client // the client it belongs to
	roots   []mcp.Root
	waiting map[jsonrpc.ID]*ServerRequest
	tasks   clientTasks
}

// capabilities is the client capabilities object sent in initialize (or,
// modern, in each request's _meta).
func (s *srvState) capabilities(modern bool) json.RawMessage {
	c := s.c
	o := c.opts.ServerRequests
	caps := map[string]any{}
	if o.Roots {
		caps["roots"] = map[string]bool{"listChanged": true}
	}
	if o.Sampling {
		caps["sampling"] = struct{}{}
	}
	if o.Elicitation {
		caps["elicitation"] = c.srv.elicitationCaps()
	}
	if t := c.srv.tasks.tasksCaps(modern); t != nil {
		caps["tasks"] = t
	}
	raw, _ := json.Marshal(caps)
	return raw
}

// elicitationCaps is {form, url} from 2025-11-25 (URL mode), {} before
// (an empty object means form only).
func (s *srvState) elicitationCaps() any {
	c := s.c
	if c.opts.ProtocolVersion < "2025-11-25" {
		return struct{}{}
	}
	return map[string]struct{}{"form": {}, "url": {}}
}

// declared says whether the request m is for a capability sonde declared
// (in the modern era when modern is set), and if not, which one it needed.
// Like clientTasksDeclared, it reads only the options.
func (s *srvState) declared(m jsonrpc.Message, modern bool) (ok bool, capability string) {
	c := s.c
	o := c.opts.ServerRequests
	switch m.Method {
	case mcp.MethodRootsList:
		return o.Roots, "roots"
	case mcp.MethodCreateMessage:
		return o.Sampling, "sampling"
	case mcp.MethodElicit:
		if !o.Elicitation {
			return false, "elicitation"
		}
		var p mcp.ElicitParams
		_ = json.Unmarshal(m.Params, &p)
		if p.Mode == "url" && c.opts.ProtocolVersion < "2025-11-25" {
			return false, "elicitation.url"
		}
		return true, ""
	case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksList, mcp.MethodTasksCancel:
		return c.srv.tasks.clientTasksDeclared(modern), "tasks"
	}
	return true, ""
}

// serverRequestLocked handles a request from the server: ping is answered
// {}, roots/list from the roots, sampling and elicitation by the Handler
// or later by Respond; a request for an undeclared capability, or for a
// method sonde does not know, gets a JSON-RPC error.
func (s *srvState) serverRequestLocked(f transport.Frame) {
	c := s.c
	c.stats.ServerReqs++
	if c.era.modernLocked() {
		c.era.serverRequestModernLocked(f) // era.go: not answered
		return
	}
	m := f.Msg
	ok, capability := c.srv.declared(m, false) // legacy: modern requests went to serverRequestModernLocked
	_, dup := c.srv.waiting[m.ID]
	switch {
	case dup:
		c.stats.Invalid++
		c.hub.emitFrame(f, VerdictInvalid, "request from the server reuses id "+m.ID.String()+", which is still waiting for sonde's answer; answered with an error")
	case !ok:
		c.stats.Undeclared++
		c.hub.emitFrame(f, VerdictUndeclared, fmt.Sprintf("%s needs the %s capability, which sonde did not declare (a protocol violation); answered with an error", m.Method, capability))
	default:
		c.hub.emitFrame(f, VerdictServerRequest, "request from the server: "+m.Method)
	}
	c.hub.emit(Event{Time: f.Time, Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: m.ID, Method: m.Method, State: StateReceived, Params: m.Params}})
	req := &ServerRequest{ID: m.ID, Method: m.Method, Params: m.Params, Received: f.Time}
	switch {
	case dup:
		c.srv.answerLocked(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "id " + m.ID.String() + " is already in use by a request sonde has not answered"})
	case !ok:
		msg := fmt.Sprintf("sonde did not declare the %s capability, so the server must not send %s", capability, m.Method)
		if how := c.opts.ServerRequests.Undeclared[m.Method]; how != "" {
			msg += "; " + how
		}
		c.srv.answerLocked(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: msg})
	case m.Method == mcp.MethodPing:
		c.srv.answerLocked(req, json.RawMessage("{}"), nil)
	case m.Method == mcp.MethodRootsList:
		c.srv.answerLocked(req, c.srv.rootsResultLocked(), nil)
	case m.Method == mcp.MethodTasksGet, m.Method == mcp.MethodTasksResult, m.Method == mcp.MethodTasksList, m.Method == mcp.MethodTasksCancel:
		c.srv.tasks.serveTaskLocked(req)
	case m.Method == mcp.MethodCreateMessage, m.Method == mcp.MethodElicit:
		if ttl, ok := c.srv.tasks.taskAugmentedLocked(req); ok {
			c.srv.tasks.startClientTaskLocked(req, ttl)
			return
		}
		if h := c.opts.ServerRequests.Handler; h != nil {
			if res, rpcErr, answered := h(*req); answered {
				c.srv.answerLocked(req, res, rpcErr)
				return
			}
		}
		c.srv.waitLocked(req)
	default:
		c.srv.answerLocked(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: sonde does not handle " + m.Method})
	}
}

// maxWaiting bounds the server's requests waiting for Respond: beyond it a
// new one is refused at once (a server flooding sonde with requests nobody
// answers must not grow its memory without end).
const maxWaiting = 1024

// waitLocked leaves req waiting for Respond, or refuses it when too many
// already wait. It reports whether req waits.
func (s *srvState) waitLocked(req *ServerRequest) bool {
	c := s.c
	if !c.srv.addWaitingLocked(req) {
		c.hub.emit(Event{Kind: EvNote, Note: fmt.Sprintf("%s %s refused: %d requests from the server already wait for an answer", req.Method, req.ID, maxWaiting)})
		c.srv.answerLocked(req, nil, tooManyWaiting(req.Method))
		return false
	}
	return true
}

// addWaitingLocked adds req to the requests waiting for Respond, unless
// maxWaiting already wait; it reports whether it did.
func (s *srvState) addWaitingLocked(req *ServerRequest) bool {
	c := s.c
	if len(c.srv.waiting) >= maxWaiting {
		return false
	}
	if c.srv.waiting == nil {
		c.srv.waiting = map[jsonrpc.ID]*ServerRequest{}
	}
	c.srv.waiting[req.ID] = req
	c.hold.holdCheckLocked()
	return true
}

// tooManyWaiting is the JSON-RPC error refusing a request of method when
// maxWaiting requests of the server's already wait.
func tooManyWaiting(method string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("sonde has %d requests from this server waiting for an answer; %s refused", maxWaiting, method)}
}

// answerLocked queues the answer to req and emits its outcome.
func (s *srvState) answerLocked(req *ServerRequest, result json.RawMessage, rpcErr *jsonrpc.Error) error {
	c := s.c
	var raw []byte
	var err error
	if rpcErr != nil {
		raw, err = jsonrpc.EncodeError(req.ID, rpcErr)
	} else {
		raw, err = jsonrpc.EncodeResult(req.ID, result)
	}
	if err != nil {
		return newErr(CodeProtocol, "answer to %s %s: %v", req.Method, req.ID, err)
	}
	if !c.out.push(outItem{raw: compact(raw), id: req.ID, method: req.Method}) {
		c.hub.emit(Event{Kind: EvNote, Note: "answer to server request " + req.ID.String() + " not sent: write queue full"})
		return newErr(CodeBusy, "answer to %s %s: write queue full", req.Method, req.ID)
	}
	var detail error
	if rpcErr != nil {
		detail = rpcErr
	}
	c.hub.emit(Event{Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: req.ID, Method: req.Method, State: StateAnswered, Latency: time.Since(req.Received), Err: detail}})
	return nil
}

// Waiting returns the server's requests that wait for Respond, oldest
// first.
func (c *Client) Waiting() []ServerRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ServerRequest, 0, len(c.srv.waiting))
	for _, r := range c.srv.waiting {
		out = append(out, *r)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Received.Before(out[j-1].Received); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Respond answers the server's request id, which is waiting (see
// ServerRequests), with result (a JSON value; nil is {}) or, when rpcErr is
// set, with that error. A request that is not waiting (never received,
// already answered, cancelled by the server, or the session ended) is
// MCP_PROTOCOL, and nothing is sent.
func (c *Client) Respond(id jsonrpc.ID, result json.RawMessage, rpcErr *jsonrpc.Error) error {
	if rpcErr == nil && len(result) > 0 && !json.Valid(result) {
		return newErr(CodeProtocol, "answer to %s: the result is not valid JSON", id)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	req := c.srv.waiting[id]
	if req == nil {
		return newErr(CodeProtocol, "no request from the server with id %s is waiting for an answer", id)
	}
	if c.closed || c.dead != nil {
		return newErr(CodeClosed, "answer to %s %s: the session has ended", req.Method, id)
	}
	delete(c.srv.waiting, id)
	c.hold.holdCheckLocked()
	if req.input == nil && req.task == nil {
		return c.srv.answerLocked(req, result, rpcErr)
	}
	// Answered off the wire: a modern input request's answer goes to the
	// retry that waits for it, a task's to the task (taskrunner.go).
	if rpcErr == nil && len(result) == 0 {
		result = json.RawMessage("{}")
	}
	var detail error
	if rpcErr != nil {
		detail = rpcErr
	}
	c.hub.emit(Event{Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: req.ID, Method: req.Method, State: StateAnswered, Latency: time.Since(req.Received), Err: detail}})
	if req.input != nil {
		req.input <- inputReply{result: result, rpcErr: rpcErr}
	} else {
		c.srv.tasks.finishClientTaskLocked(req.task, result, rpcErr)
	}
	return nil
}

// serverCancelLocked handles notifications/cancelled for one of the
// server's own waiting requests: the request ends (cancelled) and Respond
// no longer answers it. It reports whether f was such a notification.
func (s *srvState) serverCancelLocked(f transport.Frame) bool {
	c := s.c
	var p mcp.CancelledParams
	var id jsonrpc.ID
	if json.Unmarshal(f.Msg.Params, &p) != nil || json.Unmarshal(p.RequestID, &id) != nil {
		return false
	}
	req := c.srv.waiting[id]
	if req == nil {
		return false
	}
	delete(c.srv.waiting, id)
	c.hold.holdCheckLocked()
	detail := "the server cancelled its request " + req.Method + " " + id.String()
	if p.Reason != "" {
		detail += ": " + bounded(p.Reason, 200)
	}
	c.hub.emitFrame(f, VerdictNotification, detail)
	c.hub.emit(Event{Time: f.Time, Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: req.ID, Method: req.Method, State: StateCancelled,
		Latency: f.Time.Sub(req.Received), Err: newErr(CodeAborted, "%s", detail)}})
	return true
}

// endWaitingLocked ends every server request still waiting when the
// session ends: there is nobody left to answer.
func (s *srvState) endWaitingLocked(state State, err *Error) {
	c := s.c
	now := time.Now()
	for id, req := range c.srv.waiting {
		delete(c.srv.waiting, id)
		c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: req.ID, Method: req.Method, State: state, Latency: now.Sub(req.Received), Err: err}})
	}
	c.hold.holdCheckLocked()
	c.srv.tasks.endClientTasksLocked(now, state, err)
}
