package observe

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
)

// TestInjectorAsThePropagator: the traceparent the Injector writes is the
// one the SDK's W3C propagator writes for the same span context (read back
// by the propagator, written again by it: the same bytes), in the
// session's trace (the parent's, or one of its own), a new span id per
// request, sampled; the parent's tracestate goes along; the members are
// appended after what dst holds.
func TestInjectorAsThePropagator(t *testing.T) {
	parent, err := ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", "k=v,a=b")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []trace.SpanContext{{}, parent} {
		in := NewInjector(p)
		var trace0 trace.TraceID
		seen := map[trace.SpanID]bool{}
		for id := range int64(200) {
			dst := in.Meta([]client.MetaMember{{Key: "progressToken", Value: json.RawMessage("1")}}, id, "tools/call")
			if dst[0].Key != "progressToken" || dst[1].Key != MetaTraceparent {
				t.Fatalf("members %+v", dst)
			}
			var tp string
			if err := json.Unmarshal(dst[1].Value, &tp); err != nil {
				t.Fatalf("traceparent %s: %v", dst[1].Value, err)
			}
			sc := extract(tp, "")
			if !sc.IsValid() || !sc.IsSampled() {
				t.Fatalf("traceparent %q: not a valid sampled context for the propagator", tp)
			}
			var c carrier
			propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), &c)
			if c.parent != tp {
				t.Fatalf("traceparent %q, the propagator writes %q", tp, c.parent)
			}
			if id == 0 {
				trace0 = sc.TraceID()
			}
			if sc.TraceID() != trace0 || (p.IsValid() && sc.TraceID() != p.TraceID()) || seen[sc.SpanID()] {
				t.Fatalf("request %d: %v (trace %v, parent %v)", id, sc, trace0, p)
			}
			seen[sc.SpanID()] = true
			wantState := p.IsValid()
			if gotState := len(dst) == 3 && dst[2].Key == MetaTracestate && string(dst[2].Value) == `"k=v,a=b"`; gotState != wantState || (!wantState && len(dst) != 2) {
				t.Fatalf("tracestate members %+v (parent %v)", dst, p)
			}
		}
	}
}

// BenchmarkInjectorMeta is the hook's cost per request (under the
// client's lock).
func BenchmarkInjectorMeta(b *testing.B) {
	in := NewInjector(trace.SpanContext{})
	buf := make([]client.MetaMember, 0, 4)
	b.ReportAllocs()
	for i := range b.N {
		buf = in.Meta(buf[:0], int64(i), "tools/call")
	}
}

// FuzzOwnContext: what ownContext reads of a traceparent is what the W3C
// propagator reads of it (extract), and it reads every traceparent the
// Injector writes.
func FuzzOwnContext(f *testing.F) {
	for _, s := range []string{
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
		"00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",
		"00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03",
		"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tp string) {
		raw := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"` + tp + `"},"name":"x"}}`)
		got, ok := ownContext(raw)
		if !ok {
			return
		}
		if want := extract(tp, ""); !got.Equal(want) || !want.IsValid() {
			t.Fatalf("%q: read %v, the propagator %v", tp, got, want)
		}
	})
}

// TestOwnContextReadsTheInjector: every traceparent the Injector writes is
// read by ownContext (the folder's quick path).
func TestOwnContextReadsTheInjector(t *testing.T) {
	in := NewInjector(trace.SpanContext{})
	for id := range int64(100) {
		m := in.Meta(nil, id, "tools/call")
		raw := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":` + string(m[0].Value) + `},"name":"x"}}`)
		sc, ok := ownContext(raw)
		var tp string
		json.Unmarshal(m[0].Value, &tp)
		if !ok || !sc.Equal(extract(tp, "")) {
			t.Fatalf("%s: %v %v", m[0].Value, sc, ok)
		}
	}
}
