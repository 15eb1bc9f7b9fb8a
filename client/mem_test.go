package client

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
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

// TestBigResponseMemory: a 64 MiB response from the fixture (a real
// subprocess) through the client allocates about twice the line in all
// (the line reader's blocks and the line), and nothing per byte after
// that: the decoded result is a part of the line, not a copy. TotalAlloc
// counts bytes, not time, so the bound holds on a busy machine; the
// sampled peak of the heap in use is logged.
func TestBigResponseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 64 MiB response")
	}
	const n = 64 << 20
	s := start(t, Options{MaxLineBytes: 200 << 20, Timeout: time.Minute}, fixtureArgs{})
	s.init()
	params := json.RawMessage(`{"name":"big","arguments":{"bytes":` + strconv.Itoa(n) + `}}`)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := heapPeak()
	res, err := s.c.Call(context.Background(), "tools/call", params, CallOptions{})
	peak := stop()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < n {
		t.Fatalf("result of %d bytes", len(res))
	}
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB response: allocated %.1f MiB (%.2f×), heap in use at most %.1f MiB (%.2f×) above %.1f MiB before",
		n>>20, float64(got)/(1<<20), float64(got)/n, float64(peak-min(peak, before.HeapInuse))/(1<<20),
		float64(peak-min(peak, before.HeapInuse))/n, float64(before.HeapInuse)/(1<<20))
	if got > n*9/4 {
		t.Errorf("allocated %d bytes for a %d-byte response (%.2f×), want at most 2.25×", got, n, float64(got)/n)
	}
}
