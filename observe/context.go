package observe

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The _meta keys of trace context propagation: unprefixed, an exception to
// the DNS-prefixed _meta keys that the MCP conventions make.
const (
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"
)

// ErrTraceparent is the cause of a --traceparent value that is not a W3C
// traceparent header (errors.Is).
var ErrTraceparent = errors.New("not a W3C traceparent (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)")

// ParseTraceparent reads a W3C traceparent (and an optional tracestate)
// into the remote span context a session joins (--traceparent). The W3C
// propagator of the SDK does the parsing.
func ParseTraceparent(traceparent, tracestate string) (trace.SpanContext, error) {
	sc := extract(traceparent, tracestate)
	if !sc.IsValid() {
		return trace.SpanContext{}, ErrTraceparent
	}
	return sc, nil
}

func extract(traceparent, tracestate string) trace.SpanContext {
	c := &carrier{parent: strings.TrimSpace(traceparent), state: tracestate}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), c))
}

// inject writes sc as the traceparent and tracestate members of a _meta.
func inject(sc trace.SpanContext) map[string]json.RawMessage {
	var c carrier
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), &c)
	out := make(map[string]json.RawMessage, 2)
	// The propagator writes a traceparent of hex digits and dashes, a JSON
	// string once quoted; a tracestate may hold any printable character.
	out[MetaTraceparent] = append(append(append(make(json.RawMessage, 0, len(c.parent)+2), '"'), c.parent...), '"')
	if c.state != "" {
		out[MetaTracestate], _ = json.Marshal(c.state)
	}
	return out
}

// carrier holds the two members the W3C propagator reads and writes
// (propagation.TextMapCarrier), without a map per request.
type carrier struct{ parent, state string }

func (c *carrier) Get(key string) string {
	switch key {
	case MetaTraceparent:
		return c.parent
	case MetaTracestate:
		return c.state
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	switch key {
	case MetaTraceparent:
		c.parent = value
	case MetaTracestate:
		c.state = value
	}
}

func (c *carrier) Keys() []string { return []string{MetaTraceparent, MetaTracestate} }

// Injector gives each request sonde sends the trace context of the span
// that will stand for it: one trace per session (the caller's trace with
// --traceparent, else a new one), a new span id per request. Its Meta
// method is the client's RequestMeta hook (client.Options.RequestMeta).
type Injector struct {
	traceID trace.TraceID
	state   trace.TraceState
}

// NewInjector returns the injector of a session that joins parent (or
// starts a trace of its own when parent is not valid).
func NewInjector(parent trace.SpanContext) *Injector {
	in := &Injector{traceID: parent.TraceID(), state: parent.TraceState()}
	if !parent.IsValid() {
		in.traceID = newTraceID()
	}
	return in
}

// Meta returns the traceparent (and tracestate) members of the _meta of
// request id: the trace of the session and a span id of its own, sampled.
// The span the observer makes for the request takes these ids, so a server
// that parents on them nests under sonde's span.
func (in *Injector) Meta(id int64, method string) map[string]json.RawMessage {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: in.traceID, SpanID: newSpanID(), TraceFlags: trace.FlagsSampled, TraceState: in.state,
	})
	return inject(sc)
}

func newTraceID() trace.TraceID {
	var t trace.TraceID
	for !t.IsValid() {
		a, b := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			t[i], t[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
		}
	}
	return t
}

func newSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		a := rand.Uint64()
		for i := range 8 {
			s[i] = byte(a >> (8 * i))
		}
	}
	return s
}

// reservedKey carries, in the context a span is started with, the ids the
// span must take (those already sent in the request's _meta).
type reservedKey struct{}

func withReserved(ctx context.Context, sc trace.SpanContext) context.Context {
	return context.WithValue(ctx, reservedKey{}, sc)
}

// idGenerator gives a span the ids reserved for it in its context (so a
// span has the ids its request carried on the wire), and random ones
// otherwise. It is the SDK's IDGenerator hook (sdktrace.WithIDGenerator).
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(reservedKey{}).(trace.SpanContext); ok && sc.HasTraceID() {
		sid := sc.SpanID()
		if !sid.IsValid() {
			sid = newSpanID()
		}
		return sc.TraceID(), sid
	}
	return newTraceID(), newSpanID()
}

func (idGenerator) NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID {
	if sc, ok := ctx.Value(reservedKey{}).(trace.SpanContext); ok && sc.TraceID() == traceID && sc.HasSpanID() {
		return sc.SpanID()
	}
	return newSpanID()
}
