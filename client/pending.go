package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

type writeState uint8

const (
	notWritten writeState = iota
	written               // handed to the connection
)

// pending is the single owner of one in-flight request: its timer, its
// context hook and its Call.
type pending struct {
	id       int64
	method   string
	tool     string
	call     *Call
	timer    *time.Timer
	stopCtx  func() bool
	wstate   writeState
	queuedAt time.Time
	deadline time.Time
	timeout  time.Duration
	maxEnd   time.Time
	retryOf  jsonrpc.ID // modern era: the request this one retries
	base     *retryBase // modern era: how to retry it after input_required
	// held: the clock stands still (HoldDeadlines) with left to
	// go; the timer is stopped.
	held bool
	left time.Duration

	// For the timeout snapshot (snapshot.go): when the bytes were handed
	// to the connection, the stderr count and CPU reading at queueing, the
	// progress seen, and (HTTP) what its POST did.
	sentAt       time.Time
	stderrMark   uint64
	cpuBase      cpuReading
	progressN    int
	lastProgress time.Time
	http         *httpSeen
	// expiring is set while its timeout's snapshot reads the server's
	// processes (the lock released): a response then is held in it and
	// reported late once the timeout has settled the request.
	expiring *expiry
}

// Call is one request. It is settled exactly once; Done is closed then.
type Call struct {
	// ID is the request id (unset when the request was refused before it got
	// one: busy, aborted, closed).
	ID     jsonrpc.ID
	Method string
	Tool   string

	done    chan struct{}
	result  json.RawMessage
	err     error
	queued  time.Time
	latency time.Duration
}

// Done is closed when the call has its outcome.
func (c *Call) Done() <-chan struct{} { return c.done }

// Wait blocks until the call is settled and returns its result or error.
func (c *Call) Wait() (json.RawMessage, error) {
	<-c.done
	return c.result, c.err
}

// Latency is the time from queueing to the outcome (valid after Done).
func (c *Call) Latency() time.Duration {
	<-c.done
	return c.latency
}

func failedCall(method string, err error) *Call {
	c := &Call{Method: method, done: make(chan struct{}), err: err, queued: time.Now()}
	close(c.done)
	return c
}

// outcome is how a request ended.
type outcome struct {
	state  State
	result json.RawMessage
	err    error
}

// settleLocked is the single completion point of a request: it removes the
// entry from the pending map, remembers the id as retired, releases the
// timer and the context hook, records the outcome and wakes the caller. The
// caller holds c.mu and has checked that p is still pending.
func (c *Client) settleLocked(p *pending, o outcome) {
	delete(c.pending, p.id)
	now := time.Now()
	due := p.deadline // the deadline that passed; the caller's passed earlier
	if now.Before(due) {
		due = now
	}
	c.retired.add(p.id, retiredInfo{state: o.state, at: now, answered: o.state == StateResolved || o.state == StateError, queued: p.queuedAt, due: due, method: p.method, tool: p.tool})
	p.timer.Stop()
	p.stopCtx()
	call := p.call
	call.result, call.err = o.result, o.err
	call.latency = now.Sub(p.queuedAt)
	c.countLocked(o.state)
	c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{
		Dir: transport.Out, ID: jsonrpc.Int(p.id), Method: p.method, Tool: p.tool, State: o.state,
		Deadline: p.deadline, Latency: call.latency, Err: o.err, RetryOf: p.retryOf,
	}})
	if o.state == StateRetried {
		return // the call goes on under a new id (era.go)
	}
	close(call.done)
}

// countLocked counts an outcome in the client's stats.
func (c *Client) countLocked(s State) {
	switch s {
	case StateResolved:
		c.stats.Resolved++
	case StateError:
		c.stats.Errors++
	case StateTimeout:
		c.stats.Timeouts++
	case StateCancelled:
		c.stats.Cancelled++
	case StateRetried:
		c.stats.Retried++
	default:
		c.stats.Failed++
	}
}

// failAllLocked settles every pending request with err.
func (c *Client) failAllLocked(err *Error, state State) {
	for _, p := range c.pending {
		c.settleLocked(p, outcome{state: state, err: err})
	}
	c.srv.endWaitingLocked(state, err)
}

