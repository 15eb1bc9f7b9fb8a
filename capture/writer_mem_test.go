package capture

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// heapPeak samples HeapInuse every few milliseconds until stop is called,
// which returns the highest sample. Sampling can miss the very top; the
// figure is for the record (docs/performance.md), not for an assertion.
func heapPeak() (stop func() uint64) {
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// TestRecordBigResponseMemory: a 64 MiB response from the fixture (a real
// subprocess) read by the client and written to a capture file by the
// recorder allocates at most 2.5× the line in all: the line reader's ~2×,
// and the record's raw bytes escaped straight to the file in small pieces,
// not a string copy, an escaped copy and a grown buffer. TotalAlloc counts
// bytes, not time; the sampled peak of the heap in use is logged.
func TestRecordBigResponseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 64 MiB response")
	}
	const n = 64 << 20
	l := startLive(t, liveOpts{maxLine: 200 << 20, timeout: time.Minute})
	if _, err := l.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	params := json.RawMessage(`{"name":"big","arguments":{"bytes":` + strconv.Itoa(n) + `}}`)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := heapPeak()
	if _, err := l.c.Call(context.Background(), "tools/call", params, client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	_, sum := l.finish()
	peak := stop()
	runtime.ReadMemStats(&after)
	if sum.Err != nil {
		t.Fatal(sum.Err)
	}
	if fi, err := os.Stat(l.path); err != nil || fi.Size() < n {
		t.Fatalf("capture: %v, %v", fi, err)
	}
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB response, recorded: allocated %.1f MiB (%.2f×), heap in use at most %.1f MiB (%.2f×) above %.1f MiB before",
		n>>20, float64(got)/(1<<20), float64(got)/n, float64(peak-min(peak, before.HeapInuse))/(1<<20),
		float64(peak-min(peak, before.HeapInuse))/n, float64(before.HeapInuse)/(1<<20))
	if got > n*5/2 {
		t.Errorf("allocated %d bytes for a %d-byte response (%.2f×), want at most 2.5×", got, n, float64(got)/n)
	}
}
