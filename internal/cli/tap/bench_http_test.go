package tap_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/transport"
)

// BenchmarkTapHTTPEcho: sonde's client calling echo on the fixture over
// Streamable HTTP (its SSE answers), directly and through `sonde tap
// --listen` (recording to a file, as by default, and --no-record), with 1
// and 64 calls in flight. ns/op at c=1 is the latency of one call; at
// c=64, the inverse of the throughput; p50-ns is the median call.
func BenchmarkTapHTTPEcho(b *testing.B) {
	base := clitest.FixtureHTTP(b) + "/mcp"
	for _, via := range []string{"direct", "tap", "tap-no-record"} {
		for _, conc := range []int{1, 64} {
			b.Run(via+"/c="+strconv.Itoa(conc), func(b *testing.B) {
				url := base
				switch via {
				case "tap":
					url = startHTTPTap(b, base, "--record", filepath.Join(b.TempDir(), "s.jsonl")).url
				case "tap-no-record":
					url = startHTTPTap(b, base, "--no-record").url
				}
				c := client.New(client.Options{MaxPending: conc})
				if err := c.Connect(client.HTTP(transport.HTTPConfig{URL: url, Mode: transport.ModeStreamable})); err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Initialize(context.Background()); err != nil {
					b.Fatal(err)
				}
				args := json.RawMessage(`{"name":"echo","arguments":{"value":"hello"}}`)
				var next atomic.Int64
				var wg sync.WaitGroup
				var mu sync.Mutex
				var lat []time.Duration
				b.ResetTimer()
				start := time.Now()
				for range conc {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							t0 := time.Now()
							if _, err := c.Call(context.Background(), "tools/call", args, client.CallOptions{}); err != nil {
								b.Error(err)
								return
							}
							d := time.Since(t0)
							mu.Lock()
							lat = append(lat, d)
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				if len(lat) > 0 {
					b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
				}
			})
		}
	}
}
