// Emitting a folded request as spans and metrics, and ending a session.

package observe

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

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
