package capture

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// jsonString returns s as a JSON string value.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// Time returns the absolute time of an offset (a record's T).
func (h Header) Time(t int64) time.Time { return h.Start.Add(time.Duration(t)) }

// Bytes returns a record's Raw (frames) or Data (stderr) as bytes, decoding
// base64 when B64 is set.
func (rec Record) Bytes() ([]byte, error) {
	s := rec.Raw
	if rec.Type == TypeStderr {
		s = rec.Data
	}
	return decodeBytes(s, rec.B64)
}

func decodeBytes(s string, b64 bool) ([]byte, error) {
	if !b64 {
		return []byte(s), nil
	}
	return base64.StdEncoding.DecodeString(s)
}

// Event converts a record back into the client event it was written from.
// ok is false for the recorder's own records (session, missed, restart, end)
// and for a record whose bytes are not valid base64 (err says why). Times
// are absolute again (Header.Start plus the offset); errors are rebuilt as
// *client.Error (matching the same sentinels), *jsonrpc.Error,
// *jsonrpc.DecodeError or *client.LineTooLongError as they were; a frame's
// Msg is decoded from its bytes, with the recorded kind, id and method (which
// hold even when redaction changed the bytes).
func (h Header) Event(rec Record) (ev client.Event, ok bool, err error) {
	ev = client.Event{Seq: rec.Seq, Time: h.Time(rec.T)}
	switch rec.Type {
	case TypeFrame:
		fi, err := frameInfo(&rec, ev.Time)
		if err != nil {
			return client.Event{}, false, err
		}
		ev.Kind, ev.Frame = client.EvFrame, fi
	case TypeRequest:
		ev.Kind, ev.Req = client.EvRequest, h.reqInfo(&rec)
	case TypeStderr:
		data, err := decodeBytes(rec.Data, rec.B64)
		if err != nil {
			return client.Event{}, false, &FormatError{Line: rec.Line, Offset: rec.Offset, Kind: ErrBadRecord, Reason: "data: " + err.Error()}
		}
		ev.Kind, ev.Stderr = client.EvStderr, data
	case TypeProcess:
		p := &client.ProcInfo{What: client.ProcKind(rec.What), Pid: rec.Pid, Argv: rec.Argv, Signal: rec.Signal, Err: h.errOf(rec.Err)}
		p.Exit = h.exitOf(rec.Exit)
		ev.Kind, ev.Proc = client.EvProcess, p
	case TypeNote:
		ev.Kind, ev.Note, ev.Fault, ev.Hold = client.EvNote, rec.Note, faultOf(rec.Fault), holdOf(rec.Hold)
		if ev.Fault == nil && h.before(1, 4) {
			ev.Fault = legacyFault(rec.Note)
		}
	case TypeHTTP:
		he, err := h.httpEvent(&rec)
		if err != nil {
			return client.Event{}, false, err
		}
		ev.Kind, ev.HTTP = client.EvHTTP, he
	default:
		return client.Event{}, false, nil
	}
	return ev, true, nil
}

// frameInfo is a frame record's client.FrameInfo, at time t.
func frameInfo(rec *Record, t time.Time) (*client.FrameInfo, error) {
	raw, err := decodeBytes(rec.Raw, rec.B64)
	if err != nil {
		return nil, &FormatError{Line: rec.Line, Offset: rec.Offset, Kind: ErrBadRecord, Reason: "raw: " + err.Error()}
	}
	f := client.Frame{Dir: parseDir(rec.Dir), Time: t, Raw: raw}
	f.Msg, _ = jsonrpc.Decode(raw)
	f.Msg.Kind = parseKind(rec.Kind)
	f.Msg.ID = jsonrpc.ID{}
	if rec.ID != nil {
		f.Msg.ID = *rec.ID
	}
	f.Msg.Method = rec.Method
	f.Err = rec.Decode.err(raw)
	f.Stream, f.EventID = rec.Stream, rec.EventID
	fi := &client.FrameInfo{Frame: f, Verdict: client.Verdict(rec.Verdict), Detail: rec.Detail}
	fi.VerdictInDetail, fi.InputRequired = frameFlags(fi)
	return fi, nil
}

// reqInfo is a request record's client.ReqInfo.
func (h Header) reqInfo(rec *Record) *client.ReqInfo {
	q := &client.ReqInfo{
		Dir: parseDir(rec.Dir), Method: rec.Method, Tool: rec.Tool, State: client.State(rec.State),
		Latency: time.Duration(rec.Latency),
	}
	if rec.ID != nil {
		q.ID = *rec.ID
	}
	if rec.Deadline != nil {
		q.Deadline = h.Time(*rec.Deadline)
	}
	q.Timeout = time.Duration(rec.Timeout)
	if rec.MaxEnd != nil {
		q.MaxEnd = h.Time(*rec.MaxEnd)
	}
	if p := rec.Progress; p != nil {
		q.Progress = &client.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message}
	}
	q.Err = h.errOf(rec.Err)
	if rec.RetryOf != nil {
		q.RetryOf = *rec.RetryOf
	}
	if rec.Params != "" {
		q.Params = json.RawMessage(rec.Params)
	}
	return q
}

