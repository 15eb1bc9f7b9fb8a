package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// maxTimeout bounds a request's timeout.
const maxTimeout = 10 * time.Minute

// settleWait bounds how long an answer waits for the log to hold its
// request's outcome (the log is fed by its own goroutine).
const settleWait = 5 * time.Second

func (s *Server) registerExchangeTools() {
	addTool(s, &sdk.Tool{Name: "session_call", Description: "Call a tool of the session's server (tools/call) and say what sonde saw: the result, isError, the request id, the latency, and the verdicts of the exchange (late, duplicate or unknown-id answers, malformed frames, protocol violations seen meanwhile). A timeout is an answer too: state timeout, with why (session_explain has the whole snapshot).",
		Annotations: acting("Call a tool", true, false)}, s.sessionCall)
	addTool(s, &sdk.Tool{Name: "session_request", Description: "Send any request to the session's server (resources/read, prompts/get, ping, completion/complete, logging/setLevel, tools/list...) and say what sonde saw, as session_call does.",
		Annotations: acting("Send a request", true, false)}, s.sessionRequest)
}

type callIn struct {
	Session   string         `json:"session" jsonschema:"the session id session_start returned"`
	Tool      string         `json:"tool" jsonschema:"the tool's name"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"the tool's arguments"`
	Timeout   string         `json:"timeout,omitempty" jsonschema:"the request's deadline, a duration such as 500ms or 30s (default 30s)"`
}

type requestIn struct {
	Session string         `json:"session" jsonschema:"the session id session_start returned"`
	Method  string         `json:"method" jsonschema:"the method, e.g. resources/read, prompts/get, ping"`
	Params  map[string]any `json:"params,omitempty" jsonschema:"the request's params"`
	Timeout string         `json:"timeout,omitempty" jsonschema:"the request's deadline, a duration such as 500ms or 30s (default 30s)"`
}

