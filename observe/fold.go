package observe

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// Mode says whose session a Folder follows.
type Mode uint8

const (
	// ModeClient: sonde drives the session. Its requests are CLIENT spans
	// whose ids are the traceparent sonde put in their _meta (Injector);
	// the server's requests are SERVER spans.
	ModeClient Mode = iota
	// ModeTap: sonde tap watches a host and a server. The host's requests
	// are CLIENT spans and the server's SERVER spans, the spans the host
	// would emit, each parented on the traceparent the host put in the
	// request's _meta (passed through untouched) when there is one.
	ModeTap
)

// Defaults of FoldOptions.
const (
	// DefaultHold is how long (in event time) an ended request's span
	// waits for a late or duplicate answer before it is emitted.
	DefaultHold = 5 * time.Second
	// DefaultHoldMax is how many ended spans wait at most; past it the
	// oldest goes out.
	DefaultHoldMax = 1024
	// MaxContentBytes bounds gen_ai.tool.call.arguments and .result.
	MaxContentBytes = 32 << 10
)

// FoldOptions configure a Folder.
type FoldOptions struct {
	Mode Mode
	// Parent is the span context sonde's spans are children of
	// (--traceparent); in ModeTap a request's own traceparent wins.
	Parent trace.SpanContext
	// Content adds gen_ai.tool.call.arguments and .result (--otlp-content),
	// passed through Redact first.
	Content bool
	Redact  func([]byte) []byte
	// Hold and HoldMax: see DefaultHold and DefaultHoldMax.
	Hold    time.Duration
	HoldMax int
}

// key names a request: its direction (Out: sonde's or the host's; In: the
// server's) and its id.
type key struct {
	dir client.Direction
	id  jsonrpc.ID
}

// spanEvent is an event of a span, kept until the span is emitted.
type spanEvent struct {
	name  string
	at    time.Time
	attrs []attribute.KeyValue
}

// req is one request followed from its start to its outcome.
type req struct {
	key
	method, tool, prompt, uri string
	start, end                time.Time
	// sc: in ModeClient the ids sent in the request's _meta (the span's
	// own); in ModeTap the host's (the span's parent).
	sc           trace.SpanContext
	args, result []byte
	state        client.State
	errType      string
	desc         string
	code         string // rpc.response.status_code
	version      string // mcp.protocol.version from _meta (modern) or the initialize result
	events       []spanEvent
	// rounds are the earlier rounds of a modern operation answered
	// input_required (oldest first); the request holding them is the last.
	rounds []*req
}

// session is what the spans of one connection share.
type session struct {
	open      bool
	start     time.Time
	transport string
	address   string
	port      int
	protoName string
	// protoVersion is network.protocol.version: the HTTP version of the
	// server's answers ("1.1", "2"); none over stdio.
	protoVersion string
	version      string
	id           string // Mcp-Session-Id
	modern       bool
	traceID      trace.TraceID // for requests that carried no traceparent
	adopted      bool          // traceID is the one sonde's requests carry
	errType      string
}

// Folder turns a client's (or an observer's) events into spans and
// metrics by the OpenTelemetry MCP conventions (docs/otel.md). It is not
// safe for concurrent use: one goroutine applies the events in order.
type Folder struct {
	tracer   trace.Tracer
	metrics  *instruments
	o        FoldOptions
	sess     session
	open     map[key]*req
	waiting  map[key]*req // rounds answered input_required, awaiting their retry
	held     []*req       // ended, waiting a little for a late answer (from heldHead on)
	heldHead int
	heldBy   map[key]*req
	sets     map[setKey]*shared // what the session's spans of one kind share
	scratch  []attribute.KeyValue
	free     []*req                   // emitted, for reuse (newReq)
	kinds    [2]trace.SpanStartOption // client, server
}

// NewFolder returns a folder emitting through t; m records the metrics
// (nil: none).
func NewFolder(t trace.Tracer, m *Metrics, o FoldOptions) *Folder {
	if o.Hold <= 0 {
		o.Hold = DefaultHold
	}
	if o.HoldMax <= 0 {
		o.HoldMax = DefaultHoldMax
	}
	f := &Folder{tracer: t, o: o, open: map[key]*req{}, waiting: map[key]*req{}, heldBy: map[key]*req{}, sets: map[setKey]*shared{},
		kinds: [2]trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithSpanKind(trace.SpanKindServer)}}
	if m != nil {
		f.metrics = m.inst
	}
	return f
}

