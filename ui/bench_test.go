package ui

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// benchFrames are the frames the benchmarks cycle through, shared by the
// events (the panes keep the pointer). Their Time is zero, so each frame
// takes its event's time.
var benchFrames = func() []*client.FrameInfo {
	mk := func(dir client.Direction, raw string, v client.Verdict, detail string) *client.FrameInfo {
		f := client.NewInFrame([]byte(raw), time.Time{})
		f.Dir = dir
		return &client.FrameInfo{Frame: f, Verdict: v, Detail: detail, VerdictInDetail: strings.HasPrefix(detail, string(v)+" ")}
	}
	return []*client.FrameInfo{
		mk(client.Out, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"progressToken":7}}}`, client.VerdictSent, ""),
		mk(client.In, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":2}}`, client.VerdictProgress, "progress 1/2 for id 7"),
		mk(client.In, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`, client.VerdictResolved, "resolved id 7 after 2ms"),
		mk(client.In, "debug: cache warm", client.VerdictMalformed, "line on stdout is not JSON: servers must log to stderr"),
	}
}()

// benchEvents returns n events of a busy session, 1 ms apart: per call
// its queued, sent, progress and resolved transitions and three frames, and
// now and then a stderr line or a malformed line.
func benchEvents(n int) []client.Event {
	evs := make([]client.Event, 0, n)
	total := 2.0
	add := func(ev client.Event) {
		if len(evs) < n {
			ev.Seq = uint64(len(evs) + 1)
			ev.Time = t0.Add(time.Duration(len(evs)) * time.Millisecond)
			evs = append(evs, ev)
		}
	}
	req := func(id int64, st client.State) *client.ReqInfo {
		r := &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(id), Method: "tools/call", Tool: "echo", State: st}
		add(client.Event{Kind: client.EvRequest, Req: r})
		return r
	}
	frame := func(i int) { add(client.Event{Kind: client.EvFrame, Frame: benchFrames[i]}) }
	for id := int64(1); len(evs) < n; id++ {
		req(id, client.StateQueued)
		frame(0)
		req(id, client.StateSent)
		frame(1)
		req(id, client.StateProgress).Progress = &client.Progress{Progress: 1, Total: &total}
		frame(2)
		req(id, client.StateResolved).Latency = 2 * time.Millisecond
		if id%8 == 0 {
			add(client.Event{Kind: client.EvStderr, Stderr: []byte("echo: call " + strconv.FormatInt(id, 10) + " done\n")})
		}
		if id%64 == 0 {
			frame(3)
		}
	}
	return evs
}

// feedBatches delivers evs through Update in pump batches of size batch,
// with a clock tick after each (the pump and the clock interleave).
func feedBatches(tb testing.TB, hs *harness, evs []client.Event, batch int) {
	for i := 0; i < len(evs); i += batch {
		b := evs[i:min(i+batch, len(evs))]
		if hs.feed(b...) == nil {
			tb.Fatal("the pump was not re-armed")
		}
		hs.send(tickMsg(b[len(b)-1].Time))
	}
}

// BenchmarkUpdateEvents feeds 100k mixed events through Update in batches
// (4096 is the pump's largest), into a fresh 120×40 model each time.
func BenchmarkUpdateEvents(b *testing.B) {
	const n = 100_000
	evs := benchEvents(n)
	for _, batch := range []int{maxBatch, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				hs := newHarness(b, 120, 40)
				feedBatches(b, hs, evs, batch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/event")
		})
	}
}

// fillFrames feeds n frame events (after the scenario) in pump batches,
// reusing one batch buffer so that a million frames cost only the ring.
func fillFrames(tb testing.TB, hs *harness, n int) {
	buf := make([]client.Event, maxBatch)
	seq := uint64(1000)
	for done := 0; done < n; {
		k := min(maxBatch, n-done)
		for i := range buf[:k] {
			seq++
			buf[i] = client.Event{Seq: seq, Time: at(6000 + done + i), Kind: client.EvFrame, Frame: benchFrames[(done+i)%3]}
		}
		hs.feed(buf[:k]...)
		done += k
	}
}

// viewModel is a played 120×40 model whose frames pane holds n frames more
// than the scenario (its ring holds a million).
func viewModel(tb testing.TB, n int) *harness {
	hs := newHarness(tb, 120, 40, func(o *Options) { o.FrameCapacity = 1_000_000 })
	hs.play()
	fillFrames(tb, hs, n)
	if got, want := hs.m.frames.Len(), min(n+scenarioFrames, 1_000_000); got != want {
		tb.Fatalf("frames pane holds %d frames, want %d", got, want)
	}
	return hs
}

// BenchmarkView draws the whole screen with 1k and 1M frames in the
// history: the cost must not grow with it (only the visible rows are drawn).
func BenchmarkView(b *testing.B) {
	uitest.BenchView(b, "frames", func(b *testing.B, n int) func() {
		hs := viewModel(b, n)
		return func() { _ = hs.m.View() }
	})
}

// TestViewDoesNotGrowWithHistory is the deterministic side of
// BenchmarkView: drawing the screen allocates the same with 1k and 200k
// frames held.
func TestViewDoesNotGrowWithHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 200k frames")
	}
	allocs := func(n int) float64 {
		hs := viewModel(t, n)
		return testing.AllocsPerRun(20, func() { _ = hs.m.View() })
	}
	small, large := allocs(1_000), allocs(200_000)
	t.Logf("View allocations: %.0f with 1k frames, %.0f with 200k", small, large)
	if large > small*1.05+5 {
		t.Fatalf("View allocates %.0f times with 200k frames, %.0f with 1k", large, small)
	}
}
