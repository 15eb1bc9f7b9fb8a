package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// readLoop is the only reader of conn. It never waits for a consumer: each
// frame is classified, settles at most one request, and is emitted.
func (c *Client) readLoop(conn transport.Conn) {
	defer c.endRead()
	for {
		f, err := conn.Read()
		if err == nil {
			c.handleFrame(f)
			continue
		}
		var tooLong *transport.LineTooLongError
		if errors.As(err, &tooLong) {
			c.lineTooLong(tooLong)
			continue
		}
		var xe *transport.ExchangeError
		if errors.As(err, &xe) {
			c.exchangeFailed(xe)
			continue
		}
		c.connEnded(err)
		return
	}
}

func (c *Client) handleFrame(f transport.Frame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watch.lastStdout = f.Time
	if f.Err != nil {
		c.badFrameLocked(f)
		return
	}
	switch f.Msg.Kind {
	case jsonrpc.KindResponse:
		c.responseLocked(f)
	case jsonrpc.KindRequest:
		c.srv.serverRequestLocked(f)
	case jsonrpc.KindNotification:
		c.notificationLocked(f)
	}
}

// emitFrame emits frame f with its verdict and detail (these hub methods live
// here, with the reader that judges frames; the hub is guarded as event.go says).
func (h *hub) emitFrame(f transport.Frame, v Verdict, detail string) {
	h.emit(Event{Time: f.Time, Kind: EvFrame, Frame: &FrameInfo{Frame: f, Verdict: v, Detail: detail}})
}

// emitFrameSentence emits a frame whose detail is a sentence led by the
// verdict's word: v, a space, then rest (FrameInfo.VerdictInDetail).
func (h *hub) emitFrameSentence(f transport.Frame, v Verdict, rest string) {
	h.emitFrameDetail(f, v, string(v)+" "+rest)
}

// emitFrameDetail emits a frame whose detail, a sentence led by the
// verdict's word, is already made.
func (h *hub) emitFrameDetail(f transport.Frame, v Verdict, detail string) {
	h.emit(Event{Time: f.Time, Kind: EvFrame, Frame: &FrameInfo{Frame: f, Verdict: v, Detail: detail, VerdictInDetail: true}})
}

// answerSentence is the detail of an answer's frame, "<verdict> <what><id>
// after <latency>", built in one buffer (it is made for every response).
func answerSentence(v Verdict, what string, id int64, lat time.Duration) string {
	var buf [96]byte
	b := append(buf[:0], v...)
	b = append(b, ' ')
	b = append(b, what...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, " after "...)
	b = append(b, roundDur(lat).String()...)
	return string(b)
}

// badFrameLocked handles a line that is not a valid message. A response that
// breaks the rules (both result and error, or neither) still settles its own
// request, with MCP_PROTOCOL; so does a line that could not be decoded at
// all but whose id reads well and is pending (undecodableLocked).
func (c *Client) badFrameLocked(f transport.Frame) {
	var de *jsonrpc.DecodeError
	errors.As(f.Err, &de)
	if de != nil && c.undecodableLocked(f, de) {
		return
	}
	if de != nil && de.Class == jsonrpc.ClassInvalid {
		c.stats.Invalid++
		detail := de.Reason
		if id, ok := f.Msg.ID.Int64(); ok && f.Msg.Kind == jsonrpc.KindResponse {
			if p := c.pending[id]; p != nil {
				detail += "; settles " + idText(id) + " with MCP_PROTOCOL"
				c.hub.emitFrame(f, VerdictInvalid, detail)
				c.settleLocked(p, outcome{state: StateProtocol, err: newErr(CodeProtocol, "%s %s: invalid response: %s", p.method, idText(id), de.Reason)})
				c.strictLocked("invalid message: " + de.Reason)
				return
			}
		}
		c.hub.emitFrame(f, VerdictInvalid, detail)
		c.strictLocked("invalid message: " + de.Reason)
		return
	}
	c.stats.Malformed++
	reason := f.Err.Error()
	if de != nil {
		reason = de.Reason
	}
	c.hub.emitFrame(f, VerdictMalformed, reason)
	c.strictLocked("malformed line on stdout: " + reason)
}