// verdict is one frame's verdict, as the Frames pane shows it.
type verdict struct {
	Seq     uint64 `json:"seq" jsonschema:"the event's number in the session (session_frames' before takes it)"`
	Dir     string `json:"dir" jsonschema:"in (from the server) or out (from sonde)"`
	Verdict string `json:"verdict" jsonschema:"sent, resolved, error, late, duplicate, unknown, malformed, invalid, too-long, server-request, notification, progress, undeclared"`
	ID      string `json:"id,omitempty"`
	Method  string `json:"method,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Problem bool   `json:"problem,omitempty" jsonschema:"the frame broke the protocol"`
}

type exchangeOut struct {
	Session   string    `json:"session"`
	ID        string    `json:"id,omitempty" jsonschema:"the request id, as sonde shows it (7, or \"abc\" quoted); session_explain takes it"`
	Method    string    `json:"method"`
	Tool      string    `json:"tool,omitempty"`
	State     string    `json:"state" jsonschema:"how the request ended: resolved, error, timeout, cancelled, exited, closed, protocol, http"`
	IsError   bool      `json:"isError" jsonschema:"tools/call: the tool's result had isError"`
	LatencyMs float64   `json:"latencyMs"`
	Result    string    `json:"result,omitempty" jsonschema:"the result as the server sent it: JSON, escaped, cut with a marker past 64 KiB"`
	Text      string    `json:"text,omitempty" jsonschema:"tools/call: the result's text content, escaped"`
	Error     *errInfo  `json:"error,omitempty"`
	Why       string    `json:"why,omitempty" jsonschema:"a timeout: what sonde saw the server doing at the deadline"`
	Verdicts  []verdict `json:"verdicts" jsonschema:"the frames of this exchange and every protocol problem seen while it ran"`
	Problems  int       `json:"problems" jsonschema:"how many of the verdicts are protocol problems"`
}

func (s *Server) sessionCall(ctx context.Context, in callIn) (exchangeOut, string, error) {
	if in.Tool == "" {
		return exchangeOut{}, "", errors.New("give the tool's name (session_request with method tools/list lists them)")
	}
	args, err := marshalObject(in.Arguments)
	if err != nil {
		return exchangeOut{}, "", err
	}
	return s.exchange(ctx, in.Session, mcp.MethodToolsCall, in.Tool, args, in.Timeout)
}

func (s *Server) sessionRequest(ctx context.Context, in requestIn) (exchangeOut, string, error) {
	if in.Method == "" {
		return exchangeOut{}, "", errors.New("give the method, e.g. ping or resources/read")
	}
	params, err := marshalObject(in.Params)
	if err != nil {
		return exchangeOut{}, "", err
	}
	return s.exchange(ctx, in.Session, in.Method, "", params, in.Timeout)
}

func marshalObject(m map[string]any) (json.RawMessage, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the object: %v", err)
	}
	return b, nil
}

// parseTimeout reads a timeout ("": the client's default).
func parseTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > maxTimeout {
		return 0, fmt.Errorf("timeout %q: give a duration such as 500ms or 30s, at most %s", s, maxTimeout)
	}
	return d, nil
}

// exchange sends one request on a session and reports it.
func (s *Server) exchange(ctx context.Context, id, method, tool string, params json.RawMessage, timeout string) (exchangeOut, string, error) {
	sess, err := s.sessions.get(id)
	if err != nil {
		return exchangeOut{}, "", err
	}
	d, err := parseTimeout(timeout)
	if err != nil {
		return exchangeOut{}, "", err
	}
	if sess.client == nil {
		return s.injectExchange(ctx, sess, method, tool, params)
	}
	mark := sess.log.lastSeq()
	var call *client.Call
	if method == mcp.MethodToolsCall {
		call = sess.client.GoTool(ctx, tool, params, client.CallOptions{Timeout: d})
	} else {
		call = sess.client.Go(ctx, method, params, client.CallOptions{Timeout: d})
	}
	res, err := call.Wait()
	if !call.ID.IsValid() { // refused before it was sent: nothing to report but why
		return exchangeOut{}, "", fmt.Errorf("%s was not sent: %s", method, errorInfo(sess, err).Message)
	}
	final := waitSettled(ctx, sess.log, call.ID)
	out := exchangeOut{Session: sess.id, ID: call.ID.String(), Method: method, Tool: tool, State: string(client.StateResolved),
		LatencyMs: float64(call.Latency().Microseconds()) / 1000, Verdicts: []verdict{}}
	if final != nil {
		out.State = string(final.State)
	}
	out.Error = errorInfo(sess, err)
	if snap := client.TimeoutSnapshot(err); snap != nil {
		out.Why = serverString(sess.redact, snap.Summary(), maxLine)
	}
	if err == nil {
		out.Result, _ = serverText(sess.redact, res, maxBody)
		if method == mcp.MethodToolsCall {
			toolFacts(sess, tool, res, &out)
		}
	}
	out.Verdicts, out.Problems = exchangeVerdicts(sess, mark, call.ID)
	return out, exchangeSummary(&out), nil
}

// toolFacts fills isError and the text blocks of a tools/call result.
func toolFacts(sess *session, tool string, res json.RawMessage, out *exchangeOut) {
	r, err := client.ToolResult(tool, res)
	if err != nil {
		out.Error = errorInfo(sess, err)
		return
	}
	out.IsError = r.IsError
	var texts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	t, _ := serverText(sess.redact, []byte(strings.Join(texts, "\n")), maxBody)
	out.Text = t
}

// waitSettled waits (a little) until the log holds the outcome of request
// id, and returns it (nil: not seen in time).
func waitSettled(ctx context.Context, log *eventLog, id jsonrpc.ID) *client.ReqInfo {
	deadline := time.NewTimer(settleWait)
	defer deadline.Stop()
	key := reqKey{client.Out, id.String()}
	for {
		ch := log.wait()
		var info *client.ReqInfo
		log.withRequests(func(r *requests) {
			if st := r.byKey[key]; st != nil && st.info.State.Final() {
				i := st.info
				info = &i
			}
		})
		if info != nil {
			return info
		}
		select {
		case <-ch:
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// exchangeVerdicts lists the frames of request id after mark, and every
// problem frame among them, with the count of problems.
func exchangeVerdicts(sess *session, mark uint64, id jsonrpc.ID) ([]verdict, int) {
	out, problems := []verdict{}, 0
	want := id.String()
	for _, ev := range sess.log.since(mark) {
		if ev.Kind != client.EvFrame || ev.Frame == nil {
			continue
		}
		f := ev.Frame
		problem := filter.ProblemVerdict(f.Verdict)
		if !problem && f.Msg.ID.String() != want {
			continue
		}
		if problem {
			problems++
		}
		if len(out) < 100 {
			out = append(out, frameVerdict(sess, ev, problem))
		}
	}
	return out, problems
}

func frameVerdict(sess *session, ev client.Event, problem bool) verdict {
	f := ev.Frame
	v := verdict{Seq: ev.Seq, Dir: f.Dir.String(), Verdict: string(f.Verdict), Method: serverString(sess.redact, f.Msg.Method, 256),
		Detail: serverString(sess.redact, f.Detail, maxLine), Problem: problem}
	if f.Msg.ID.IsValid() {
		v.ID = serverString(sess.redact, f.Msg.ID.String(), 256)
	}
	return v
}

func exchangeSummary(o *exchangeOut) string {
	what := o.Method
	if o.Tool != "" {
		what += " " + o.Tool
	}
	sum := fmt.Sprintf("%s id %s: %s after %.1fms", what, o.ID, o.State, o.LatencyMs)
	if o.IsError {
		sum += ", isError"
	}
	if o.Error != nil {
		sum += ": " + o.Error.Message
	}
	if o.Problems > 0 {
		sum += fmt.Sprintf("; %d protocol problems seen (see verdicts)", o.Problems)
	}
	return sum
}

// injectExchange is exchange on a session without a client of its own.
func (s *Server) injectExchange(ctx context.Context, sess *session, method, tool string, params json.RawMessage) (exchangeOut, string, error) {
	if sess.inject == nil {
		return exchangeOut{}, "", fmt.Errorf("session %s takes no requests of sonde's", sess.id)
	}
	if method == mcp.MethodToolsCall {
		p, err := json.Marshal(mcp.CallToolParams{Name: tool, Arguments: params})
		if err != nil {
			return exchangeOut{}, "", err
		}
		params = p
	}
	mark := sess.log.lastSeq()
	start := time.Now()
	res, err := sess.inject(ctx, method, params)
	out := exchangeOut{Session: sess.id, Method: method, Tool: tool, State: string(client.StateResolved),
		LatencyMs: float64(time.Since(start).Microseconds()) / 1000, Error: errorInfo(sess, err), Verdicts: []verdict{}}
	if err != nil {
		out.State = string(client.StateError)
	} else {
		out.Result, _ = serverText(sess.redact, res, maxBody)
		if method == mcp.MethodToolsCall {
			toolFacts(sess, tool, res, &out)
		}
	}
	out.Verdicts, out.Problems = exchangeVerdicts(sess, mark, jsonrpc.ID{})
	return out, exchangeSummary(&out), nil
}
