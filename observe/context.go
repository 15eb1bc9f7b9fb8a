package observe

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
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
	// prefix is `"00-<trace id>-` and state the tracestate member's value
	// (nil: none), the same for every request of the session.
	prefix []byte
	state  json.RawMessage
}

// NewInjector returns the injector of a session that joins parent (or
// starts a trace of its own when parent is not valid).
func NewInjector(parent trace.SpanContext) *Injector {
	tid := parent.TraceID()
	if !parent.IsValid() {
		tid = newTraceID()
	}
	in := &Injector{prefix: []byte(`"00-` + tid.String() + "-")}
	if ts := parent.TraceState().String(); ts != "" {
		in.state, _ = json.Marshal(ts)
	}
	return in
}

// Meta appends the traceparent (and tracestate) members of the _meta of
// request id to dst: the trace of the session and a span id of its own,
// sampled. The span the observer makes for the request takes these ids,
// so a server that parents on them nests under sonde's span.
//
// The traceparent is written as the W3C propagator writes one of version
// 00 (TestInjectorAsThePropagator holds them to the same bytes) from a
// prefix made once, so that a request costs one allocation, under the
// client's lock.
func (in *Injector) Meta(dst []client.MetaMember, id int64, method string) []client.MetaMember {
	sid := newSpanID()
	v := make(json.RawMessage, 0, len(in.prefix)+2*len(sid)+4)
	v = append(v, in.prefix...)
	v = hex.AppendEncode(v, sid[:])
	v = append(v, `-01"`...) // sampled
	dst = append(dst, client.MetaMember{Key: MetaTraceparent, Value: v})
	if in.state != nil {
		dst = append(dst, client.MetaMember{Key: MetaTracestate, Value: in.state})
	}
	return dst
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
