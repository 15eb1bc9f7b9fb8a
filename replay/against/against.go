// Package redrive re-sends the client requests of a capture to a live
// server and compares the new responses with the recorded ones: a
// structural JSON diff that ignores volatile fields, and changes of kind (a
// result that is now an error, a timeout, a failure). docs/replay.md
// describes the rules.
package against

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// Outcome kinds.
const (
	KindResult  = "result"  // a JSON-RPC result
	KindError   = "error"   // a JSON-RPC error
	KindTimeout = "timeout" // no response before the deadline (MCP_TIMEOUT)
	KindFailed  = "failed"  // another failure (Code says which)
	KindNone    = "none"    // the capture has no outcome (it was cut)
)

// Outcome is how one request ended.
type Outcome struct {
	Kind   string          `json:"kind"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
	// Code and Message describe a timeout or failure (a sonde error code).
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// String describes the outcome in a few words.
func (o Outcome) String() string {
	switch o.Kind {
	case KindResult:
		return "a result"
	case KindError:
		if o.Error != nil {
			return fmt.Sprintf("error %s %q", mcp.CodeText(o.Error.Code), o.Error.Message)
		}
		return "an error"
	case KindTimeout:
		return "a timeout (MCP_TIMEOUT)"
	case KindFailed:
		return "a failure (" + o.Code + ": " + o.Message + ")"
	}
	return "no recorded outcome"
}

// Request is a recorded client request to send again.
type Request struct {
	// Index counts the re-sent requests from 1.
	Index  int
	ID     jsonrpc.ID // the recorded id
	Method string
	Tool   string
	// Params are the recorded params without _meta.progressToken (the
	// client sets its own).
	Params json.RawMessage
	// Progress is set when the recorded request asked for progress.
	Progress bool
	// At is when it was sent, after the first re-sent request.
	At time.Duration
	// Timeout is the recorded request's deadline (0: unknown).
	Timeout  time.Duration
	Recorded Outcome
	// Cancel, when Cancelled, is when the recording's user cancelled it
	// (after the first re-sent request, like At): the re-drive cancels it
	// then too.
	Cancel    time.Duration
	Cancelled bool
}

// Script is what a capture holds for a re-drive: the handshake it asked
// for, the requests to send again in order, and the recorded answers to
// the server's own requests.
type Script struct {
	// ProtocolVersion is what the recorded initialize asked for.
	ProtocolVersion string
	// Capabilities are the client capabilities the recorded initialize
	// declared (nil when it is not in the capture).
	Capabilities json.RawMessage
	// Answers are the recorded answers to the server's requests, by
	// method, in order (at most maxAnswers each).
	Answers  map[string][]json.RawMessage
	Requests []*Request
	Warnings []string
}

// maxAnswers bounds the recorded answers kept per method.
const maxAnswers = 256

// Load reads a capture: the client's requests (initialize apart), their
// pacing, deadlines and recorded outcomes.
func Load(r io.Reader) (*Script, error) {
	rd, err := capture.NewReader(r)
	if err != nil {
		return nil, err
	}
	l := &loader{
		s:          &Script{Answers: map[string][]json.RawMessage{}},
		byID:       map[string]*Request{},
		queued:     map[string]int64{},
		serverReqs: map[string]string{},
	}
	for rec, err := range rd.Good(&l.s.Warnings) {
		if err != nil {
			return nil, err
		}
		l.record(&rec)
	}
	l.s.Warnings = append(l.s.Warnings, rd.Warnings()...)
	return l.s, nil
}

// loader is Load's state while it reads a capture.
type loader struct {
	s          *Script
	gen        int // restarts so far
	byID       map[string]*Request
	queued     map[string]int64
	serverReqs map[string]string // the server's requests by id: their method
	t0         int64
}

// key names a request id within its server generation.
func (l *loader) key(id *jsonrpc.ID) string { return strconv.Itoa(l.gen) + " " + id.String() }

// record takes one capture record.
func (l *loader) record(rec *capture.Record) {
	switch {
	case rec.Type == capture.TypeRestart:
		l.gen++
	case rec.Type == capture.TypeFrame && rec.Dir == capture.DirOut && rec.Kind == capture.KindRequest && rec.ID != nil:
		l.request(rec)
	case rec.Type == capture.TypeFrame && rec.Dir == capture.DirIn && rec.Kind == capture.KindResponse && rec.ID != nil:
		l.response(rec)
	case rec.Type == capture.TypeFrame && rec.Dir == capture.DirIn && rec.Kind == capture.KindRequest && rec.ID != nil:
		l.serverReqs[l.key(rec.ID)] = rec.Method
	case rec.Type == capture.TypeFrame && rec.Dir == capture.DirOut && rec.Kind == capture.KindResponse && rec.ID != nil:
		l.answer(rec)
	case rec.Type == capture.TypeRequest && rec.Dir == capture.DirOut && rec.ID != nil:
		l.lifecycle(rec)
	}
}

// request takes a request the client sent: initialize's version and
// capabilities, or a request to send again.
func (l *loader) request(rec *capture.Record) {
	s := l.s
	raw, err := rec.Bytes()
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("capture line %d: %v", rec.Line, err))
		return
	}
	msg, _ := jsonrpc.Decode(raw)
	if rec.Method == mcp.MethodInitialize {
		var p struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
		}
		if json.Unmarshal(msg.Params, &p) == nil && s.ProtocolVersion == "" {
			s.ProtocolVersion, s.Capabilities = p.ProtocolVersion, p.Capabilities
		}
		return
	}
	if len(s.Requests) == 0 {
		l.t0 = rec.T
	}
	q := &Request{Index: len(s.Requests) + 1, ID: *rec.ID, Method: rec.Method, At: time.Duration(max(rec.T-l.t0, 0)), Recorded: Outcome{Kind: KindNone}}
	q.Params, q.Progress = stripToken(msg.Params)
	if rec.Method == mcp.MethodToolsCall {
		var p mcp.CallToolParams
		_ = json.Unmarshal(msg.Params, &p)
		q.Tool = p.Name
	}
	if qt, ok := l.queued[l.key(rec.ID)]; ok {
		q.Timeout = time.Duration(qt)
	}
	s.Requests = append(s.Requests, q)
	l.byID[l.key(rec.ID)] = q
}

// response takes the server's answer to a request: its recorded outcome.
func (l *loader) response(rec *capture.Record) {
	q := l.byID[l.key(rec.ID)]
	if q == nil || (rec.Verdict != string(client.VerdictResolved) && rec.Verdict != string(client.VerdictRemoteError)) {
		return
	}
	raw, err := rec.Bytes()
	if err != nil {
		return
	}
	msg, _ := jsonrpc.Decode(raw)
	if msg.Error != nil {
		q.Recorded = Outcome{Kind: KindError, Error: msg.Error}
	} else {
		q.Recorded = Outcome{Kind: KindResult, Result: msg.Result}
	}
}

// answer takes the client's answer to a server's request.
func (l *loader) answer(rec *capture.Record) {
	method := l.serverReqs[l.key(rec.ID)]
	raw, err := rec.Bytes()
	if method == "" || err != nil || len(l.s.Answers[method]) >= maxAnswers {
		return
	}
	if msg, _ := jsonrpc.Decode(raw); msg.Error == nil && len(msg.Result) > 0 {
		l.s.Answers[method] = append(l.s.Answers[method], msg.Result)
	}
}

// lifecycle takes a request's lifecycle record: its deadline when queued,
// its cancel, or an outcome no answer frame tells (a timeout, a failure).
func (l *loader) lifecycle(rec *capture.Record) {
	if rec.State == string(client.StateQueued) && rec.Deadline != nil {
		l.queued[l.key(rec.ID)] = *rec.Deadline - rec.T
	}
	q := l.byID[l.key(rec.ID)]
	if q != nil && rec.State == string(client.StateCancelled) {
		q.Cancel, q.Cancelled = time.Duration(max(rec.T-l.t0, 0)), true
	}
	if q == nil || rec.Err == nil {
		return
	}
	switch client.State(rec.State) {
	case client.StateTimeout:
		q.Recorded = Outcome{Kind: KindTimeout, Code: rec.Err.Code, Message: rec.Err.Message}
	case client.StateError, client.StateResolved:
	default:
		if client.State(rec.State).Final() {
			q.Recorded = Outcome{Kind: KindFailed, Code: rec.Err.Code, Message: rec.Err.Message}
		}
	}
}

// stripToken removes _meta.progressToken from params (and _meta when it is
// left empty), and reports whether there was one.
func stripToken(params json.RawMessage) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(params, &obj) != nil || obj == nil {
		return params, false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(obj["_meta"], &meta) != nil || meta == nil {
		return params, false
	}
	if _, ok := meta["progressToken"]; !ok {
		return params, false
	}
	delete(meta, "progressToken")
	if len(meta) == 0 {
		delete(obj, "_meta")
	} else {
		obj["_meta"], _ = json.Marshal(meta)
	}
	out, _ := json.Marshal(obj)
	return out, true
}

// Options configure Run.
type Options struct {
	// Speed divides the recorded delays between requests; 0 sends them
	// all at once.
	Speed float64
	// Timeout, when set, is every request's deadline instead of the
	// recorded one.
	Timeout time.Duration
	// Ignore are paths left out of the diff, besides the volatile keys.
	Ignore []Path
}

// Result is the comparison of one request.
type Result struct {
	Index      int        `json:"index"`
	Method     string     `json:"method"`
	Tool       string     `json:"tool,omitempty"`
	RecordedID jsonrpc.ID `json:"recorded_id"`
	ID         jsonrpc.ID `json:"id"`
	// Status is "equal", "different" or "skipped" (no recorded outcome).
	Status string `json:"status"`
	// Change says how the outcome changed in kind ("" when it did not).
	Change   string  `json:"change,omitempty"`
	Recorded Outcome `json:"recorded"`
	Now      Outcome `json:"now"`
	Diffs    []Diff  `json:"diffs,omitempty"`
}

// Statuses of a Result.
const (
	StatusEqual     = "equal"
	StatusDifferent = "different"
	StatusSkipped   = "skipped"
)

// Report is the outcome of a re-drive.
type Report struct {
	// Equal is true when no request is different.
	Equal   bool     `json:"equal"`
	Results []Result `json:"requests"`
}

// Counts returns how many results have each status.
func (r *Report) Counts() (equal, different, skipped int) {
	for _, x := range r.Results {
		switch x.Status {
		case StatusEqual:
			equal++
		case StatusDifferent:
			different++
		default:
			skipped++
		}
	}
	return
}

// Run sends s's requests to c (connected and initialized) with their
// recorded pacing, waits for every outcome, and compares each with the
// recorded one. It returns ctx's error if ctx ends first.
func Run(ctx context.Context, c *client.Client, s *Script, o Options) (*Report, error) {
	calls := make([]*client.Call, len(s.Requests))
	var wg sync.WaitGroup
	start := time.Now()
	for i, q := range s.Requests {
		if o.Speed > 0 {
			if !sleepUntil(ctx, start.Add(time.Duration(float64(q.At)/o.Speed))) {
				break
			}
		}
		timeout := q.Timeout
		if o.Timeout > 0 {
			timeout = o.Timeout
		}
		var params any
		if len(q.Params) > 0 {
			params = q.Params
		}
		cctx, cancel := context.WithCancel(ctx)
		calls[i] = c.Go(cctx, q.Method, params, client.CallOptions{Timeout: timeout, Tool: q.Tool, ProgressToken: q.Progress})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel()
			if q.Cancelled {
				// The recording's user cancelled it: so does the re-drive,
				// at the same offset (scaled like the pacing; at once after
				// the recorded wait without pacing).
				at := time.Now().Add(q.Cancel - q.At)
				if o.Speed > 0 {
					at = start.Add(time.Duration(float64(q.Cancel) / o.Speed))
				}
				select {
				case <-calls[i].Done():
				case <-time.After(time.Until(at)):
					cancel()
				}
			}
			calls[i].Wait()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &Report{Equal: true}
	for i, q := range s.Requests {
		raw, err := calls[i].Wait()
		r := Result{Index: q.Index, Method: q.Method, Tool: q.Tool, RecordedID: q.ID, ID: calls[i].ID, Recorded: q.Recorded, Now: outcomeOf(raw, err)}
		compareOutcomes(&r, o.Ignore)
		if r.Status == StatusDifferent {
			rep.Equal = false
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// outcomeOf classifies a live call's outcome.
func outcomeOf(raw json.RawMessage, err error) Outcome {
	if err == nil {
		return Outcome{Kind: KindResult, Result: raw}
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		switch {
		case ce.RPC != nil && errors.Is(ce, client.ErrRemote): // MCP_ERROR, MCP_URL_REQUIRED
			return Outcome{Kind: KindError, Error: ce.RPC}
		case ce.Code == client.CodeTimeout:
			return Outcome{Kind: KindTimeout, Code: string(ce.Code), Message: ce.Message}
		}
		return Outcome{Kind: KindFailed, Code: string(ce.Code), Message: ce.Message}
	}
	return Outcome{Kind: KindFailed, Message: err.Error()}
}

// compareOutcomes fills r's Status, Change and Diffs.
func compareOutcomes(r *Result, ignore []Path) {
	a, b := r.Recorded, r.Now
	switch {
	case a.Kind == KindNone:
		r.Status = StatusSkipped
		return
	case a.Kind != b.Kind, a.Kind == KindFailed && a.Code != b.Code:
		r.Status = StatusDifferent
		r.Change = "was " + a.String() + ", now " + b.String()
		return
	case a.Kind == KindResult:
		r.Diffs = compare("result", a.Result, b.Result, ignore)
	case a.Kind == KindError:
		r.Diffs = compare("error", errJSON(a.Error), errJSON(b.Error), ignore)
	}
	r.Status = StatusEqual
	if len(r.Diffs) > 0 {
		r.Status = StatusDifferent
	}
}

func errJSON(e *jsonrpc.Error) json.RawMessage {
	b, _ := json.Marshal(e)
	return b
}

// WriteText prints the report for a person: one line per request, its
// differences indented under it, and a summary line.
func (r *Report) WriteText(w io.Writer) {
	for _, x := range r.Results {
		what := x.Method
		if x.Tool != "" {
			what += " " + x.Tool
		}
		fmt.Fprintf(w, "#%d %s (recorded id %s, now id %s): %s", x.Index, what, x.RecordedID, x.ID, x.Status)
		if x.Change != "" {
			fmt.Fprintf(w, ": %s", x.Change)
		}
		fmt.Fprintln(w)
		for _, d := range x.Diffs {
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
	eq, diff, skip := r.Counts()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d requests: %d equal, %d different", len(r.Results), eq, diff)
	if skip > 0 {
		fmt.Fprintf(&b, ", %d skipped (no recorded outcome)", skip)
	}
	fmt.Fprintln(w, b.String())
}

// ServerRequests declares the capture's client capabilities (roots,
// sampling, elicitation, tasks) so the server offers what it offered then,
// and answers the server's requests with the recorded answers, in order
// per method (the last again once they run out; an error when the capture
// holds none). It is nil when the capture has no initialize.
func (s *Script) ServerRequests() *client.ServerRequests {
	if len(s.Capabilities) == 0 {
		return nil
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(s.Capabilities, &caps) != nil {
		return nil
	}
	has := func(k string) bool { _, ok := caps[k]; return ok }
	sr := &client.ServerRequests{Roots: has("roots"), Sampling: has("sampling"), Elicitation: has("elicitation"), Tasks: has("tasks")}
	if rs := s.Answers[mcp.MethodRootsList]; len(rs) > 0 {
		var r struct {
			Roots []mcp.Root `json:"roots"`
		}
		if json.Unmarshal(rs[len(rs)-1], &r) == nil {
			sr.RootList = r.Roots
		}
	}
	var mu sync.Mutex
	next := map[string]int{}
	sr.Handler = func(r client.ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
		mu.Lock()
		defer mu.Unlock()
		rs := s.Answers[r.Method]
		if len(rs) == 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "sonde replay --against: the capture holds no answer to " + r.Method}, true
		}
		i := min(next[r.Method], len(rs)-1)
		next[r.Method]++
		return rs[i], nil, true
	}
	return sr
}
