package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
)

// Bounds of session_frames.
const (
	framesDefault = 20
	framesMax     = 200
)

func (s *Server) registerInspectTools() {
	addTool(s, &sdk.Tool{Name: "session_pending", Description: "Every request in flight on the session, both directions (sonde's and the server's own), by id: method, tool, state, age, deadline left, progress.",
		Annotations: readOnly("Requests in flight")}, s.sessionPending)
	addTool(s, &sdk.Tool{Name: "session_frames", Description: "The session's frames, newest first, as on the wire (escaped, secrets redacted, bodies cut with a marker), each with sonde's verdict; paged with before. filter is sonde's filter language (docs/filter.md), e.g. 'status:late', 'method:tools/call id:7', 'status:error'.",
		Annotations: readOnly("Frames")}, s.sessionFrames)
	addTool(s, &sdk.Tool{Name: "session_explain", Description: "The truth about one request by id: its state and latency, and for a timeout what sonde saw at the deadline (blocked write, busy, sleeping, stopped, dead; stdout, stderr, CPU), and a late answer's time after its deadline with the timeout that would have been enough.",
		Annotations: readOnly("Explain a request")}, s.sessionExplain)
}

type pendingReq struct {
	Dir          string   `json:"dir" jsonschema:"out: sonde's request; in: the server's request to sonde"`
	ID           string   `json:"id"`
	Method       string   `json:"method"`
	Tool         string   `json:"tool,omitempty"`
	State        string   `json:"state" jsonschema:"queued, sent, progress, held, received"`
	AgeMs        int64    `json:"ageMs"`
	DeadlineMs   *int64   `json:"deadlineLeftMs,omitempty" jsonschema:"time left before the deadline (negative: past it)"`
	Progress     *float64 `json:"progress,omitempty"`
	Total        *float64 `json:"total,omitempty"`
	ProgressNote string   `json:"progressMessage,omitempty"`
}

type pendingOut struct {
	Session string       `json:"session"`
	Pending []pendingReq `json:"pending"`
}

func (s *Server) sessionPending(_ context.Context, in sessionIn) (pendingOut, string, error) {
	sess, err := s.sessions.get(in.Session)
	if err != nil {
		return pendingOut{}, "", err
	}
	now := time.Now()
	out := pendingOut{Session: sess.id, Pending: []pendingReq{}}
	sess.log.withRequests(func(r *requests) {
		for k, st := range r.inFlight {
			q := st.info
			p := pendingReq{Dir: k.dir.String(), ID: serverString(sess.redact, k.id, 256), Method: serverString(sess.redact, q.Method, 256),
				Tool: serverString(sess.redact, q.Tool, 256), State: string(q.State), AgeMs: now.Sub(st.first).Milliseconds()}
			if !q.Deadline.IsZero() {
				left := q.Deadline.Sub(now).Milliseconds()
				p.DeadlineMs = &left
			}
			if pr := q.Progress; pr != nil {
				v := pr.Progress
				p.Progress, p.Total, p.ProgressNote = &v, pr.Total, serverString(sess.redact, pr.Message, maxLine)
			}
			out.Pending = append(out.Pending, p)
		}
	})
	sort.Slice(out.Pending, func(i, j int) bool { return out.Pending[i].AgeMs > out.Pending[j].AgeMs })
	if len(out.Pending) > framesMax {
		out.Pending = out.Pending[:framesMax]
	}
	if len(out.Pending) == 0 {
		return out, "nothing in flight on session " + sess.id, nil
	}
	var parts []string
	for _, p := range out.Pending[:min(len(out.Pending), 5)] {
		parts = append(parts, fmt.Sprintf("%s %s %s (%s, %dms)", p.Dir, p.ID, p.Method, p.State, p.AgeMs))
	}
	return out, fmt.Sprintf("%d in flight on session %s: %s", len(out.Pending), sess.id, strings.Join(parts, "; ")), nil
}

