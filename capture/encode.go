package capture

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// encoder turns events into records relative to a start time.
type encoder struct {
	start  time.Time
	redact *Redactor
}

func (e *encoder) off(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return int64(t.Sub(e.start))
}

// bytesField returns the bytes as a string field, base64 when they are not
// valid UTF-8, after redaction.
func (e *encoder) bytesField(b []byte) (s string, b64, redacted bool) {
	b, redacted = e.redact.Bytes(b)
	if utf8.Valid(b) {
		return string(b), false, redacted
	}
	return base64.StdEncoding.EncodeToString(b), true, redacted
}

// streamMin is the length from which a frame's raw bytes are written to
// the file apart from its record, escaped in place (Recorder.writeBigLocked)
// rather than copied into a string and encoded into a buffer.
const streamMin = 64 << 10

// bigRaw holds the raw bytes of a frame record written apart from it: after
// redaction, and base64 when they are not valid UTF-8 (Record.B64 says so).
type bigRaw struct {
	b   []byte
	b64 bool
}

// text is Record.Raw for these bytes, as bytesField gives it.
func (br *bigRaw) text() string {
	if br.b64 {
		return base64.StdEncoding.EncodeToString(br.b)
	}
	return string(br.b)
}

// Record converts one event. Its fields are copied: ev is not modified.
func (e *encoder) record(ev client.Event) Record {
	r, raw := e.recordBytes(ev, new(recScratch))
	r.Raw = raw.text() // "" but for a frame
	return r
}

// recScratch holds what a record's id and time pointers point to: the
// recorder, which writes each record before it converts the next event,
// keeps one instead of allocating them for every event.
type recScratch struct {
	id, retryOf      jsonrpc.ID
	deadline, maxEnd int64
}

// recordBytes converts one event as record does, except that a frame's
// bytes (after redaction) are left out of Raw and come back in raw (B64
// and Redacted set as for Raw), for the writer to escape straight from
// them instead of from a copy in a string; and that the record's ID,
// RetryOf, Deadline and MaxEnd point into sc.
func (e *encoder) recordBytes(ev client.Event, sc *recScratch) (r Record, raw bigRaw) {
	r = Record{Seq: ev.Seq, T: e.off(ev.Time)}
	switch ev.Kind {
	case client.EvFrame:
		raw = e.frameRec(&r, ev.Frame, sc)
	case client.EvRequest:
		e.requestRec(&r, ev.Req, sc)
	case client.EvStderr:
		r.Type = TypeStderr
		r.Size = len(ev.Stderr)
		r.Data, r.B64, r.Redacted = e.bytesField(ev.Stderr)
	case client.EvProcess:
		p := ev.Proc
		r.Type = TypeProcess
		r.What, r.Pid, r.Signal = string(p.What), p.Pid, p.Signal
		r.Argv, r.Redacted = e.redact.Strings(p.Argv)
		if p.Exit != nil {
			r.Exit = e.exitRec(p.Exit)
		}
		r.Err = e.errRec(p.Err)
	case client.EvNote:
		r.Type = TypeNote
		r.Note, r.Redacted = e.redact.String(ev.Note)
		r.Fault = faultRec(ev.Fault)
		var red bool
		if r.Hold, red = e.holdRec(ev.Hold); red {
			r.Redacted = true
		}
	case client.EvHTTP:
		r.Type = TypeHTTP
		r.HTTP, r.Redacted = e.httpRec(ev.HTTP)
	default:
		r.Type = TypeNote
		r.Note = "unknown event kind " + ev.Kind.String()
	}
	return r, raw
}

// frameRec fills r from frame f as recordBytes does, its bytes (after
// redaction) in the bigRaw it returns.
func (e *encoder) frameRec(r *Record, f *client.FrameInfo, sc *recScratch) (raw bigRaw) {
	r.Type = TypeFrame
	r.Dir = f.Dir.String()
	if f.Msg.ID.IsValid() {
		sc.id = f.Msg.ID
		r.ID = &sc.id
	}
	r.Method = f.Msg.Method
	r.Kind = f.Msg.Kind.String()
	r.Size = len(f.Raw)
	b, red := e.redact.Bytes(f.Raw)
	raw = bigRaw{b: b, b64: !utf8.Valid(b)}
	r.B64, r.Redacted = raw.b64, red
	r.Verdict = string(f.Verdict)
	var redacted bool
	r.Detail, redacted = e.redact.String(f.Detail)
	r.Redacted = r.Redacted || redacted
	r.Decode = decodeErr(f.Err, e.redact)
	r.Stream, r.EventID = f.Stream, f.EventID
	return raw
}