// Apply folds one event.
func (f *Folder) Apply(ev client.Event) {
	switch ev.Kind {
	case client.EvProcess:
		f.process(ev)
	case client.EvHTTP:
		f.http(ev.Time, ev.HTTP)
	case client.EvFrame:
		f.frame(ev.Frame)
	case client.EvRequest:
		f.request(ev.Time, ev.Req)
	}
	f.Flush(ev.Time)
}

// Flush emits the ended spans that have waited Hold by now.
func (f *Folder) Flush(now time.Time) {
	h := f.heldHead
	for h < len(f.held) && (len(f.held)-h > f.o.HoldMax || now.Sub(f.held[h].end) >= f.o.Hold) {
		f.emitHeld(f.held[h])
		f.held[h] = nil
		h++
	}
	// The emitted spans leave the front; the rest moves down only once
	// it is the smaller part (a copy per span emitted would cost as much
	// as the span).
	switch {
	case h == len(f.held):
		f.held, h = f.held[:0], 0
	case h > len(f.held)/2:
		n := copy(f.held, f.held[h:])
		clear(f.held[n:])
		f.held, h = f.held[:n], 0
	}
	f.heldHead = h
}

// End ends the stream at t: requests without an outcome end there
// (session_closed), the held spans go out, and the session's duration is
// recorded.
func (f *Folder) End(t time.Time) {
	for _, r := range f.waiting {
		f.open[r.key] = r
	}
	f.waiting = map[key]*req{}
	for _, r := range f.open {
		r.end, r.state = t, client.StateClosed
		r.errType, r.desc = ErrTypeClosed, "the session ended before the request's outcome"
		f.finish(r)
	}
	for _, r := range f.held[f.heldHead:] {
		f.emitHeld(r)
	}
	f.held, f.heldHead = nil, 0
	f.endSession(t)
}

func (f *Folder) process(ev client.Event) {
	p := ev.Proc
	switch p.What {
	case client.ProcStart, client.ProcConnect:
		prevTrace := f.sess.traceID
		if f.sess.open {
			f.endSession(ev.Time)
		}
		clear(f.sets)
		f.sess = session{open: true, start: ev.Time, traceID: newTraceID(), adopted: f.sess.adopted}
		if f.sess.adopted {
			f.sess.traceID = prevTrace
		}
		if f.o.Parent.IsValid() {
			f.sess.traceID = f.o.Parent.TraceID()
		}
		if p.What == client.ProcStart {
			f.sess.transport = "pipe"
			return
		}
		f.sess.transport = "tcp"
		f.sess.protoName = "http"
		if len(p.Argv) > 0 {
			f.sess.address, f.sess.port = hostPort(p.Argv[0])
		}
	case client.ProcExit:
		if p.Exit != nil && (p.Exit.Code != 0 || p.Exit.Signal != "") {
			f.sess.errType = ErrTypeProcessExit
		}
	case client.ProcSpawnFailed:
		f.sess = session{}
		clear(f.sets) // made from the session that is gone
	}
}

// hostPort reads server.address and server.port from a server's URL.
func hostPort(raw string) (string, int) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, _ := strconv.Atoi(port)
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	return host, n
}

// http learns the session id from the answers' Mcp-Session-Id.
//
// An exchange before any process or connect event is the HTTP tap's (the
// proxy's exchange with the server, whose URL it carries): it opens the
// session, over tcp, in the trace the spans so far took.
func (f *Folder) http(at time.Time, h *client.HTTPEvent) {
	if !f.sess.open && h.URL != "" {
		tid := f.sess.traceID
		f.sess = session{open: true, start: at, traceID: tid, transport: "tcp", protoName: "http"}
		if !tid.IsValid() {
			f.sess.traceID = newTraceID()
		}
		f.sess.address, f.sess.port = hostPort(h.URL)
		clear(f.sets)
	}
	if v := httpVersion(h.Proto); v != "" && v != f.sess.protoVersion {
		f.sess.protoVersion = v
		clear(f.sets)
	}
	for _, line := range h.Header {
		name, v, ok := strings.Cut(strings.TrimPrefix(line, "< "), ":")
		if ok && line != name && strings.EqualFold(strings.TrimSpace(name), "Mcp-Session-Id") {
			f.sess.id = strings.TrimSpace(v)
		}
	}
}

