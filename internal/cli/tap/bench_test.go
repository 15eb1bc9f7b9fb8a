package tap_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/transport"
)

// BenchmarkTapEcho: sonde's client calling echo on the fixture directly,
// and through `sonde tap` (recording to a file, as by default), with 1
// and 64 calls in flight. ns/op at c=1 is the latency of one call; at
// c=64, the inverse of the throughput.
func BenchmarkTapEcho(b *testing.B) {
	for _, via := range []string{"direct", "tap", "tap-no-record"} {
		for _, conc := range []int{1, 64} {
			b.Run(via+"/c="+strconv.Itoa(conc), func(b *testing.B) {
				dir := b.TempDir()
				argv := []string{os.Args[0], "fixture", "--pid-file", filepath.Join(dir, "pids")}
				switch via {
				case "tap-no-record":
					argv = append([]string{os.Args[0], "tap", "--no-record", "--"}, argv...)
				case "tap":
					argv = append([]string{os.Args[0], "tap", "--record", filepath.Join(dir, "s.jsonl"), "--"}, argv...)
				}
				env, _ := transport.BuildEnv(os.Environ(), nil, clitest.ChildEnv())
				c := client.New(client.Options{MaxPending: conc})
				if err := c.Connect(client.Stdio(transport.StdioConfig{Argv: argv, Env: env})); err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Initialize(context.Background()); err != nil {
					b.Fatal(err)
				}
				args := json.RawMessage(`{"name":"echo","arguments":{"value":"hello"}}`)
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for range conc {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							if _, err := c.Call(context.Background(), "tools/call", args, client.CallOptions{}); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
			})
		}
	}
}

// BenchmarkTapGoSDK: the official Go SDK's client (interop/gosdk-client,
// make peers) calling echo on the fixture directly and through sonde tap
// (recording, as by default), 1 and 64 calls in flight; b.N calls per run,
// timed by the client itself (its start and handshake excluded).
func BenchmarkTapGoSDK(b *testing.B) {
	bin := peertest.GoSDKClient(b)
	for _, via := range []string{"direct", "tap", "tap-no-record"} {
		for _, conc := range []int{1, 64} {
			b.Run(via+"/c="+strconv.Itoa(conc), func(b *testing.B) {
				dir := b.TempDir()
				argv := []string{os.Args[0], "fixture", "--pid-file", filepath.Join(dir, "pids")}
				switch via {
				case "tap-no-record":
					argv = append([]string{os.Args[0], "tap", "--no-record", "--"}, argv...)
				case "tap":
					argv = append([]string{os.Args[0], "tap", "--record", filepath.Join(dir, "s.jsonl"), "--"}, argv...)
				}
				r := gosdkRun(b, bin, b.N, conc, "echo", `{"value":"hello"}`, argv...)
				b.ReportMetric(r.CallsPerS, "calls/s")
				b.ReportMetric(float64(r.P50), "p50-ns")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