// requestRec fills r from request q as recordBytes does.
func (e *encoder) requestRec(r *Record, q *client.ReqInfo, sc *recScratch) {
	r.Type = TypeRequest
	r.Dir = q.Dir.String()
	if q.ID.IsValid() {
		sc.id = q.ID
		r.ID = &sc.id
	}
	r.Method, r.Tool, r.State = q.Method, q.Tool, string(q.State)
	if !q.Deadline.IsZero() {
		sc.deadline = e.off(q.Deadline)
		r.Deadline = &sc.deadline
	}
	r.Timeout = int64(q.Timeout)
	if !q.MaxEnd.IsZero() {
		sc.maxEnd = e.off(q.MaxEnd)
		r.MaxEnd = &sc.maxEnd
	}
	r.Latency = int64(q.Latency)
	if p := q.Progress; p != nil {
		msg, _ := e.redact.String(p.Message)
		r.Progress = &ProgressRec{Progress: p.Progress, Total: p.Total, Message: msg}
	}
	r.Err = e.errRec(q.Err)
	if q.RetryOf.IsValid() {
		sc.retryOf = q.RetryOf
		r.RetryOf = &sc.retryOf
	}
	if len(q.Params) > 0 {
		var red bool
		r.Params, red = e.redact.String(string(q.Params))
		r.Redacted = r.Redacted || red
	}
}

func decodeErr(err error, red *Redactor) *DecodeErr {
	if err == nil {
		return nil
	}
	var de *jsonrpc.DecodeError
	if errors.As(err, &de) {
		reason, _ := red.String(de.Reason)
		return &DecodeErr{Class: de.Class.String(), Reason: reason, Broken: brokenNames(de.Broken)}
	}
	var tl *client.LineTooLongError
	if errors.As(err, &tl) {
		return &DecodeErr{Class: classTooLong, Reason: tl.Error(), Limit: tl.Limit}
	}
	reason, _ := red.String(err.Error())
	return &DecodeErr{Class: "other", Reason: reason}
}

// classTooLong is DecodeErr.Class for a line over the size cap.
const classTooLong = "too-long"

func (e *encoder) errRec(err error) *ErrorRec {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		msg, _ := e.redact.String(ce.Message)
		out := &ErrorRec{Code: string(ce.Code), Message: msg, RPC: e.rpcRec(ce.RPC)}
		if ce.Exit != nil {
			// The stderr tail is in the process's exit record: a crash
			// with a thousand calls pending must not write it a thousand
			// times.
			x := *ce.Exit
			x.Stderr = nil
			out.Exit = e.exitRec(&x)
		}
		if ce.Snapshot != nil {
			if b, err := json.Marshal(ce.Snapshot); err == nil {
				text, _ := e.redact.String(string(b))
				out.Snapshot = json.RawMessage(text)
			}
		}
		return out
	}
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		msg, _ := e.redact.String(re.Message)
		return &ErrorRec{Message: msg, RPC: e.rpcRec(re)}
	}
	msg, _ := e.redact.String(err.Error())
	return &ErrorRec{Message: msg}
}

func (e *encoder) rpcRec(re *jsonrpc.Error) *jsonrpc.Error {
	if re == nil {
		return nil
	}
	out := *re
	out.Message, _ = e.redact.String(re.Message)
	if len(re.Data) > 0 {
		if d, changed := e.redact.Bytes(re.Data); changed {
			// Keep data valid JSON whatever the pattern cut: a redacted
			// datum becomes a string.
			out.Data = jsonString(string(d))
		}
	}
	return &out
}

func (e *encoder) exitRec(x *client.Exit) *ExitRec {
	out := &ExitRec{
		Pid: x.Pid, Code: x.Code, Signal: x.Signal, StderrDropped: x.StderrDropped,
		ByClose: x.ByClose, StdoutClosed: x.StdoutClosed, T: e.off(x.Time),
	}
	out.Stderr, out.StderrB64, _ = e.bytesField(x.Stderr)
	for _, l := range x.Left {
		name, _ := e.redact.String(l.Name)
		out.Left = append(out.Left, LeftRec{Pid: l.Pid, Name: name, State: string(l.State), CPU: int64(l.CPU), Wait: int64(l.Wait)})
	}
	return out
}

func (e *encoder) httpRec(h *client.HTTPEvent) (*HTTPRec, bool) {
	if h == nil {
		return &HTTPRec{}, false
	}
	out := &HTTPRec{Method: h.Method, Status: h.Status, Duration: int64(h.Duration), Stream: h.Stream, EventID: h.EventID, Problem: h.Problem}
	var changed, c bool
	out.URL, changed = e.redact.String(h.URL)
	out.Header, c = e.redact.HeaderLines(h.Header)
	changed = changed || c
	if h.ReqID.IsValid() {
		id := h.ReqID
		out.ReqID = &id
	}
	if len(h.Raw) > 0 {
		out.Raw, out.B64, c = e.bytesField(h.Raw)
		changed = changed || c
	}
	out.Note, c = e.redact.String(h.Note)
	return out, changed || c
}

// brokenNames returns the names written in a capture's decode_error.broken.
func brokenNames(b jsonrpc.Broken) []string {
	var out []string
	if b&jsonrpc.BrokenNullID != 0 {
		out = append(out, "null-id")
	}
	if b&jsonrpc.BrokenResultAndError != 0 {
		out = append(out, "result-and-error")
	}
	return out
}

// faultRec is the record of f (nil for none).
func faultRec(f *client.Fault) *FaultRec {
	if f == nil {
		return nil
	}
	r := &FaultRec{Rule: f.Rule, Action: f.Action, Dir: f.Dir.String(), Method: f.Method}
	if f.Kind != jsonrpc.KindInvalid {
		r.Kind = f.Kind.String()
	}
	if f.ID.IsValid() {
		id := f.ID
		r.ID = &id
	}
	return r
}