// httpVersion is network.protocol.version of an HTTP response's proto
// ("HTTP/1.1": "1.1", "HTTP/2.0": "2", as the conventions write them), or
// "" when proto is not an HTTP version.
func httpVersion(proto string) string {
	major, minor, ok := http.ParseHTTPVersion(proto)
	switch {
	case !ok:
		return ""
	case major >= 2 && minor == 0:
		return strconv.Itoa(major)
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
}

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

// finish holds an ended request's span a while for a late answer.
func (f *Folder) finish(r *req) {
	f.held = append(f.held, r)
	f.heldBy[r.key] = r
}

func (f *Folder) emitHeld(r *req) {
	if f.heldBy[r.key] == r {
		delete(f.heldBy, r.key)
	}
	f.emit(r)
	for _, round := range r.rounds {
		f.recycle(round)
	}
	f.recycle(r)
}

// maxFree bounds the requests a folder keeps for reuse.
const maxFree = 1024

// newReq is a request to fill: one emitted before, or a new one.
func (f *Folder) newReq() *req {
	if n := len(f.free); n > 0 {
		r := f.free[n-1]
		f.free = f.free[:n-1]
		return r
	}
	return &req{}
}

// recycle keeps r, emitted and known to no map any more, for newReq.
func (f *Folder) recycle(r *req) {
	if len(f.free) < maxFree {
		*r = req{}
		f.free = append(f.free, r)
	}
}

// context is the context a span starts in: under parent when it is valid,
// with the ids own when they are valid (reserved for the ID generator),
// else in the session's trace.
func (f *Folder) context(parent, own trace.SpanContext) context.Context {
	ctx := context.Background()
	if parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	if own.HasTraceID() {
		return withReserved(ctx, own)
	}
	tid := f.sess.traceID
	if !tid.IsValid() {
		tid = newTraceID()
		f.sess.traceID = tid
	}
	return withReserved(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid}))
}

// ids are the parent and the own ids of r's span.
func (f *Folder) ids(r *req) (parent, own trace.SpanContext) {
	parent = f.o.Parent
	if f.o.Mode == ModeTap || r.dir == client.In {
		// The initiator's context: the span's parent.
		if r.sc.IsValid() {
			parent = r.sc
		}
		return parent, trace.SpanContext{}
	}
	return parent, r.sc
}

// common are the attributes r's span shares with its duration metric,
// and the mcp.protocol.version among them ("" for none).
func (f *Folder) common(r *req) ([]attribute.KeyValue, string) {
	var a [16]attribute.KeyValue
	n := 0
	add := func(kv attribute.KeyValue) { a[n] = kv; n++ }
	add(semconv.McpMethodNameKey.String(r.method))
	version := r.version
	if version == "" {
		version = f.sess.version
	}
	if r.method == mcp.MethodInitialize && f.sess.version != "" {
		version = f.sess.version
	}
	if version != "" {
		add(semconv.McpProtocolVersion(version))
	}
	if r.tool != "" {
		add(semconv.GenAIToolName(r.tool))
		add(semconv.GenAIOperationNameExecuteTool)
	}
	if r.prompt != "" {
		add(semconv.GenAIPromptName(r.prompt))
	}
	if r.uri != "" {
		add(semconv.McpResourceURI(r.uri))
	}
	if r.errType != "" {
		add(semconv.ErrorTypeKey.String(r.errType))
	}
	if r.code != "" {
		if _, err := strconv.Atoi(r.code); err == nil {
			add(semconv.RPCResponseStatusCode(r.code))
		}
	}
	if f.sess.transport != "" {
		add(semconv.NetworkTransportKey.String(f.sess.transport))
	}
	if f.sess.protoName != "" {
		add(semconv.NetworkProtocolName(f.sess.protoName))
	}
	if f.sess.protoVersion != "" {
		add(semconv.NetworkProtocolVersion(f.sess.protoVersion))
	}
	if r.dir == client.Out && f.sess.address != "" {
		add(semconv.ServerAddress(f.sess.address))
		if f.sess.port > 0 {
			add(semconv.ServerPort(f.sess.port))
		}
	}
	return append([]attribute.KeyValue(nil), a[:n]...), version
}

// spanAttrs are the attributes of r's span: the shared ones of b, then
// its own. They are built in the folder's scratch slice, which the SDK
// copies from when the span starts.
func (f *Folder) spanAttrs(b *shared, r, first *req) []attribute.KeyValue {
	a := append(f.scratch[:0], b.attrs...)
	if id, ok := idAttr(first.id); ok {
		a = append(a, id)
	}
	if f.sess.id != "" && !f.sess.modern && b.version != mcp.ModernVersion {
		a = append(a, semconv.McpSessionID(f.sess.id))
	}
	if first.args != nil {
		a = append(a, semconv.GenAIToolCallArgumentsKey.String(string(first.args)))
	}
	if r.result != nil {
		a = append(a, semconv.GenAIToolCallResultKey.String(string(r.result)))
	}
	f.scratch = a[:0]
	return a
}

