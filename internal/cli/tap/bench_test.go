package tap_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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

// vias are the paths the benchmarks compare: the fixture direct, through
// the tap as a host gets it by default (recording into the sessions
// folder, with the injection socket and its Injector on), through the tap
// recording to --record FILE (no Injector), and through the tap not
// recording.
var vias = []string{"direct", "tap", "tap-record-file", "tap-no-record"}

// fixtureVia is the command line of the stdio fixture reached via, with
// its files in dir; for via "tap", b's SONDE_HOME is set (sessionsHome).
func fixtureVia(b *testing.B, via, dir string) []string {
	argv := []string{os.Args[0], "fixture", "--pid-file", filepath.Join(dir, "pids")}
	switch via {
	case "tap-no-record":
		argv = append([]string{os.Args[0], "tap", "--no-record", "--"}, argv...)
	case "tap-record-file":
		argv = append([]string{os.Args[0], "tap", "--record", filepath.Join(dir, "s.jsonl"), "--"}, argv...)
	case "tap":
		sessionsHome(b)
		argv = append([]string{os.Args[0], "tap", "--"}, argv...)
	}
	return argv
}

// sessionsHome sets SONDE_HOME, for the rest of b, to a new folder with a
// short path (the injection socket beside each recording must fit a unix
// socket's path).
func sessionsHome(b *testing.B) {
	dir, err := os.MkdirTemp("", "st")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	b.Setenv("SONDE_HOME", dir)
}

// benchEcho connects c with dial, runs the handshake, then b.N echo calls
// from conc goroutines, and reports calls/s and the median call (p50-ns).
func benchEcho(b *testing.B, dial client.Dialer, conc int) {
	c := client.New(client.Options{MaxPending: conc})
	if err := c.Connect(dial); err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(context.Background()); err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"name":"echo","arguments":{"value":"hello"}}`)
	var next atomic.Int64
	var wg sync.WaitGroup
	lat := make([][]time.Duration, conc)
	b.ResetTimer()
	start := time.Now()
	for g := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if _, err := c.Call(context.Background(), "tools/call", args, client.CallOptions{}); err != nil {
					b.Error(err)
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2]), "p50-ns")
	}
}

// BenchmarkTapEcho: sonde's client calling echo on the fixture directly,
// and through `sonde tap` (as by default, recording to a file, and
// --no-record), with 1 and 64 calls in flight. ns/op at c=1 is the latency
// of one call; at c=64, the inverse of the throughput.
func BenchmarkTapEcho(b *testing.B) {
	for _, via := range vias {
		for _, conc := range []int{1, 64} {
			b.Run(via+"/c="+strconv.Itoa(conc), func(b *testing.B) {
				argv := fixtureVia(b, via, b.TempDir())
				env, _ := transport.BuildEnv(os.Environ(), nil, clitest.ChildEnv())
				benchEcho(b, client.Stdio(transport.StdioConfig{Argv: argv, Env: env}), conc)
			})
		}
	}
}

// BenchmarkTapGoSDK: the official Go SDK's client (interop/gosdk-client,
// make peers) calling echo on the fixture directly and through sonde tap
// (as by default, recording to a file, and --no-record), 1 and 64 calls in
// flight; b.N calls per run,
// timed by the client itself (its start and handshake excluded).
func BenchmarkTapGoSDK(b *testing.B) {
	bin := peertest.GoSDKClient(b)
	for _, via := range vias {
		for _, conc := range []int{1, 64} {
			b.Run(via+"/c="+strconv.Itoa(conc), func(b *testing.B) {
				r := gosdkRun(b, bin, b.N, conc, "echo", `{"value":"hello"}`, fixtureVia(b, via, b.TempDir())...)
				b.ReportMetric(r.CallsPerS, "calls/s")
				b.ReportMetric(float64(r.P50), "p50-ns")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