// undecodableLocked settles the pending request a line answers when Decode
// could not read the line (not JSON, or an object it could not unmarshal)
// but its top-level id reads well (jsonrpc.ScanID): without it, the request
// would wait for its deadline. A line with a "method" member (a request of
// the server's, its own id space), an id that is not pending, and the
// incomplete last line of a server that stopped mid-message (its exit ends
// the request) settle nothing. It reports whether it handled the frame.
func (c *Client) undecodableLocked(f transport.Frame, de *jsonrpc.DecodeError) bool {
	if f.Msg.ID.IsValid() || f.Msg.Kind != jsonrpc.KindInvalid || de.Reason == transport.IncompleteLineReason {
		return false
	}
	id, method := jsonrpc.ScanID(f.Raw)
	n, ok := id.Int64()
	if !ok || method {
		return false
	}
	p := c.pending[n]
	if p == nil {
		return false
	}
	v := VerdictMalformed
	if de.Class == jsonrpc.ClassInvalid {
		v = VerdictInvalid
		c.stats.Invalid++
	} else {
		c.stats.Malformed++
	}
	c.hub.emitFrame(f, v, de.Reason+"; settles "+idText(n)+" with MCP_PROTOCOL")
	c.settleLocked(p, outcome{state: StateProtocol, err: newErr(CodeProtocol, "%s %s: the response to %s could not be decoded: %s", p.method, idText(n), idText(n), de.Reason)})
	// A response did arrive: another one for n is a duplicate.
	c.retired.markAnswered(n)
	c.strictLocked("undecodable response: " + de.Reason)
	return true
}

// strictLocked ends the session on a bad line when Options.Strict is set.
func (c *Client) strictLocked(why string) {
	if !c.opts.Strict || c.dead != nil {
		return
	}
	c.breakLocked(newErr(CodeProtocol, "--strict: %s; closing the server", why))
}

// breakLocked marks the stream as untrustworthy: every pending request
// fails with err, new requests too, and the server is shut down.
func (c *Client) breakLocked(err *Error) {
	c.dead = err
	c.failAllLocked(err, StateProtocol)
	if conn := c.conn; conn != nil {
		if a, ok := conn.(interface{ Abort() error }); ok {
			go a.Abort() // no grace: the server's output is already untrustworthy
		} else {
			go conn.Close()
		}
	}
}

func (c *Client) lineTooLong(e *transport.LineTooLongError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Malformed++
	f := transport.Frame{Dir: transport.In, Time: time.Now(), Raw: e.Prefix, Err: e}
	c.hub.emitFrame(f, VerdictTooLong, fmt.Sprintf("line exceeds %d bytes (--max-line-bytes); the first %d bytes are shown", e.Limit, len(e.Prefix)))
	if c.dead == nil {
		c.breakLocked(newErr(CodeProtocol, "server wrote a line over %d bytes (--max-line-bytes); the stream cannot be trusted, closing the server", e.Limit))
	}
}

func (c *Client) responseLocked(f transport.Frame) {
	id := f.Msg.ID
	n, isInt := id.Int64()
	if !isInt {
		c.stats.Unknown++
		detail := "id " + id.String() + " was never sent"
		if s, ok := id.Str(); ok {
			if k, err := strconv.ParseInt(s, 10, 64); err == nil && k > 0 && k <= c.lastID {
				detail = fmt.Sprintf("id %s is a string; sonde sent the integer %d (ids keep their JSON type)", id, k)
			}
		} else if f.Msg.Error != nil {
			detail = "error response without an id: " + f.Msg.Error.Error()
		}
		c.hub.emitFrame(f, VerdictUnknown, detail)
		return
	}
	if p := c.pending[n]; p != nil {
		if p.expiring != nil {
			c.watch.heldResponseLocked(p, f)
			return
		}
		lat := f.Time.Sub(p.queuedAt)
		if f.Msg.Error != nil {
			c.hub.emitFrameDetail(f, VerdictRemoteError, answerSentence(VerdictRemoteError, "for id ", n, lat))
			c.settleLocked(p, outcome{state: StateError, err: remoteErr(f.Msg.Error)})
			return
		}
		if c.era.modernLocked() && c.era.modernResultLocked(f, p) {
			return
		}
		c.hub.emitFrameDetail(f, VerdictResolved, answerSentence(VerdictResolved, "id ", n, lat))
		c.settleLocked(p, outcome{state: StateResolved, result: f.Msg.Result})
		return
	}
	if ri, ok := c.retired.get(n); ok {
		ago := roundDur(max(f.Time.Sub(ri.at), 0))
		if ri.answered {
			c.stats.Duplicate++
			c.hub.emitFrame(f, VerdictDuplicate, fmt.Sprintf("second response for %s (already %s %s ago); ignored", idText(n), ri.state, ago))
			return
		}
		c.stats.Late++
		c.retired.markAnswered(n)
		detail := fmt.Sprintf("response for %s arrived %s after it ended (%s); ignored", idText(n), ago, ri.state)
		var late *Late
		if ri.state == StateTimeout {
			c.stats.LateTimeouts++
			lat := f.Time.Sub(ri.queued)
			late = &Late{ID: f.Msg.ID, Method: ri.method, Tool: ri.tool, AfterDeadline: max(f.Time.Sub(ri.due), 0), Latency: lat, Enough: enoughTimeout(lat), Error: f.Msg.Error != nil}
			detail += lateNote(late)
		}
		c.hub.emit(Event{Time: f.Time, Kind: EvFrame, Frame: &FrameInfo{Frame: f, Verdict: VerdictLate, Detail: detail, Late: late}})
		return
	}
	if n > 0 && n <= c.lastID {
		c.stats.Late++
		c.hub.emitFrame(f, VerdictLate, fmt.Sprintf("response for %s, retired long ago; ignored", idText(n)))
		return
	}
	c.stats.Unknown++
	c.hub.emitFrame(f, VerdictUnknown, fmt.Sprintf("%s was never sent; ignored", idText(n)))
}

