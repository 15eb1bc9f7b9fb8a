package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// Era is the generation of the protocol a session speaks.
type Era string

// The eras.
const (
	// EraLegacy: initialize, then requests (protocol 2025-11-25 and older).
	EraLegacy Era = "legacy"
	// EraModern: no initialize; the protocol version and the client's
	// capabilities ride in every request's _meta, server/discover tells who
	// the server is, and a result may ask for input (resultType
	// input_required) instead of the server sending requests (2026-07-28).
	EraModern Era = "modern"
	// EraAuto: try server/discover; on any error or timeout fall back to
	// initialize (the spec's detection).
	EraAuto Era = "auto"
)

// Eras lists the values of --era.
var Eras = []Era{EraLegacy, EraModern, EraAuto}

// ParseEra reads an --era value.
func ParseEra(s string) (Era, error) {
	if e := Era(s); slices.Contains(Eras, e) {
		return e, nil
	}
	return "", fmt.Errorf("unknown era %q (want legacy, modern or auto)", s)
}

// maxInputRounds bounds the input_required rounds of one request, against a
// server that never stops asking.
const maxInputRounds = 16

// InputFunc answers one input request of an input_required result (modern
// era): method and params are what a legacy server would have sent as a
// request (elicitation/create, sampling/createMessage, roots/list); the
// returned JSON is that request's result. An error fails the call. It must
// return once ctx is done (the caller gave up, or the session ended): Close
// waits for it.
type InputFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// eraState is what the client knows about the protocol era, and the modern
// era's work: discovery and the retries after input_required. Its fields
// other than wg are guarded by Client.mu. Only the Client calls it: the
// methods named *Locked with c.mu held (the reader, start); modernMeta
// reads only the options (either way); startEra and runDiscover run in the
// handshake, and retry, answerInput, awaitInput and endCall on a modern
// call's retry goroutine, all without c.mu (they take it where they touch
// state).
type eraState struct {
	c        *Client // the client it belongs to
	resolved Era     // EraLegacy or EraModern once decided
	discover *mcp.DiscoverResult
	wg       sync.WaitGroup // retry goroutines between two rounds
	inputs   int            // input requests shown as waiting (numbers their ids)
}

// retryBase is what a modern request needs to be sent again after an
// input_required result.
type retryBase struct {
	ctx    context.Context
	method string
	params json.RawMessage // as the caller gave them, before _meta was added
	o      CallOptions
	round  int
}

// continuation makes start register a retry of an earlier request: the
// same Call goes on under a new id.
type continuation struct {
	call    *Call
	retryOf int64
	round   int
}

// Era returns the era of the session: legacy or modern once Initialize has
// decided it, the configured era before.
func (c *Client) Era() Era {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.era.resolved != "" {
		return c.era.resolved
	}
	return c.opts.Era
}

// Discovered returns the server/discover result of a modern session (nil in
// the legacy era).
func (c *Client) Discovered() *mcp.DiscoverResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.era.discover
}

func (e *eraState) modernLocked() bool { return e.resolved == EraModern }

// modernMeta is the _meta every modern request carries (added to its
// params by spliceMeta).
func (s *eraState) modernMeta() []MetaMember {
	c := s.c
	info, _ := json.Marshal(mcp.Implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion})
	return []MetaMember{
		{mcp.MetaProtocolVersion, json.RawMessage(`"` + mcp.ModernVersion + `"`)},
		{mcp.MetaClientCapabilities, c.srv.capabilities(true)},
		{mcp.MetaClientInfo, info},
	}
}

// startEra runs the start of a session in the configured era. It returns
// done=false when the caller must go on with initialize (legacy, or auto
// after a failed discover).
func (s *eraState) startEra(ctx context.Context) (res *mcp.InitializeResult, err error, done bool) {
	c := s.c
	switch c.opts.Era {
	case EraModern:
		c.mu.Lock()
		c.era.resolved = EraModern
		c.mu.Unlock()
		res, _, err := c.era.runDiscover(ctx)
		if err != nil {
			return nil, err, true
		}
		return res, nil, true
	case EraAuto:
		res, modern, err := c.era.runDiscover(ctx)
		if err == nil {
			c.hub.emit(Event{Kind: EvNote, Note: "era auto: the server answered server/discover; speaking the modern era (" + mcp.ModernVersion + ")"})
			return res, nil, true
		}
		if modern || !fallsBack(err) {
			return nil, err, true
		}
		c.hub.emit(Event{Kind: EvNote, Note: "era auto: server/discover failed (" + err.Error() + "); falling back to initialize (legacy era)"})
	}
	c.mu.Lock()
	c.era.resolved = EraLegacy
	c.mu.Unlock()
	return nil, nil, false
}

