package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// CallOptions adjust one request.
type CallOptions struct {
	// Timeout overrides Options.Timeout for this request.
	Timeout time.Duration
	// Tool names the tool of a tools/call, for events.
	Tool string
	// ProgressToken asks the server for progress (the token is the request
	// id); sonde sets it on every tools/call.
	ProgressToken bool

	cont *continuation // a retry after input_required (era.go)
}

// Call sends a request and waits for its outcome.
func (c *Client) Call(ctx context.Context, method string, params any, o CallOptions) (json.RawMessage, error) {
	return c.Go(ctx, method, params, o).Wait()
}

// Go sends a request without waiting: the returned Call settles later, when
// the response, the deadline, the caller's cancellation (ctx), the server's
// exit or Close comes first. A ctx already cancelled yields MCP_ABORTED with
// nothing written. Requests other than initialize and ping need the
// handshake first (MCP_HANDSHAKE).
func (c *Client) Go(ctx context.Context, method string, params any, o CallOptions) *Call {
	return c.start(ctx, method, params, o, false)
}

func (c *Client) start(ctx context.Context, method string, params any, o CallOptions, handshake bool) *Call {
	if err := ctx.Err(); err != nil {
		return c.reject(method, o.Tool, &Error{Code: CodeAborted, Message: method + ": cancelled before it was sent", Err: context.Cause(ctx)})
	}
	rawParams, err := encodeParams(params)
	if err != nil {
		return c.reject(method, o.Tool, &Error{Code: CodeProtocol, Message: method + ": cannot encode params: " + err.Error(), Err: err})
	}
	if size := len(rawParams) + len(method) + 64; size > c.opts.MaxLineBytes {
		return c.reject(method, o.Tool, newErr(CodeProtocol, "%s: request of about %d bytes exceeds the %d-byte line cap (--max-line-bytes)", method, size, c.opts.MaxLineBytes))
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = c.opts.Timeout
	}

	c.mu.Lock()
	if err := c.refuseLocked(method, handshake); err != nil {
		c.mu.Unlock()
		return c.reject(method, o.Tool, err)
	}
	c.lastID++
	id := c.lastID
	now := time.Now()
	call := &Call{ID: jsonrpc.Int(id), Method: method, Tool: o.Tool, done: make(chan struct{}), queued: now}
	if o.cont != nil {
		call = o.cont.call // a retry: the caller's Call goes on under the new id
	}
	p := &pending{id: id, method: method, tool: o.Tool, call: call, queuedAt: now, timeout: timeout, deadline: now.Add(timeout), retryOf: o.retryOfID()}
	if c.opts.ResetOnProgress {
		p.maxEnd = now.Add(max(c.opts.MaxTotalTimeout, timeout))
	}
	p.stderrMark = c.stats.StderrBytes
	c.watch.baselineLocked(p, now)
	c.pending[id] = p
	if method == mcp.MethodTasksCancel {
		c.taskCancels.noteTaskCancelLocked(rawParams)
	}
	p.timer = time.AfterFunc(timeout, func() { c.expire(id) })
	p.stopCtx = context.AfterFunc(ctx, func() { c.cancelByCaller(id, context.Cause(ctx)) })
	c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.Out, ID: jsonrpc.Int(id), Method: method, Tool: o.Tool, State: StateQueued, Deadline: p.deadline, Timeout: timeout, MaxEnd: p.maxEnd, RetryOf: p.retryOf}})
	if !c.hold.since.IsZero() {
		c.hold.holdLocked(p, now)
	}
	if c.era.modernLocked() {
		p.base = &retryBase{ctx: ctx, method: method, params: rawParams, o: o}
		if o.cont != nil {
			p.base.round = o.cont.round
		}
		p.base.o.cont = nil
	}
	var metaBuf [4]MetaMember
	meta := metaBuf[:0]
	if o.ProgressToken {
		meta = append(meta, MetaMember{"progressToken", strconv.AppendInt(c.meta.token[:0], id, 10)})
	}
	if c.era.modernLocked() {
		meta = append(meta, c.era.modernMeta()...)
	}
	meta = c.meta.requestMeta(c.opts.RequestMeta, meta, id, method)
	raw := encodeRequest(id, method, rawParams, meta)
	if !c.out.push(outItem{p: p, raw: raw, method: method}) {
		c.settleLocked(p, outcome{state: StateRejected, err: newErr(CodeBusy, "%s: write queue full", method)})
	}
	c.mu.Unlock()
	return call
}

// refuseLocked says why a new request cannot be registered, or nil.
func (c *Client) refuseLocked(method string, handshake bool) *Error {
	switch {
	case c.closed:
		return newErr(CodeClosed, "%s: client is closed", method)
	case c.dead != nil:
		return c.dead
	case c.conn == nil:
		return newErr(CodeClosed, "%s: not connected", method)
	case !handshake && !c.initialized && method != "ping":
		return newErr(CodeHandshake, "%s: the initialize handshake has not completed", method)
	case c.era.refuseModernLocked(method) != nil:
		return c.era.refuseModernLocked(method)
	case len(c.pending) >= c.opts.MaxPending:
		return newErr(CodeBusy, "%s: %d requests already in flight (--max-pending)", method, c.opts.MaxPending)
	}
	return nil
}

// reject returns a call that failed before it was registered: no id, no
// timer, nothing written.
func (c *Client) reject(method, tool string, err *Error) *Call {
	c.hub.emit(Event{Kind: EvRequest, Req: &ReqInfo{Dir: transport.Out, Method: method, Tool: tool, State: StateRejected, Err: err}})
	call := failedCall(method, err)
	call.Tool = tool
	return call
}

func encodeParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(p) > 0 && !json.Valid(p) {
			return nil, errInvalidJSON
		}
		return p, nil
	case mcp.CallToolParams:
		if p.Meta == nil {
			return encodeToolParams(p.Name, p.Arguments)
		}
	}
	return json.Marshal(params)
}

// encodeToolParams is json.Marshal of mcp.CallToolParams without its
// reflection, for the request sonde sends most: {"name":...,"arguments":...}.
func encodeToolParams(name string, args json.RawMessage) (json.RawMessage, error) {
	if len(args) > 0 && !json.Valid(args) {
		return nil, errInvalidJSON
	}
	args = compact(args)
	b := make([]byte, 0, len(name)+len(args)+24)
	b = append(b, `{"name":`...)
	b = appendKey(b, name)
	if len(args) > 0 {
		b = append(b, `,"arguments":`...)
		b = append(b, args...)
	}
	return append(b, '}'), nil
}

var errInvalidJSON = errors.New("params are not valid JSON")

// encodeRequest builds the request line by hand, in one buffer: the id is
// known to be an integer and method a plain string, so this avoids a second
// marshal of params, and the members of meta are spliced into params._meta
// (appendMeta) as the line is made.
func encodeRequest(id int64, method string, params json.RawMessage, meta []MetaMember) []byte {
	params = compact(params)
	b := make([]byte, 0, len(params)+len(method)+membersLen(meta)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = appendKey(b, method)
	if len(params) > 0 || len(meta) > 0 {
		b = append(b, `,"params":`...)
		b = appendMeta(b, params, meta)
	}
	return append(b, '}')
}

// compact removes insignificant whitespace (and so any newline) from JSON.
func compact(raw json.RawMessage) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

func idText(id int64) string { return "id " + strconv.FormatInt(id, 10) }
