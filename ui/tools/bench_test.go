package tools

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// events returns n frame events, one in a thousand a list_changed.
func events(n int) []client.Event {
	evs := make([]client.Event, n)
	for i := range evs {
		if i%1000 == 999 {
			evs[i] = listChanged(uint64(i + 1))
		} else {
			evs[i] = otherFrame(uint64(i + 1))
		}
	}
	return evs
}

func BenchmarkApply(b *testing.B) {
	m := newModel(b, 118, 36)
	evs := events(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Apply(evs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

// BenchmarkView draws the list and a freshly laid-out result after a history
// of n events and n results: the cost must not depend on n.
func BenchmarkView(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("history=%s", map[int]string{1_000: "1k", 1_000_000: "1M"}[n]), func(b *testing.B) {
			m := newModel(b, 118, 36)
			batch := events(1000)
			res := &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "hello"}},
				StructuredContent: json.RawMessage(`{"value":"hello","n":[1,2,3]}`)}
			for i := 0; i < n; i += len(batch) {
				m.Apply(batch)
			}
			for i := range n {
				m.Update(ResultMsg{Tool: "echo", ID: jsonrpc.Int(int64(i)), Result: res, Latency: time.Millisecond})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				m.mode = modeList
				checkSizeOnce(b, m)
				m.mode = modeResult
				m.cache = bodyCache{}
				checkSizeOnce(b, m)
			}
		})
	}
}

func checkSizeOnce(b *testing.B, m *Model) {
	if v := m.View(); len(v) < m.h {
		b.Fatal("short view")
	}
}