func (c *Client) notificationLocked(f transport.Frame) {
	if c.flood.floodLocked(f) {
		return
	}
	if f.Msg.Method == mcp.MethodCancelled && c.srv.serverCancelLocked(f) {
		return
	}
	if f.Msg.Method != mcp.MethodProgress {
		c.hub.emitFrame(f, VerdictNotification, f.Msg.Method)
		return
	}
	var pp mcp.ProgressParams
	if err := json.Unmarshal(f.Msg.Params, &pp); err != nil {
		c.stats.Invalid++
		c.hub.emitFrame(f, VerdictInvalid, "progress notification with invalid params: "+err.Error())
		return
	}
	var tok jsonrpc.ID
	_ = json.Unmarshal(pp.ProgressToken, &tok)
	n, ok := tok.Int64()
	p := c.pending[n]
	if !ok || p == nil {
		c.hub.emitFrame(f, VerdictNotification, "progress for token "+string(pp.ProgressToken)+", which matches no pending request")
		return
	}
	c.stats.Progress++
	p.progressN++
	p.lastProgress = f.Time
	now := f.Time
	state, deadline := StateProgress, p.deadline
	switch {
	case p.held:
		// The clock stands still (HoldDeadlines): progress refills the
		// time left, and the request stays held.
		if c.opts.ResetOnProgress {
			p.left = p.timeout
			if !p.maxEnd.IsZero() {
				// The end moves by the time held when the clock runs again.
				p.left = min(p.left, p.maxEnd.Sub(c.hold.since))
			}
		}
		state, deadline = StateHeld, time.Time{}
	case c.opts.ResetOnProgress && p.expiring == nil: // after the deadline, progress moves nothing
		p.deadline = now.Add(p.timeout)
		if !p.maxEnd.IsZero() && p.deadline.After(p.maxEnd) {
			p.deadline = p.maxEnd
		}
		p.timer.Reset(time.Until(p.deadline))
		deadline = p.deadline
	}
	c.hub.emitFrameSentence(f, VerdictProgress, fmt.Sprintf("%s for %s", progressText(pp), idText(n)))
	c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{
		Dir: transport.Out, ID: jsonrpc.Int(p.id), Method: p.method, Tool: p.tool, State: state, Deadline: deadline,
		Latency: now.Sub(p.queuedAt), Progress: &Progress{Progress: pp.Progress, Total: pp.Total, Message: pp.Message},
	}})
}

func progressText(pp mcp.ProgressParams) string {
	s := strconv.FormatFloat(pp.Progress, 'f', -1, 64)
	if pp.Total != nil {
		s += "/" + strconv.FormatFloat(*pp.Total, 'f', -1, 64)
	}
	if pp.Message != "" {
		s += " (" + bounded(pp.Message, 80) + ")"
	}
	return s
}

// connEnded runs once, when the connection's reader ends: the process
// exited, or was closed. Every request still pending fails.
func (c *Client) connEnded(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var xe *transport.ExitError
	var e *Error
	if errors.As(err, &xe) {
		x := xe.Exit
		c.hub.emit(Event{Time: x.Time, Kind: EvProcess, Proc: &ProcInfo{What: ProcExit, Pid: x.Pid, Exit: &x}})
		e = exitErr(x, x.What())
	} else if ce := (*transport.ClosedError)(nil); errors.As(err, &ce) && !ce.BySonde {
		e = &Error{Code: CodeHTTP, Message: "connection to the server ended: " + ce.Reason, Err: err}
	} else {
		e = &Error{Code: CodeProcessExit, Message: "connection to the server ended: " + err.Error(), Err: err}
	}
	if c.dead == nil {
		c.dead = e
	}
	state := StateExited
	if e.Code == CodeHTTP {
		state = StateHTTP
	}
	if c.closed {
		e, state = newErr(CodeClosed, "client closed"), StateClosed
	}
	c.failAllLocked(e, state)
	c.out.stop()
}

// roundDur rounds a duration for display.
func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// exchangeFailed settles the request a failed HTTP exchange carried, with
// the code of the failure; a failure with no request (a notification's
// POST) becomes a note.
func (c *Client) exchangeFailed(xe *transport.ExchangeError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := exchangeErr(xe)
	if id, ok := xe.ID.Int64(); ok {
		if p := c.pending[id]; p != nil {
			state := StateError
			switch e.Code {
			case CodeProtocol:
				state = StateProtocol
			case CodeHTTP, CodeExpired:
				state = StateHTTP
			}
			c.settleLocked(p, outcome{state: state, err: e})
			return
		}
	}
	c.hub.emit(Event{Kind: EvNote, Note: e.Error()})
}
