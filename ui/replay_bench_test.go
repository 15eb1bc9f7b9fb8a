package ui

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/capturegen"
	"github.com/sonde-mcp/sonde/internal/proctest"
	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// BenchmarkReplayMillion opens a generated capture of a million events
// (calls at 10k events/s, every 40th call in flight for 5,000 events, every
// 90th timing out with a late answer) as `sonde replay` does: index and
// scan (open), the rebuild at the end and the first render (first-render),
// then a seek back to the middle and its render (seek-middle). It also
// reports the heap the replay holds once open, and the CPU time of each step
// beside its wall time (on a loaded machine the wall time mostly waits).
func BenchmarkReplayMillion(b *testing.B) {
	path := capturegen.Temp(b, "million.jsonl", capturegen.Options{Events: 1_000_000, Step: 100 * time.Microsecond, SlowEvery: 40, SlowFor: 5000, TimeoutEvery: 90})
	var open, first, seek, openCPU, firstCPU, seekCPU time.Duration
	var heap uint64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		c0, t0 := proctest.CPUTime(), time.Now()
		tl, err := replay.Open(path, replay.DefaultLinger)
		if err != nil {
			b.Fatal(err)
		}
		c1, t1 := proctest.CPUTime(), time.Now()
		rh := &replayHarness{t: b, tl: tl, m: New(Options{Replay: tl, Palette: theme.NoColor(), NoColor: true, Command: path})}
		rh.send(tea.WindowSizeMsg{Width: 120, Height: 40})
		rh.run(rh.m.Init())
		_ = rh.m.View()
		c2, t2 := proctest.CPUTime(), time.Now()
		rh.keys("t")
		rh.typeText("#" + strconv.Itoa(tl.Len()/2))
		rh.keys("enter")
		_ = rh.m.View()
		c3, t3 := proctest.CPUTime(), time.Now()
		if rh.m.rp.pos != tl.Len()/2 || tl.Len() < 1_000_000 {
			b.Fatalf("at %d of %d", rh.m.rp.pos, tl.Len())
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap += after.HeapAlloc - before.HeapAlloc
		open += t1.Sub(t0)
		first += t2.Sub(t1)
		seek += t3.Sub(t2)
		openCPU, firstCPU, seekCPU = openCPU+c1-c0, firstCPU+c2-c1, seekCPU+c3-c2
		runtime.KeepAlive(rh)
		tl.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64(open.Milliseconds())/n, "open-ms")
	b.ReportMetric(float64(first.Milliseconds())/n, "first-render-ms")
	b.ReportMetric(float64(seek.Milliseconds())/n, "seek-middle-ms")
	b.ReportMetric(float64(heap)/n/(1<<20), "heap-MiB")
	// CPU time of the process in each step (the garbage collector's
	// helpers included): what the step costs on an idle machine.
	b.ReportMetric(float64(openCPU.Milliseconds())/n, "open-cpu-ms")
	b.ReportMetric(float64(firstCPU.Milliseconds())/n, "first-render-cpu-ms")
	b.ReportMetric(float64(seekCPU.Milliseconds())/n, "seek-middle-cpu-ms")
}