// expire is the timer callback of request id.
func (c *Client) expire(id int64) {
	c.mu.Lock()
	p := c.pending[id]
	if p == nil || p.held || p.expiring != nil {
		c.mu.Unlock()
		return
	}
	if now := time.Now(); now.Before(p.deadline) {
		// Progress moved the deadline; the timer was reset.
		c.mu.Unlock()
		return
	}
	limit := p.timeout
	if c.opts.ResetOnProgress && !p.maxEnd.IsZero() && p.deadline.Equal(p.maxEnd) {
		limit = p.maxEnd.Sub(p.queuedAt)
	}
	if c.expireLocked(p, fmt.Sprintf("%s id %d: no response within %s", p.method, p.id, limit), nil) {
		c.sendCancelLocked(p, "timeout after "+limit.String())
	}
	c.mu.Unlock()
}

// cancelByCaller is the context hook of request id.
func (c *Client) cancelByCaller(id int64, cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	if p == nil || p.expiring != nil {
		return
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		reason := "caller deadline passed"
		if c.expireLocked(p, p.method+" "+idText(id)+": "+reason, cause) {
			c.sendCancelLocked(p, reason)
		}
		return
	}
	reason := "cancelled by caller"
	c.settleLocked(p, outcome{state: StateCancelled, err: &Error{Code: CodeAborted, Message: p.method + " " + idText(id) + ": " + reason, Err: cause}})
	c.sendCancelLocked(p, reason)
}

// sendCancelLocked tells the server to stop working on p, if p's bytes went
// out (a request never written needs no cancel) and p is not initialize
// (which must not be cancelled).
func (c *Client) sendCancelLocked(p *pending, reason string) {
	if p.wstate == notWritten || p.method == "initialize" || c.closed {
		return
	}
	params, _ := json.Marshal(mcp.CancelledParams{RequestID: json.RawMessage(strconv.FormatInt(p.id, 10)), Reason: reason})
	raw, _ := jsonrpc.EncodeNotification(mcp.MethodCancelled, params)
	if !c.out.push(outItem{raw: raw, method: mcp.MethodCancelled}) {
		c.hub.emit(Event{Kind: EvNote, Note: "cancel notification for " + idText(p.id) + " not sent: write queue full"})
	}
}

// retiredInfo remembers how a settled request ended.
type retiredInfo struct {
	state    State
	at       time.Time
	answered bool // a response arrived for it (so another is a duplicate)
	// queued, due (the deadline that passed), method, tool: for a late
	// response's report (Late).
	queued, due  time.Time
	method, tool string
}

// retiredSet remembers the last n settled ids (a ring plus an index).
type retiredSet struct {
	ring []int64
	next int
	full bool
	info map[int64]retiredInfo
}

func newRetiredSet(n int) retiredSet {
	return retiredSet{ring: make([]int64, n), info: make(map[int64]retiredInfo, n)}
}

func (r *retiredSet) add(id int64, ri retiredInfo) {
	if r.full {
		delete(r.info, r.ring[r.next])
	}
	r.ring[r.next] = id
	r.info[id] = ri
	r.next++
	if r.next == len(r.ring) {
		r.next, r.full = 0, true
	}
}

func (r *retiredSet) get(id int64) (retiredInfo, bool) {
	ri, ok := r.info[id]
	return ri, ok
}

// markAnswered records that a retired id has now received a response, so a
// further one is a duplicate.
func (r *retiredSet) markAnswered(id int64) {
	if ri, ok := r.info[id]; ok {
		ri.answered = true
		r.info[id] = ri
	}
}

// Cancel settles pending request id as cancelled (MCP_ABORTED) and sends
// notifications/cancelled with reason if its bytes went out, as a caller's
// context cancellation does. It reports whether the request was pending.
func (c *Client) Cancel(id int64, reason string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	if p == nil {
		return false
	}
	if reason == "" {
		reason = "cancelled by user"
	}
	c.settleLocked(p, outcome{state: StateCancelled, err: newErr(CodeAborted, "%s %s: %s", p.method, idText(id), reason)})
	c.sendCancelLocked(p, reason)
	return true
}
