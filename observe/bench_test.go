package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/otlptest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// BenchmarkExport is what exporting costs a session: echo calls to the
// fixture (a real subprocess) with 1, 16 and 64 in flight, without
// telemetry and with every span and metric exported over OTLP/HTTP to a
// collector on a loopback socket (which reads and drops them, as one on
// another machine would cost this process nothing). ns/op is per call;
// calls/s too, and cpu-µs/call the CPU time this process used per call
// (the fixture's not counted), which a busy machine disturbs less than
// the wall time.
//
// Two more ways show where the cost is: fold-only folds the events into
// spans of a no-op tracer (sonde's own work, no SDK span made), sdk-noop
// makes every span and measurement through the SDK as otlp does but
// exports to the SDK's no-op exporter (what the spans cost before any
// OTLP encoding: the floor of any exporter).
func BenchmarkExport(b *testing.B) {
	for _, inFlight := range []int{1, 16, 64} {
		for _, mode := range []string{"off", "fold-only", "sdk-noop", "otlp"} {
			b.Run(fmt.Sprintf("c=%d/%s", inFlight, mode), func(b *testing.B) { benchExport(b, inFlight, mode) })
		}
	}
}

// benchExport is one configuration of BenchmarkExport.
func benchExport(b *testing.B, inFlight int, mode string) {
	var tel *Telemetry
	opts := client.Options{MaxPending: inFlight}
	switch mode {
	case "otlp":
		var err error
		tel, err = New(context.Background(), Config{Endpoint: otlptest.Discard(b)})
		if err != nil {
			b.Fatal(err)
		}
	case "sdk-noop":
		tel = NewWith(tracetest.NewNoopExporter(), metricNoop{}, Config{})
	case "fold-only":
		tel = NewWith(tracetest.NewNoopExporter(), nil, Config{})
		tel.tracer = noop.NewTracerProvider().Tracer("")
	}
	if tel != nil {
		opts.RequestMeta = NewInjector(trace.SpanContext{}).Meta
	}
	c := client.New(opts)
	if tel != nil {
		tel.Follow(c.Subscribe(DefaultBuffer), FoldOptions{})
	}
	start(b, c)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	t0, cpu0 := time.Now(), proctest.CPUTime()
	echoes(b, c, inFlight, b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "calls/s")
	b.ReportMetric(float64((proctest.CPUTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
	c.Close()
	if tel != nil {
		if st := tel.Shutdown(ctx); st.Dropped != 0 || st.Missed != 0 {
			b.Errorf("stats %+v", st)
		}
	}
}

// echoes calls echo calls times from n workers.
func echoes(b *testing.B, c *client.Client, n, calls int) {
	args := json.RawMessage(`{"value":"hello"}`)
	var left atomic.Int64
	left.Store(int64(calls))
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, _, err := c.CallTool(context.Background(), "echo", args, client.CallOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkFold is the export's own cost, without the session's noise:
// the events of a real session (5,000 echo calls to the fixture, 16 in
// flight, sent with their traceparent), folded again and again by a
// folder of Telemetry that exports every span and the histograms over
// OTLP/HTTP to a collector on loopback that drops them. ns/op and
// cpu-µs/call are per call (the exporter's goroutines included: the
// batches are all sent before the clock stops); allocs/op too. Run it
// with a -benchtime of whole sessions (100000x: 20 of them).
func BenchmarkFold(b *testing.B) {
	const calls = 5000
	evs := sessionEvents(b, calls, 16)
	// The folder runs faster than any session: a queue that holds every
	// span keeps the exporter's work from being dropped out of the count.
	tel, err := New(context.Background(), Config{Endpoint: otlptest.Discard(b), Queue: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := proctest.CPUTime()
	for i := 0; i < b.N; i += calls {
		f := NewFolder(tel.tracer, tel.metrics, FoldOptions{})
		for _, ev := range evs {
			f.Apply(ev)
		}
		f.End(evs[len(evs)-1].Time)
	}
	st := tel.Shutdown(context.Background())
	b.StopTimer()
	b.ReportMetric(float64((proctest.CPUTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
	if st.Dropped != 0 || st.Spans < uint64(b.N) {
		b.Errorf("stats %+v", st)
	}
}

// sessionEvents are the events of a session of n echo calls, inFlight at
// a time, with the traceparent of each request in its _meta.
func sessionEvents(b *testing.B, n, inFlight int) []client.Event {
	c := client.New(client.Options{MaxPending: inFlight, RequestMeta: NewInjector(trace.SpanContext{}).Meta})
	sub := c.Subscribe(DefaultBuffer)
	start(b, c)
	echoes(b, c, inFlight, n)
	c.Close()
	var evs []client.Event
	for ev := range sub.C {
		evs = append(evs, ev)
	}
	if sub.Missed() != 0 {
		b.Fatalf("%d events missed", sub.Missed())
	}
	return evs
}

// BenchmarkSDKFloor is what the official SDK costs per span by itself,
// with no folder and no session: spans of a tools/call's attributes (the
// seven a stdio echo call carries), started and ended with their
// timestamps, through the same tracer provider, batcher and OTLP/HTTP
// exporter as Telemetry, to a collector on loopback that drops them (its
// reading counted in cpu-µs/span too). It is the floor under
// BenchmarkFold's cost per call.
func BenchmarkSDKFloor(b *testing.B) {
	tel, err := New(context.Background(), Config{Endpoint: otlptest.Discard(b), Queue: 1 << 20, NoMetrics: true})
	if err != nil {
		b.Fatal(err)
	}
	attrs := []attribute.KeyValue{
		semconv.McpMethodNameKey.String("tools/call"), semconv.McpProtocolVersion("2025-11-25"),
		semconv.GenAIToolName("echo"), semconv.GenAIOperationNameExecuteTool,
		semconv.NetworkTransportKey.String("pipe"), semconv.JSONRPCRequestID("7"),
	}
	kind := trace.WithSpanKind(trace.SpanKindClient)
	t0 := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := proctest.CPUTime()
	for i := range b.N {
		at := t0.Add(time.Duration(i) * time.Microsecond)
		_, span := tel.tracer.Start(context.Background(), "tools/call echo", trace.WithTimestamp(at), kind, trace.WithAttributes(attrs...))
		span.End(trace.WithTimestamp(at.Add(30 * time.Microsecond)))
	}
	st := tel.Shutdown(context.Background())
	b.StopTimer()
	b.ReportMetric(float64((proctest.CPUTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/span")
	if st.Dropped != 0 || st.Spans < uint64(b.N) {
		b.Errorf("stats %+v", st)
	}
}

// metricNoop is a metric exporter that drops what it is given.
type metricNoop struct{}

func (metricNoop) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (metricNoop) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (metricNoop) Export(context.Context, *metricdata.ResourceMetrics) error { return nil }
func (metricNoop) ForceFlush(context.Context) error                          { return nil }
func (metricNoop) Shutdown(context.Context) error                            { return nil }