// httpEvent is an HTTP record's client.HTTPEvent.
func (h Header) httpEvent(rec *Record) (*client.HTTPEvent, error) {
	noFlag := h.before(1, 2)
	hr := rec.HTTP
	if hr == nil {
		hr = &HTTPRec{}
	}
	raw, err := decodeBytes(hr.Raw, hr.B64)
	if err != nil {
		return nil, &FormatError{Line: rec.Line, Offset: rec.Offset, Kind: ErrBadRecord, Reason: "http raw: " + err.Error()}
	}
	if len(raw) == 0 {
		raw = nil
	}
	he := &client.HTTPEvent{
		Method: hr.Method, URL: hr.URL, Status: hr.Status, Header: hr.Header, Duration: time.Duration(hr.Duration),
		Stream: hr.Stream, EventID: hr.EventID, Raw: raw, Note: hr.Note, Problem: hr.Problem,
	}
	if noFlag && hr.Method == "" {
		he.Problem = legacyProblem(hr.Note)
	}
	if hr.ReqID != nil {
		he.ReqID = *hr.ReqID
	}
	return he, nil
}

// frameFlags gives a recorded frame the typed fields a capture does not
// store because its other fields hold them: a detail that starts with the
// verdict's word and a space is the client's sentence form
// (client.FrameInfo.VerdictInDetail: the client writes it for resolved,
// error and progress frames only, and no other detail starts that way); a
// resolved response whose result's resultType is input_required, without
// that sentence (a legacy-era client settles it as any result), is one the
// client retried (client.FrameInfo.InputRequired).
func frameFlags(f *client.FrameInfo) (verdictInDetail, inputRequired bool) {
	verdictInDetail = f.Verdict != "" && strings.HasPrefix(f.Detail, string(f.Verdict)+" ")
	if f.Verdict == client.VerdictResolved && !verdictInDetail && len(f.Msg.Result) > 0 {
		var probe struct {
			ResultType string `json:"resultType"`
		}
		inputRequired = json.Unmarshal(f.Msg.Result, &probe) == nil && probe.ResultType == mcp.ResultInputRequired
	}
	return verdictInDetail, inputRequired
}

// before reports whether the file's format version is older than
// major.minor (a header that does not parse counts as current).
func (h Header) before(major, minor int) bool {
	ma, mi, ok := parseVersion(h.Version)
	return ok && (ma < major || ma == major && mi < minor)
}

// legacyProblem tells, for a file older than 1.2 (which has no "problem"
// field), whether a stream note was a failure, by the words sonde 1.1 and
// earlier wrote for those notes (a stream that broke or ended before its
// response, an event not dispatched).
func legacyProblem(note string) bool {
	return strings.Contains(note, "before the response") || strings.Contains(note, "broke") ||
		strings.Contains(note, "not dispatched")
}

func parseDir(s string) client.Direction {
	switch s {
	case DirIn:
		return client.In
	case DirOut:
		return client.Out
	}
	return 0
}

func parseKind(s string) jsonrpc.Kind {
	switch s {
	case KindRequest:
		return jsonrpc.KindRequest
	case KindNotification:
		return jsonrpc.KindNotification
	case KindResponse:
		return jsonrpc.KindResponse
	}
	return jsonrpc.KindInvalid
}

func parseClass(s string) jsonrpc.Class {
	for _, c := range []jsonrpc.Class{jsonrpc.ClassNotJSON, jsonrpc.ClassNotObject, jsonrpc.ClassInvalid} {
		if c.String() == s {
			return c
		}
	}
	return 0
}

// broken reads decode_error.broken, or for a capture that did not record
// it, the rules its reason names.
func (d *DecodeErr) broken() jsonrpc.Broken {
	if d.Broken == nil {
		return jsonrpc.BrokenIn(d.Reason)
	}
	var b jsonrpc.Broken
	for _, n := range d.Broken {
		switch n {
		case "null-id":
			b |= jsonrpc.BrokenNullID
		case "result-and-error":
			b |= jsonrpc.BrokenResultAndError
		}
	}
	return b
}

func (d *DecodeErr) err(raw []byte) error {
	if d == nil {
		return nil
	}
	if d.Class == classTooLong {
		return &client.LineTooLongError{Limit: d.Limit, Prefix: raw}
	}
	if c := parseClass(d.Class); c != 0 {
		return &jsonrpc.DecodeError{Class: c, Reason: d.Reason, Broken: d.broken()}
	}
	return errors.New(d.Reason)
}

func (h Header) errOf(e *ErrorRec) error {
	if e == nil {
		return nil
	}
	if e.Code != "" {
		ce := &client.Error{Code: client.Code(e.Code), Message: e.Message, RPC: e.RPC, Exit: h.exitOf(e.Exit)}
		if len(e.Snapshot) > 0 {
			var s client.Snapshot
			if json.Unmarshal(e.Snapshot, &s) == nil {
				ce.Snapshot = &s
			}
		}
		return ce
	}
	if e.RPC != nil {
		return e.RPC
	}
	return errors.New(e.Message)
}

func (h Header) exitOf(x *ExitRec) *client.Exit {
	if x == nil {
		return nil
	}
	stderr, err := decodeBytes(x.Stderr, x.StderrB64)
	if err != nil {
		stderr = []byte(x.Stderr)
	}
	if len(stderr) == 0 {
		stderr = nil
	}
	out := &client.Exit{
		Pid: x.Pid, Code: x.Code, Signal: x.Signal, Stderr: stderr, StderrDropped: x.StderrDropped,
		ByClose: x.ByClose, StdoutClosed: x.StdoutClosed, Time: h.Time(x.T),
	}
	for _, l := range x.Left {
		out.Left = append(out.Left, client.ProcStat{Pid: l.Pid, Name: l.Name, State: client.ProcState(l.State), CPU: time.Duration(l.CPU), Wait: time.Duration(l.Wait)})
	}
	return out
}