// fallsBack reports whether a failed discover lets auto try initialize: any
// answer or silence does, a session that is over does not.
func fallsBack(err error) bool {
	switch CodeOf(err) {
	case CodeProcessExit, CodeClosed, CodeAborted, CodeSpawn, CodeBusy:
		return false
	}
	return true
}

// discover sends server/discover and checks its result. modern reports that
// the server showed itself to be modern (a DiscoverResult, or a modern-era
// error), in which case auto must not fall back.
func (s *eraState) runDiscover(ctx context.Context) (res *mcp.InitializeResult, modern bool, err error) {
	c := s.c
	params := spliceMeta(nil, c.era.modernMeta())
	raw, err := c.start(ctx, mcp.MethodServerDiscover, params, CallOptions{}, true).Wait()
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.RPC != nil && isModernCode(e.RPC.Code) {
			return nil, true, &Error{Code: CodeHandshake, Message: "server/discover: the server answered with a modern-era error (" + e.Message + "); sonde speaks " + mcp.ModernVersion, RPC: e.RPC, Err: err}
		}
		return nil, false, err
	}
	var d mcp.DiscoverResult
	if err := json.Unmarshal(raw, &d); err != nil || d.SupportedVersions == nil {
		return nil, false, newErr(CodeHandshake, "server/discover: the result is not a DiscoverResult (%s)", bounded(string(raw), 200))
	}
	if d.ResultType != "" && d.ResultType != mcp.ResultComplete {
		return nil, false, newErr(CodeHandshake, "server/discover: resultType %q (a discover result must be complete)", bounded(d.ResultType, 64))
	}
	if !slices.Contains(d.SupportedVersions, mcp.ModernVersion) {
		return nil, false, newErr(CodeHandshake, "server/discover: the server supports %s; sonde speaks the modern era as %s only",
			strings.Join(d.SupportedVersions, ", "), mcp.ModernVersion)
	}
	out := &mcp.InitializeResult{ProtocolVersion: mcp.ModernVersion, Capabilities: d.Capabilities, Instructions: d.Instructions}
	var meta map[string]json.RawMessage
	if json.Unmarshal(d.Meta, &meta) == nil {
		_ = json.Unmarshal(meta[mcp.MetaServerInfo], &out.ServerInfo)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.era.resolved, c.era.discover, c.initialized = EraModern, &d, true
	return out, true, nil
}

func isModernCode(code int64) bool {
	return code == mcp.CodeHeaderMismatch || code == mcp.CodeMissingRequiredClientCapability || code == mcp.CodeUnsupportedProtocolVersion
}

// goneInModern names the requests the modern era removed.
func goneInModern(method string) bool {
	switch method {
	case mcp.MethodInitialize, mcp.MethodPing, "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return true
	}
	return false
}

// refuseModernLocked says why method cannot be sent in a modern session.
func (s *eraState) refuseModernLocked(method string) *Error {
	c := s.c
	if c.era.modernLocked() && goneInModern(method) {
		return newErr(CodeProtocol, "%s: not part of the modern era (protocol %s removed it); use --era legacy", method, mcp.ModernVersion)
	}
	return nil
}

// serverRequestModernLocked reports a request from a modern server: it
// must not send any (it returns input_required instead), and a modern
// client must not answer.
func (s *eraState) serverRequestModernLocked(f transport.Frame) {
	c := s.c
	c.stats.Invalid++
	c.hub.emitFrame(f, VerdictInvalid, "request from the server in the modern era ("+f.Msg.Method+"): a modern server must not send requests (it returns input_required); not answered")
}

