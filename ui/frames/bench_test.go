package frames

import (
	"fmt"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// manyEvents returns n frame events cycling through the session's frames
// (sharing their FrameInfo), numbered 1..n, 1ms apart.
func manyEvents(n int) []client.Event {
	base := session()
	evs := make([]client.Event, n)
	for i := range evs {
		ev := base[i%len(base)]
		ev.Seq = uint64(i + 1)
		ev.Time = start.Add(time.Duration(i) * time.Millisecond)
		evs[i] = ev
	}
	return evs
}

// applyBatches applies evs in batches of 256, as the root delivers them.
func applyBatches(m *Model, evs []client.Event) {
	for i := 0; i < len(evs); i += 256 {
		m.Apply(evs[i:min(i+256, len(evs))])
	}
}

// BenchmarkApply folds 100k frame events into a default-size pane.
func BenchmarkApply(b *testing.B) { benchApply(b, "") }

// BenchmarkApplyFiltered is BenchmarkApply with a query active, so every
// new frame is matched as it arrives.
func BenchmarkApplyFiltered(b *testing.B) { benchApply(b, "tools/call") }

// benchApply folds 100k frame events into a new default-size pane, with
// query ("" for none) set first.
func benchApply(b *testing.B, query string) {
	evs := manyEvents(100_000)
	st := theme.New(theme.Dark())
	b.ReportAllocs()
	for b.Loop() {
		m := New(st, Options{})
		m.SetSize(118, 36)
		if query != "" {
			m.setQuery(query)
		}
		applyBatches(m, evs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e5, "ns/event")
}

// BenchmarkApplyTagged is BenchmarkApply over two servers (the aggregated
// inspector): batches tagged in turn, each server's lint apart, and with
// one server shown, so every new frame is matched against it.
func BenchmarkApplyTagged(b *testing.B) {
	evs := manyEvents(100_000)
	st := theme.New(theme.Dark())
	for _, only := range []string{"", "alpha"} {
		name := "all"
		if only != "" {
			name = "one-shown"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m := New(st, Options{})
				m.SetSize(118, 36)
				m.SetServer(only)
				for i := 0; i < len(evs); i += 256 {
					m.SetTag([]string{"alpha", "beta"}[i/256%2])
					m.Apply(evs[i:min(i+256, len(evs))])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e5, "ns/event")
		})
	}
}

// BenchmarkView draws the list holding 1k and 1M frames (the ring is as
// large as the history): the cost must not depend on the history.
func BenchmarkView(b *testing.B) {
	st := theme.New(theme.Dark())
	for _, n := range []int{1_000, 1_000_000} {
		evs := manyEvents(n)
		for _, query := range []string{"", "res"} {
			name := fmt.Sprintf("history=%dk", n/1000)
			if n >= 1_000_000 {
				name = fmt.Sprintf("history=%dM", n/1_000_000)
			}
			if query != "" {
				name += "/filter"
			}
			b.Run(name, func(b *testing.B) {
				m := New(st, Options{Capacity: n})
				m.SetSize(118, 36)
				applyBatches(m, evs)
				m.setQuery(query)
				press(m, "g")
				for range n / 2 / 33 {
					press(m, "pgdown") // a selection in the middle
				}
				b.ReportAllocs()
				for b.Loop() {
					_ = m.View()
				}
			})
		}
	}
}