type framesIn struct {
	Session string `json:"session" jsonschema:"the session id session_start returned"`
	Filter  string `json:"filter,omitempty" jsonschema:"sonde's filter language (docs/filter.md): terms such as method:tools/call, id:7, status:late, dir:in, status:error, or plain text; all must match"`
	Limit   int    `json:"limit,omitempty" jsonschema:"frames at most (default 20, at most 200)"`
	Before  uint64 `json:"before,omitempty" jsonschema:"only frames older than this seq (the nextBefore of the previous page)"`
}

type frameOut struct {
	verdict
	Time  string `json:"time" jsonschema:"when sonde saw it (RFC 3339)"`
	Kind  string `json:"kind,omitempty" jsonschema:"request, response, error or notification"`
	Size  int    `json:"size" jsonschema:"the frame's size in bytes on the wire"`
	Body  string `json:"body" jsonschema:"the frame as on the wire, escaped, secrets redacted, cut with a marker"`
	Cut   bool   `json:"cut,omitempty"`
	Error string `json:"decodeError,omitempty" jsonschema:"why the frame is not valid JSON-RPC"`
}

type framesOut struct {
	Session    string     `json:"session"`
	Frames     []frameOut `json:"frames"`
	NextBefore uint64     `json:"nextBefore,omitempty" jsonschema:"give it as before for the next, older page (absent: no more)"`
	Dropped    uint64     `json:"dropped,omitempty" jsonschema:"older events no longer held"`
}

func (s *Server) sessionFrames(_ context.Context, in framesIn) (framesOut, string, error) {
	sess, err := s.sessions.get(in.Session)
	if err != nil {
		return framesOut{}, "", err
	}
	f, err := filter.Parse(in.Filter)
	if err != nil {
		return framesOut{}, "", fmt.Errorf("bad filter %q: %v; the language is in docs/filter.md (e.g. status:late dir:in)", in.Filter, err)
	}
	limit := in.Limit
	if limit <= 0 {
		limit = framesDefault
	}
	limit = min(limit, framesMax)
	out := framesOut{Session: sess.id, Frames: []frameOut{}}
	size, more := 0, false
	sess.log.frames(in.Before, func(ev client.Event, it filter.Item) bool {
		if !f.Match(&it) {
			return true
		}
		if len(out.Frames) == limit || size > maxAnswer {
			more = true
			return false
		}
		fo := frameJSON(sess, ev, it)
		size += len(fo.Body)
		out.Frames = append(out.Frames, fo)
		return true
	})
	if more && len(out.Frames) > 0 {
		out.NextBefore = out.Frames[len(out.Frames)-1].Seq
	}
	out.Dropped, _ = sess.log.evicted()
	summary := fmt.Sprintf("%d frames of session %s, newest first", len(out.Frames), sess.id)
	if out.NextBefore > 0 {
		summary += fmt.Sprintf("; more with before=%d", out.NextBefore)
	}
	return out, summary, nil
}

func frameJSON(sess *session, ev client.Event, it filter.Item) frameOut {
	f := ev.Frame
	fo := frameOut{verdict: frameVerdict(sess, ev, filter.ProblemVerdict(f.Verdict)), Time: f.Time.UTC().Format(time.RFC3339Nano), Kind: it.Kind, Size: len(f.Raw)}
	if fo.Method == "" {
		fo.Method = serverString(sess.redact, it.Method, 256)
	}
	fo.Body, fo.Cut = serverText(sess.redact, f.Raw, maxBody)
	if f.Err != nil {
		fo.Error = serverString(sess.redact, f.Err.Error(), maxLine)
	}
	return fo
}

type explainIn struct {
	Session string `json:"session" jsonschema:"the session id session_start returned"`
	ID      string `json:"id" jsonschema:"the request id as session_call or session_frames gave it: 7, or \"abc\" with its quotes for a string id"`
}