// modernResultLocked looks at the resultType of a modern result for p. It
// returns false when the result is complete and settles p as usual;
// otherwise it has settled p itself: input_required starts a retry under a
// new id, an unknown resultType is MCP_PROTOCOL.
func (s *eraState) modernResultLocked(f transport.Frame, p *pending) bool {
	c := s.c
	var probe struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(f.Msg.Result, &probe) != nil || probe.ResultType == nil || *probe.ResultType == mcp.ResultComplete {
		return false
	}
	rt := *probe.ResultType
	if rt != mcp.ResultInputRequired {
		why := "the spec says it is invalid"
		if rt == mcp.ResultTask {
			// The tasks extension's answer: the server may use it only when
			// the client declared the extension, and sonde does not.
			why = "it belongs to the tasks extension (" + mcp.ExtensionTasks + "), which sonde does not declare, so the server must not use it"
		}
		c.stats.Invalid++
		c.hub.emitFrame(f, VerdictInvalid, fmt.Sprintf("resultType %q is neither complete nor input_required (%s); settles %s with MCP_PROTOCOL", bounded(rt, 64), why, idText(p.id)))
		c.settleLocked(p, outcome{state: StateProtocol, err: newErr(CodeProtocol, "%s %s: unknown resultType %q (%s)", p.method, idText(p.id), bounded(rt, 64), why)})
		return true
	}
	var ir mcp.InputRequiredResult
	err := json.Unmarshal(f.Msg.Result, &ir)
	switch {
	case err != nil:
		err = newErr(CodeProtocol, "%s %s: input_required result does not decode: %v", p.method, idText(p.id), err)
	case p.base == nil:
		err = newErr(CodeProtocol, "%s %s: input_required for a request that cannot be retried", p.method, idText(p.id))
	case p.base.round+1 >= maxInputRounds:
		err = newErr(CodeProtocol, "%s %s: the server asked for input %d times; giving up", p.method, idText(p.id), maxInputRounds)
	}
	if err != nil {
		c.stats.Invalid++
		c.hub.emitFrame(f, VerdictInvalid, err.(*Error).Message)
		c.settleLocked(p, outcome{state: StateProtocol, err: err})
		return true
	}
	c.hub.emit(Event{Time: f.Time, Kind: EvFrame, Frame: &FrameInfo{Frame: f, Verdict: VerdictResolved, InputRequired: true,
		Detail: fmt.Sprintf("input required for %s (%s); sonde answers and retries under a new id", idText(p.id), inputSummary(ir.InputRequests))}})
	call, base, prev := p.call, p.base, p.id
	c.settleLocked(p, outcome{state: StateRetried})
	c.era.wg.Add(1)
	go c.era.retry(base, prev, call, ir)
	return true
}

func inputSummary(reqs map[string]mcp.InputRequest) string {
	if len(reqs) == 0 {
		return "no input requests, only requestState"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		parts = append(parts, k+": "+bounded(reqs[k].Method, 64))
	}
	return strings.Join(parts, ", ")
}

// retry answers the input requests of an input_required result, then sends
// the request again under a new id with inputResponses and the exact
// requestState. The Call goes on; it ends here only when the retry cannot
// be sent.
func (s *eraState) retry(b *retryBase, prev int64, call *Call, ir mcp.InputRequiredResult) {
	c := s.c
	defer c.era.wg.Done()
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-c.readDone: // the session ended while sonde was answering
			cancel()
		case <-stop:
		}
	}()
	answers := map[string]json.RawMessage{}
	for _, k := range slices.Sorted(maps.Keys(ir.InputRequests)) {
		ans, err := c.era.answerInput(ctx, k, ir.InputRequests[k])
		if err != nil {
			c.era.endCall(call, prev, err)
			return
		}
		answers[k] = ans
	}
	params, err := retryParams(b.params, answers, ir.RequestState)
	if err != nil {
		c.era.endCall(call, prev, newErr(CodeProtocol, "%s: cannot build the retry of %s: %v", b.method, idText(prev), err))
		return
	}
	o := b.o
	o.cont = &continuation{call: call, retryOf: prev, round: b.round + 1}
	if got := c.start(b.ctx, b.method, params, o, false); got != call {
		c.era.endCall(call, prev, got.err)
	}
}

// answerInput answers one input request as a legacy server's request of the
// same method would be: roots/list from the roots, sampling and elicitation
// by ServerRequests.Handler; what that leaves (or every request, without a
// Handler) goes to Options.Inputs. A request for a capability sonde did not
// declare is the server's fault (MCP_PROTOCOL).
func (s *eraState) answerInput(ctx context.Context, key string, req mcp.InputRequest) (json.RawMessage, error) {
	c := s.c
	m := jsonrpc.Message{Kind: jsonrpc.KindRequest, ID: jsonrpc.String(key), Method: req.Method, Params: req.Params}
	if ok, capability := c.srv.declared(m, true); !ok { // input requests come only in the modern era
		return nil, newErr(CodeProtocol, "the server asked for %s, which needs the %s capability sonde did not declare", bounded(req.Method, 64), capability)
	}
	sr := c.opts.ServerRequests
	switch req.Method {
	case mcp.MethodRootsList:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.srv.rootsResultLocked(), nil
	case mcp.MethodCreateMessage, mcp.MethodElicit:
		if sr.Handler != nil {
			res, rpcErr, ok := sr.Handler(ServerRequest{ID: m.ID, Method: req.Method, Params: req.Params, Received: time.Now()})
			switch {
			case ok && rpcErr != nil:
				return nil, newErr(CodeProtocol, "sonde's answer to the %s the server asked for is an error (%s), which an input_required retry cannot carry", req.Method, bounded(rpcErr.Message, 200))
			case ok:
				return res, nil
			}
		}
	default:
		return nil, newErr(CodeProtocol, "the server asked for %s, which is not an input request sonde knows", bounded(req.Method, 64))
	}
	if sr.Interactive && c.opts.Inputs == nil {
		return c.era.awaitInput(ctx, key, req)
	}
	if c.opts.Inputs == nil {
		return nil, newErr(CodeProtocol, "the server asked for %s, which sonde cannot answer (no reply configured)", bounded(req.Method, 64))
	}
	ans, err := c.opts.Inputs(ctx, req.Method, req.Params)
	if err == nil && !json.Valid(ans) {
		err = fmt.Errorf("the answer to %s is not JSON", req.Method)
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		if ctx.Err() != nil {
			return nil, &Error{Code: CodeAborted, Message: "answering " + req.Method + ": " + err.Error(), Err: err}
		}
		return nil, &Error{Code: CodeProtocol, Message: "answering " + req.Method + ": " + err.Error(), Err: err}
	}
	return ans, nil
}

