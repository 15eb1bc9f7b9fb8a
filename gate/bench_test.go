package gate

import (
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/internal/capturegen"
	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// BenchmarkCollector folds a generated capture of 100k events (pipelined
// calls, slow ones, timeouts answered late) through the gate's collector
// (lint, outcomes, diff's fold), and through diff's fold alone; ns/event
// and allocs/event are reported.
func BenchmarkCollector(b *testing.B) {
	path := capturegen.Temp(b, "gen.jsonl", capturegen.Options{Events: 100_000, Step: 100 * time.Microsecond, SlowEvery: 40, SlowFor: 500, TimeoutEvery: 90})
	evs := capturetest.Events(b, path)
	b.Run("gate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := NewCollector("sonde lint", path, path, FailOn{Must: true, Timeout: true})
			for i, ev := range evs {
				c.Add(ev, i+2)
			}
			c.Report()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
	})
	b.Run("diff", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := diff.NewCollector()
			for _, ev := range evs {
				c.Add(ev)
			}
			diff.Costs(c.Shown())
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
	})
}