type explainOut struct {
	Session   string   `json:"session"`
	ID        string   `json:"id"`
	Dir       string   `json:"dir"`
	Method    string   `json:"method"`
	Tool      string   `json:"tool,omitempty"`
	State     string   `json:"state"`
	LatencyMs *float64 `json:"latencyMs,omitempty"`
	Error     *errInfo `json:"error,omitempty"`
	// The timeout's snapshot.
	Kind     string   `json:"snapshot,omitempty" jsonschema:"what the server was doing at the deadline: blocked, busy, sleeping, stopped, dead, no-headers, stream-open, unknown"`
	Why      string   `json:"why" jsonschema:"the truth in one sentence"`
	Evidence []string `json:"evidence,omitempty" jsonschema:"the snapshot's lines: the write, stdout, stderr, progress, the process and its CPU"`
	// A late answer.
	LateAfterMs   *float64 `json:"lateAfterDeadlineMs,omitempty" jsonschema:"a late answer: how long after the deadline it came"`
	EnoughTimeout string   `json:"enoughTimeout,omitempty" jsonschema:"a late answer: the timeout that would have been enough"`
}

func (s *Server) sessionExplain(_ context.Context, in explainIn) (explainOut, string, error) {
	sess, err := s.sessions.get(in.Session)
	if err != nil {
		return explainOut{}, "", err
	}
	var st reqState
	found := false
	sess.log.withRequests(func(r *requests) {
		for _, id := range []string{in.ID, fmt.Sprintf("%q", in.ID)} { // "abc" given without its quotes
			if p, ok := r.find(id); ok {
				st, found = *p, true
				return
			}
		}
	})
	if !found {
		return explainOut{}, "", fmt.Errorf("no request %s on session %s (not sent, or no longer held: the last %d settled are): session_frames lists the ids", in.ID, sess.id, keptFinals)
	}
	return explain(sess, st)
}

func explain(sess *session, st reqState) (explainOut, string, error) {
	q := st.info
	out := explainOut{Session: sess.id, ID: serverString(sess.redact, q.ID.String(), 256), Dir: q.Dir.String(), Method: serverString(sess.redact, q.Method, 256),
		Tool: serverString(sess.redact, q.Tool, 256), State: string(q.State), Error: errorInfo(sess, q.Err)}
	if q.State.Final() {
		ms := float64(q.Latency.Microseconds()) / 1000
		out.LatencyMs = &ms
	}
	switch snap := client.TimeoutSnapshot(q.Err); {
	case snap != nil:
		out.Kind = string(snap.Kind)
		out.Why = serverString(sess.redact, snap.Summary(), maxLine)
		for _, ln := range snap.Lines() {
			out.Evidence = append(out.Evidence, serverString(sess.redact, ln, maxLine))
		}
	case !q.State.Final():
		out.Why = fmt.Sprintf("still in flight (%s), for %s", q.State, since(time.Since(st.first)))
		if !q.Deadline.IsZero() {
			out.Why += fmt.Sprintf("; the deadline is in %s", since(time.Until(q.Deadline)))
		}
	case q.Err != nil:
		out.Why = fmt.Sprintf("%s after %s: %s", q.State, since(q.Latency), out.Error.Message)
	default:
		out.Why = fmt.Sprintf("%s after %s", q.State, since(q.Latency))
	}
	if l := st.late; l != nil {
		after := float64(l.AfterDeadline.Microseconds()) / 1000
		out.LateAfterMs, out.EnoughTimeout = &after, l.Enough.String()
		out.Why += fmt.Sprintf("; the answer came late, %s after the deadline (a timeout of %s would have been enough)", since(l.AfterDeadline), l.Enough)
	}
	if out.Why == "" {
		return out, "", errors.New("nothing known of this request")
	}
	return out, fmt.Sprintf("%s id %s: %s", out.Method, out.ID, out.Why), nil
}
