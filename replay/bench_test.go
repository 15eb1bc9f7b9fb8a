package replay_test

import (
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/capturegen"
	"github.com/sonde-mcp/sonde/internal/proctest"
	"github.com/sonde-mcp/sonde/replay"
)

// BenchmarkOpenMillion opens the million-event capture of the replay
// benchmark (ui's BenchmarkReplayMillion; the file is generated in a
// temporary folder): the index and the timeline's pass, what `sonde
// replay` does before its first screen. cpu-ms/op is the process's CPU
// time per open (the garbage collector's included), which a loaded
// machine does not inflate as it does the wall time.
func BenchmarkOpenMillion(b *testing.B) {
	path := generate(b, capturegen.Options{Events: 1_000_000, Step: 100 * time.Microsecond, SlowEvery: 40, SlowFor: 5000, TimeoutEvery: 90})
	b.ReportAllocs()
	var cpu time.Duration
	n := 0
	for b.Loop() {
		c0 := proctest.CPUTime()
		tl, err := replay.Open(path, replay.DefaultLinger)
		cpu += proctest.CPUTime() - c0
		n++
		if err != nil {
			b.Fatal(err)
		}
		if tl.Len() < 999_000 {
			b.Fatalf("%d events", tl.Len())
		}
		tl.Close()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(n), "cpu-ms/op")
}
