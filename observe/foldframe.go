// Reading a frame into a request: its _meta, params, result and outcome.

package observe

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// meta is what the spans need of a _meta.
type meta struct {
	Traceparent string `json:"traceparent"`
	Tracestate  string `json:"tracestate"`
	Version     string `json:"io.modelcontextprotocol/protocolVersion"`
	// own is the context of a request sonde wrote, read by ownContext
	// (not valid: read Traceparent and Tracestate instead).
	own trace.SpanContext
}

// context is the span context a _meta carries, if any.
func (m *meta) context() trace.SpanContext {
	if m.own.IsValid() {
		return m.own
	}
	if m.Traceparent == "" {
		return trace.SpanContext{}
	}
	return extract(m.Traceparent, m.Tracestate)
}

// ownContext reads the traceparent of a line sonde wrote (the Injector's:
// version 00, lowercase hex, the flags version 00 allows, no tracestate)
// without the propagator's allocations. Anything else is not ok, and is
// left to extract. What it reads, extract reads the same
// (FuzzOwnContext).
func ownContext(raw []byte) (trace.SpanContext, bool) {
	const key = `"traceparent":"`
	i := bytes.Index(raw, []byte(key))
	if i < 0 || bytes.Contains(raw, []byte(`"tracestate":`)) {
		return trace.SpanContext{}, false
	}
	v := raw[i+len(key):]
	if len(v) < 56 || v[55] != '"' || string(v[:3]) != "00-" || v[35] != '-' || v[52] != '-' {
		return trace.SpanContext{}, false
	}
	var tid trace.TraceID
	var sid trace.SpanID
	var flags [1]byte
	if !lowerHex(v[3:35], tid[:]) || !lowerHex(v[36:52], sid[:]) || !lowerHex(v[53:55], flags[:]) || flags[0] > 3 {
		return trace.SpanContext{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(flags[0]), Remote: true})
	return sc, sc.IsValid()
}

// lowerHex decodes src, lowercase hex digits only, into dst.
func lowerHex(src, dst []byte) bool {
	for _, c := range src {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst, src)
	return err == nil
}