// emit sends r's span (and, for an operation of several rounds, the
// rounds as its children) and records its duration.
func (f *Folder) emit(r *req) {
	first := r
	if len(r.rounds) > 0 {
		first = r.rounds[0]
	}
	kind := trace.SpanKindClient
	if r.dir == client.In {
		kind = trace.SpanKindServer
	}
	b := f.shared(kind, r, first)
	name := b.name
	spanAttrs := f.spanAttrs(b, r, first)
	parent, own := f.ids(first)
	if len(r.rounds) > 0 {
		// The operation: a span of its own in the first round's trace;
		// each round (with the ids it sent) is its child.
		spanAttrs = append(spanAttrs, attrRounds.Int(len(r.rounds)+1))
		own = trace.NewSpanContext(trace.SpanContextConfig{TraceID: own.TraceID()})
	}
	ctx, span := f.tracer.Start(f.context(parent, own), name, trace.WithTimestamp(first.start), f.kindOpt(kind), trace.WithAttributes(spanAttrs...))
	if len(r.rounds) > 0 {
		opSC := trace.SpanContextFromContext(ctx)
		for _, round := range append(r.rounds, r) {
			_, rp := f.ids(round)
			rctx := withReserved(trace.ContextWithSpanContext(context.Background(), opSC), rp)
			a := []attribute.KeyValue{semconv.McpMethodNameKey.String(round.method)}
			if id, ok := idAttr(round.id); ok {
				a = append(a, id)
			}
			_, rs := f.tracer.Start(rctx, name, trace.WithTimestamp(round.start), f.kindOpt(kind), trace.WithAttributes(a...))
			addEvents(rs, round.events)
			rs.End(trace.WithTimestamp(round.end))
		}
	} else {
		addEvents(span, r.events)
	}
	if r.errType != "" {
		span.SetStatus(codes.Error, r.desc)
	}
	span.End(trace.WithTimestamp(r.end))
	if f.metrics != nil {
		f.metrics.operation(kind, r.end.Sub(first.start), b.record)
	}
}

// setKey is what a measurement's attributes depend on within a session.
type setKey struct {
	kind                                        trace.SpanKind
	method, tool, prompt, uri, errType, code, v string
}

// maxSets bounds the attribute sets a folder keeps for its measurements
// (a resource URI is of unbounded cardinality).
const maxSets = 512

// shared is what the spans and measurements of one kind of operation in
// a session have in common, made once, not once per call: the attributes
// and the measurement's record option (its attribute set).
type shared struct {
	name    string // the span's
	attrs   []attribute.KeyValue
	version string
	record  []metric.RecordOption
}

// shared is the shared part of r's span and measurement.
func (f *Folder) shared(kind trace.SpanKind, r, first *req) *shared {
	k := setKey{kind, r.method, r.tool, first.prompt, r.uri, r.errType, r.code, r.version}
	if b, ok := f.sets[k]; ok {
		return b
	}
	attrs, version := f.common(r)
	b := &shared{name: spanName(r.method, r.tool, first.prompt), attrs: attrs, version: version, record: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}}
	if len(f.sets) < maxSets {
		f.sets[k] = b
	}
	return b
}

// kindOpt is the start option of a span of kind (made once).
func (f *Folder) kindOpt(kind trace.SpanKind) trace.SpanStartOption {
	if kind == trace.SpanKindServer {
		return f.kinds[1]
	}
	return f.kinds[0]
}

func addEvents(span trace.Span, evs []spanEvent) {
	for _, e := range evs {
		span.AddEvent(e.name, trace.WithTimestamp(e.at), trace.WithAttributes(e.attrs...))
	}
}

func (f *Folder) endSession(t time.Time) {
	if !f.sess.open {
		return
	}
	f.sess.open = false
	if f.metrics == nil {
		return
	}
	a := []attribute.KeyValue{}
	if f.sess.version != "" {
		a = append(a, semconv.McpProtocolVersion(f.sess.version))
	}
	if f.sess.transport != "" {
		a = append(a, semconv.NetworkTransportKey.String(f.sess.transport))
	}
	if f.sess.protoName != "" {
		a = append(a, semconv.NetworkProtocolName(f.sess.protoName))
	}
	if f.sess.protoVersion != "" {
		a = append(a, semconv.NetworkProtocolVersion(f.sess.protoVersion))
	}
	if f.sess.address != "" {
		a = append(a, semconv.ServerAddress(f.sess.address))
		if f.sess.port > 0 {
			a = append(a, semconv.ServerPort(f.sess.port))
		}
	}
	if f.sess.errType != "" {
		a = append(a, semconv.ErrorTypeKey.String(f.sess.errType))
	}
	f.metrics.session(f.o.Mode, t.Sub(f.sess.start), a)
}
