package tap_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sonde-mcp/sonde/internal/peertest"
)

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