// params is what the spans need of a request's or notification's params.
type params struct {
	Name      string          `json:"name"`
	URI       string          `json:"uri"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      meta            `json:"_meta"`
	RequestID jsonrpc.ID      `json:"requestId"`
	Reason    string          `json:"reason"`
}

func (f *Folder) frame(fr *client.FrameInfo) {
	m := &fr.Msg
	if fr.Err != nil && m.Kind != jsonrpc.KindResponse {
		return
	}
	switch m.Kind {
	case jsonrpc.KindRequest:
		f.requestFrame(fr)
	case jsonrpc.KindNotification:
		f.notification(fr)
	case jsonrpc.KindResponse:
		f.response(fr)
	}
}

func (f *Folder) requestFrame(fr *client.FrameInfo) {
	k := key{fr.Dir, fr.Msg.ID}
	r := f.open[k]
	if r == nil {
		r = f.newReq()
		r.key, r.method, r.start = k, fr.Msg.Method, fr.Time
		f.open[k] = r
	}
	if f.quick(r, fr) {
		p := params{Name: r.tool, Meta: meta{Version: metaString(fr.Raw, mcp.MetaProtocolVersion)}}
		var ok bool
		if p.Meta.own, ok = ownContext(fr.Raw); !ok {
			p.Meta.Traceparent, p.Meta.Tracestate = metaString(fr.Raw, MetaTraceparent), metaString(fr.Raw, MetaTracestate)
		}
		f.fromParams(r, &p)
		return
	}
	if p, ok := readParams(fr); ok {
		f.fromParams(r, &p)
	}
}

// quick reports whether the span of sonde's own request r needs nothing
// of its params but _meta's strings (read by metaString, without decoding
// them): the common case, a tools/call with its tool known and no content
// wanted. sonde writes _meta first in its params (its keys sort first).
func (f *Folder) quick(r *req, fr *client.FrameInfo) bool {
	return f.o.Mode == ModeClient && fr.Dir == client.Out && len(fr.Msg.Params) == 0 &&
		!f.o.Content && !hasResourceURI(r.method) && r.method != mcp.MethodPromptsGet &&
		(r.method != mcp.MethodToolsCall || r.tool != "")
}

// metaString is the string value of the first member name in raw (a line
// sonde wrote), or "": a quoted name followed by a colon cannot occur
// inside a JSON string, whose quotes are escaped.
func metaString(raw []byte, name string) string {
	var buf [64]byte
	key := append(append(append(buf[:0], '"'), name...), `":"`...)
	i := bytes.Index(raw, key)
	if i < 0 {
		return ""
	}
	v := raw[i+len(key):]
	j := bytes.IndexByte(v, '"')
	if j < 0 || bytes.IndexByte(v[:j], '\\') >= 0 {
		return ""
	}
	return string(v[:j])
}

// fromParams sets what r's span takes from its request's params.
func (f *Folder) fromParams(r *req, p *params) {
	switch r.method {
	case mcp.MethodToolsCall:
		r.tool = p.Name
		if f.o.Content && len(p.Arguments) > 0 {
			r.args = f.content(p.Arguments)
		}
	case mcp.MethodPromptsGet:
		r.prompt = p.Name
	}
	if hasResourceURI(r.method) {
		r.uri = p.URI
	}
	if p.Meta.Version != "" {
		r.version, f.sess.modern = p.Meta.Version, true
	}
	r.sc = p.Meta.context()
	if f.o.Mode == ModeClient && r.dir == client.Out && r.sc.IsValid() && !f.sess.adopted {
		// sonde's own trace (the Injector's): the spans without ids of
		// their own (notifications) join it.
		f.sess.traceID, f.sess.adopted = r.sc.TraceID(), true
	}
}

// readParams reads a frame's params: decoded, or (a frame sonde wrote,
// whose message is not decoded again) from its bytes, in one pass.
func readParams(fr *client.FrameInfo) (params, bool) {
	var w struct {
		Params params `json:"params"`
	}
	switch {
	case len(fr.Msg.Params) > 0:
		return w.Params, json.Unmarshal(fr.Msg.Params, &w.Params) == nil
	case fr.Dir == client.Out && len(fr.Raw) > 0:
		return w.Params, json.Unmarshal(fr.Raw, &w) == nil
	}
	return w.Params, true
}

func (f *Folder) content(b []byte) []byte {
	if f.o.Redact != nil {
		b = f.o.Redact(b)
	}
	if len(b) > MaxContentBytes {
		cut := MaxContentBytes
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = append(append([]byte(nil), b[:cut]...), "…"...)
	}
	return append([]byte(nil), b...)
}

// notification: progress is a request's event (from its lifecycle
// event), a cancel an event on the request it cancels, any other
// notification a span of its own that ends where it starts (nothing
// acknowledges it).
func (f *Folder) notification(fr *client.FrameInfo) {
	m := &fr.Msg
	switch m.Method {
	case mcp.MethodProgress:
		return
	case mcp.MethodCancelled:
		p, _ := readParams(fr)
		// A cancel goes the way of the request it cancels.
		if r := f.find(key{fr.Dir, p.RequestID}); r != nil {
			attrs := []attribute.KeyValue{}
			if p.Reason != "" {
				attrs = append(attrs, attribute.String("reason", p.Reason))
			}
			r.events = append(r.events, spanEvent{eventCancel, fr.Time, attrs})
			return
		}
	}
	r := &req{key: key{dir: fr.Dir}, method: m.Method, start: fr.Time, end: fr.Time, state: client.StateResolved}
	if p, ok := readParams(fr); ok {
		if hasResourceURI(m.Method) {
			r.uri = p.URI
		}
		if f.o.Mode == ModeTap || fr.Dir == client.In {
			r.sc = p.Meta.context()
		}
	}
	f.emit(r)
}

// find is the request of k, open, held or waiting for its retry.
func (f *Folder) find(k key) *req {
	if r := f.open[k]; r != nil {
		return r
	}
	if r := f.heldBy[k]; r != nil {
		return r
	}
	return f.waiting[k]
}

func (f *Folder) response(fr *client.FrameInfo) {
	m := &fr.Msg
	k := key{client.Out, m.ID}
	if fr.Dir == client.Out {
		k.dir = client.In
	}
	switch fr.Verdict {
	case client.VerdictLate, client.VerdictDuplicate, client.VerdictUnknown:
		name := map[client.Verdict]string{client.VerdictLate: eventLate, client.VerdictDuplicate: eventDuplicate, client.VerdictUnknown: eventUnknown}[fr.Verdict]
		attrs := []attribute.KeyValue{}
		if a, ok := idAttr(m.ID); ok {
			attrs = append(attrs, a)
		}
		if m.Error != nil {
			attrs = append(attrs, semconv.RPCResponseStatusCode(strconv.FormatInt(m.Error.Code, 10)))
		}
		if r := f.find(k); r != nil {
			r.events = append(r.events, spanEvent{name, fr.Time, attrs})
			return
		}
		f.orphan(name, fr.Time, attrs)
		return
	}
	r := f.open[k]
	if r == nil {
		return
	}
	if m.Error != nil {
		r.code = strconv.FormatInt(m.Error.Code, 10)
		r.desc = m.Error.Message
		if k.dir == client.Out || !serverSideNotError(m.Error.Code) {
			r.errType = r.code
		}
		return
	}
	if fr.InputRequired {
		return
	}
	var res resultInfo
	if r.method == mcp.MethodInitialize || bytes.Contains(m.Result, []byte(`"isError"`)) {
		res = readResult(m.Result)
	}
	switch r.method {
	case mcp.MethodToolsCall:
		if res.IsError {
			r.errType, r.desc = ErrTypeToolError, "the tool's result has isError: true"
		}
		if f.o.Content {
			r.result = f.content(m.Result)
		}
	case mcp.MethodInitialize:
		if res.ProtocolVersion != "" {
			f.sess.version = res.ProtocolVersion
			clear(f.sets)
		}
	case mcp.MethodServerDiscover:
		f.sess.version, f.sess.modern = mcp.ModernVersion, true
		clear(f.sets)
	}
}

// resultInfo is what the spans need of a result.
type resultInfo struct {
	IsError         bool   `json:"isError"`
	ProtocolVersion string `json:"protocolVersion"`
}

// readResult decodes what the spans need of a result (only when they need
// it: most answers are not decoded at all).
func readResult(raw json.RawMessage) resultInfo {
	var res resultInfo
	_ = json.Unmarshal(raw, &res)
	return res
}

// orphan is an answer that matches no span sonde still holds: a span of
// its own, of no duration, with the answer as its event.
func (f *Folder) orphan(name string, at time.Time, attrs []attribute.KeyValue) {
	ctx := f.context(trace.SpanContext{}, trace.SpanContext{})
	_, span := f.tracer.Start(ctx, name, trace.WithTimestamp(at), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	span.AddEvent(name, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(at))
}

func (f *Folder) request(at time.Time, q *client.ReqInfo) {
	if !q.ID.IsValid() {
		return // refused before it had an id: nothing went on the wire
	}
	k := key{q.Dir, q.ID}
	switch q.State {
	case client.StateQueued, client.StateReceived:
		r := f.open[k]
		if r == nil {
			r = f.newReq()
			r.key, r.method, r.tool, r.start = k, q.Method, q.Tool, at
			f.open[k] = r
		}
		if q.RetryOf.IsValid() {
			if prev := f.waiting[key{q.Dir, q.RetryOf}]; prev != nil {
				delete(f.waiting, prev.key)
				r.rounds = append(prev.rounds, prev)
				prev.rounds = nil
			}
		}
		return
	case client.StateProgress:
		if r := f.open[k]; r != nil && q.Progress != nil {
			attrs := []attribute.KeyValue{attribute.Float64("progress", q.Progress.Progress)}
			if q.Progress.Total != nil {
				attrs = append(attrs, attribute.Float64("total", *q.Progress.Total))
			}
			if q.Progress.Message != "" {
				attrs = append(attrs, attribute.String("message", q.Progress.Message))
			}
			r.events = append(r.events, spanEvent{eventProgress, at, attrs})
		}
		return
	}
	if !q.State.Final() {
		return
	}
	r := f.open[k]
	if r == nil {
		return
	}
	delete(f.open, k)
	r.end, r.state = at, q.State
	if r.tool == "" {
		r.tool = q.Tool
	}
	switch q.State {
	case client.StateRetried:
		r.events = append(r.events, spanEvent{eventRound, at, nil})
		f.waiting[k] = r
		return
	case client.StateResolved, client.StateAnswered:
	case client.StateError:
		if r.errType == "" {
			r.errType, r.desc = outcomeErrType(q)
			r.code = r.errType
		}
	default:
		r.errType, r.desc = outcomeErrType(q)
	}
	f.finish(r)
}
