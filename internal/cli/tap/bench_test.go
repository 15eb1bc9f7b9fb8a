package tap_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
var vias = []string{"direct", "tap", "tap-break", "tap-record-file", "tap-no-record"}

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
	case "tap-break":
		// A breakpoint that matches nothing: every line is judged.
		sessionsHome(b)
		argv = append([]string{os.Args[0], "tap", "--break", "method:nothing/here", "--"}, argv...)
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

// floorVias are the paths BenchmarkTapFloor compares: the fixture direct,
// through relays that do nothing but copy bytes (socat; relay-c,
// testdata/relay.c built with gcc, one thread sleeping in poll until either
// pipe has bytes; relay-c-spin, the same relay trying both pipes without
// sleeping for relaySpin after the last bytes it copied; relay-go, goRelay:
// two goroutines with a read and write loop each, as the tap's forwarders),
// and through sonde tap without and with recording.
var floorVias = []string{"direct", "socat", "relay-c", "relay-c-spin", "relay-go", "tap-no-record", "tap"}

// relaySpin is how long relay-c-spin keeps trying, in microseconds.
const relaySpin = "200"

// goRelayArg, as the first argument of a re-executed test binary, runs
// goRelay on the rest.
const goRelayArg = "relay-go"

// goRelay starts argv with pipes for its stdin and stdout and copies its
// own stdin and stdout to and from them, nothing else: the least a
// process in the middle written in Go does. It returns the server's exit
// status.
func goRelay(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err1 := cmd.StdinPipe()
	out, err2 := cmd.StdoutPipe()
	if err := errors.Join(err1, err2, cmd.Start()); err != nil {
		return 1
	}
	copyLoop := func(dst io.Writer, src io.Reader) {
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go func() {
		copyLoop(in, os.Stdin)
		in.Close()
	}()
	var wg sync.WaitGroup
	wg.Go(func() { copyLoop(os.Stdout, out) })
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		if x, ok := errors.AsType[*exec.ExitError](err); ok {
			return x.ExitCode()
		}
		return 1
	}
	return 0
}

// floorRounds is how many times BenchmarkTapFloor runs each path, taking
// turns, for the medians it reports.
const floorRounds = 15

// BenchmarkTapFloor: what any process in the middle costs the official Go
// SDK's client calling echo on the fixture (b.N calls, 1 in flight, then
// 64), against what sonde tap costs. The paths take turns, floorRounds
// times, on a machine whose load changes from one second to the next;
// each reports the median of its rounds, its p50 latency (VIA-p50-µs) at
// c=1 and its calls/s (VIA-calls/s) at c=64, and its ratio to direct
// (VIA-x). socat is skipped when it is not installed, relay-c and
// relay-c-spin when gcc is not.
func BenchmarkTapFloor(b *testing.B) {
	bin := peertest.GoSDKClient(b)
	relayC := buildRelayC(b)
	socat, _ := exec.LookPath("socat")
	for _, conc := range []int{1, 64} {
		b.Run("c="+strconv.Itoa(conc), func(b *testing.B) {
			got := map[string][]float64{}
			for range floorRounds {
				for _, via := range floorVias {
					dir := b.TempDir()
					argv := fixtureVia(b, "direct", dir)
					switch via {
					case "socat":
						if socat == "" {
							continue
						}
						argv = []string{socat, "-b", "65536", "STDIO", "EXEC:" + strings.Join(argv, " ") + ",pipes"}
					case "relay-c", "relay-c-spin":
						if relayC == "" {
							continue
						}
						if via == "relay-c-spin" {
							argv = append([]string{"-spin", relaySpin}, argv...)
						}
						argv = append([]string{relayC}, argv...)
					case "relay-go":
						argv = append([]string{os.Args[0], goRelayArg}, argv...)
					case "tap", "tap-no-record":
						argv = fixtureVia(b, via, dir)
					}
					r := gosdkRun(b, bin, b.N, conc, "echo", `{"value":"hello"}`, argv...)
					v := r.CallsPerS
					if conc == 1 {
						v = float64(r.P50) / 1e3
					}
					got[via] = append(got[via], v)
				}
			}
			unit := "calls/s"
			if conc == 1 {
				unit = "p50-µs"
			}
			direct := median(got["direct"])
			for _, via := range floorVias {
				if len(got[via]) == 0 {
					continue
				}
				m := median(got[via])
				b.ReportMetric(m, via+"-"+unit)
				if via != "direct" {
					b.ReportMetric(m/direct, via+"-x")
				}
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// median returns the middle of v (sorted in place).
func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// buildRelayC compiles testdata/relay.c into a temporary folder, or
// returns "" when there is no gcc.
func buildRelayC(b *testing.B) string {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return ""
	}
	out := filepath.Join(b.TempDir(), "relay")
	if msg, err := exec.Command(gcc, "-O2", "-o", out, filepath.Join("testdata", "relay.c")).CombinedOutput(); err != nil {
		b.Fatalf("gcc: %v\n%s", err, msg)
	}
	return out
}
