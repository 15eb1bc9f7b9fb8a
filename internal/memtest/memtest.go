// Package memtest measures what a piece of code allocates, for tests that
// bound memory by bytes rather than by time (machines are shared and
// noisy; bytes allocated are not).
package memtest

import (
	"runtime"
	"sync"
	"time"
)

// Use is what f allocated and how high the heap went while it ran.
type Use struct {
	// Total is the bytes allocated while f ran (runtime.MemStats
	// TotalAlloc): an upper bound of its peak, and deterministic.
	Total uint64
	// Peak is the highest HeapInuse sampled every 2ms above the heap in
	// use before f; sampling can miss the very top, so it is for the
	// record, not for an assertion.
	Peak uint64
	// Before is the heap in use before f.
	Before uint64
}

// Measure runs f after a garbage collection and returns its Use.
func Measure(f func()) Use {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
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
	f()
	close(done)
	wg.Wait()
	runtime.ReadMemStats(&after)
	return Use{Total: after.TotalAlloc - before.TotalAlloc, Peak: peak - min(peak, before.HeapInuse), Before: before.HeapInuse}
}

// Ratio is x over n, for messages: "2.00×".
func Ratio(x uint64, n int) float64 { return float64(x) / float64(n) }