// endCall completes a call between two rounds (nothing of it is pending).
func (s *eraState) endCall(call *Call, prev int64, err error) {
	c := s.c
	c.mu.Lock()
	if c.closed && CodeOf(err) == CodeAborted {
		err = newErr(CodeClosed, "%s: client closed while answering the input %s asked for", call.Method, idText(prev))
	} else if c.dead != nil && CodeOf(err) == CodeAborted {
		err = c.dead
	}
	c.mu.Unlock()
	c.hub.emit(Event{Kind: EvNote, Note: fmt.Sprintf("%s (input required by %s) not retried: %v", call.Method, idText(prev), err)})
	call.err = err
	call.latency = time.Since(call.queued)
	close(call.done)
}

// retryParams is params with inputResponses and requestState set (and no
// _meta of the previous round: start adds it again).
func retryParams(params json.RawMessage, answers map[string]json.RawMessage, state json.RawMessage) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if p := bytes.TrimSpace(params); len(p) > 0 && string(p) != "null" {
		if err := json.Unmarshal(params, &obj); err != nil {
			return nil, err
		}
	}
	if len(answers) > 0 {
		obj["inputResponses"], _ = json.Marshal(answers)
	} else {
		delete(obj, "inputResponses")
	}
	if len(state) > 0 {
		obj["requestState"] = state
	} else {
		delete(obj, "requestState")
	}
	return json.Marshal(obj)
}

// retryOfID is the id a request continues, or an unset id.
func (o CallOptions) retryOfID() jsonrpc.ID {
	if o.cont == nil {
		return jsonrpc.ID{}
	}
	return jsonrpc.Int(o.cont.retryOf)
}

// awaitInput shows an input request as a request from the server waiting
// for Respond (the UI's dialogs answer it like a legacy server's request)
// and waits for the answer, or for ctx.
func (s *eraState) awaitInput(ctx context.Context, key string, req mcp.InputRequest) (json.RawMessage, error) {
	c := s.c
	sr := &ServerRequest{Method: req.Method, Params: req.Params, Received: time.Now(), input: make(chan inputReply, 1)}
	c.mu.Lock()
	c.era.inputs++
	sr.ID = jsonrpc.String(fmt.Sprintf("input:%d:%s", c.era.inputs, key))
	if !c.srv.addWaitingLocked(sr) {
		c.mu.Unlock()
		return nil, newErr(CodeBusy, "the %s the server asked for (input %s): %d requests from the server already wait for an answer", req.Method, key, maxWaiting)
	}
	c.hub.emit(Event{Time: sr.Received, Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: sr.ID, Method: sr.Method, State: StateReceived, Params: sr.Params}})
	c.mu.Unlock()
	select {
	case r := <-sr.input:
		if r.rpcErr != nil {
			return nil, newErr(CodeAborted, "the %s the server asked for (input %s) was refused: %s", req.Method, key, bounded(r.rpcErr.Message, 200))
		}
		return r.result, nil
	case <-ctx.Done():
		c.mu.Lock()
		if c.srv.waiting[sr.ID] == sr {
			delete(c.srv.waiting, sr.ID)
			c.hold.holdCheckLocked()
			c.hub.emit(Event{Kind: EvRequest, Req: &ReqInfo{Dir: transport.In, ID: sr.ID, Method: sr.Method, State: StateCancelled, Latency: time.Since(sr.Received), Err: newErr(CodeAborted, "no longer needed: the call ended")}})
		}
		c.mu.Unlock()
		return nil, &Error{Code: CodeAborted, Message: "waiting for the answer to " + req.Method + ": " + ctx.Err().Error(), Err: ctx.Err()}
	}
}
