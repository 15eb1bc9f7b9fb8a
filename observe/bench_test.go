package observe

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/otlptest"
)

// BenchmarkExport is what exporting costs a session: echo calls to the
// fixture (a real subprocess) with 64 in flight, without telemetry and
// with every span and metric exported over OTLP/HTTP to a collector on a
// loopback socket (which reads and drops them, as one on another machine
// would cost this process nothing). ns/op is per call; calls/s too.
func BenchmarkExport(b *testing.B) {
	for _, export := range []bool{false, true} {
		name := "off"
		if export {
			name = "otlp"
		}
		b.Run(name+"/c=64", func(b *testing.B) {
			var tel *Telemetry
			opts := client.Options{MaxPending: 64}
			if export {
				var err error
				tel, err = New(context.Background(), Config{Endpoint: otlptest.Discard(b)})
				if err != nil {
					b.Fatal(err)
				}
				opts.RequestMeta = NewInjector(trace.SpanContext{}).Meta
			}
			c := client.New(opts)
			if tel != nil {
				tel.Follow(c.Subscribe(DefaultBuffer), FoldOptions{})
			}
			if err := c.Connect(stdio(b)); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := c.Initialize(ctx); err != nil {
				b.Fatal(err)
			}
			echoes(b, c, 64)
			c.Close()
			if tel != nil {
				if st := tel.Shutdown(ctx); st.Dropped != 0 || st.Missed != 0 {
					b.Errorf("stats %+v", st)
				}
			}
		})
	}
}

// echoes calls echo b.N times from n workers.
func echoes(b *testing.B, c *client.Client, n int) {
	args := json.RawMessage(`{"value":"hello"}`)
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	t0 := time.Now()
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
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "calls/s")
}
