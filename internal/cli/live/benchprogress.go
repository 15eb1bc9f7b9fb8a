package live

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// progressWindow is how many of the latest latencies the progress line's
// p99 is taken over.
const progressWindow = 10_000

// progressEvery is how often the progress line is rewritten.
const progressEvery = 500 * time.Millisecond

// snapshot is the report so far: counts, the rate since the start, and
// the latencies of the last progressWindow calls.
func (r *benchRun) snapshot() BenchReport {
	elapsed := time.Since(r.start)
	r.mu.Lock()
	rep := r.rep
	rep.Errors = map[string]int{}
	for k, v := range r.rep.Errors {
		rep.Errors[k] = v
	}
	lat := slices.Clone(r.lat[max(len(r.lat)-progressWindow, 0):])
	r.mu.Unlock()
	if elapsed > 0 {
		rep.CallsPerSec = float64(rep.Succeeded+rep.ToolErrors+rep.failed()) / elapsed.Seconds()
	}
	slices.Sort(lat)
	rep.P50MS, rep.P95MS, rep.P99MS = ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99))
	if len(lat) > 0 {
		rep.MaxMS = ms(lat[len(lat)-1])
	}
	return rep
}

// progressLine is one line of progress: calls done of all, the rate, the
// recent p99, and the thresholds failing so far.
func progressLine(rep BenchReport, ths []Threshold) string {
	done := rep.Succeeded + rep.ToolErrors + rep.failed()
	s := fmt.Sprintf("sonde: bench %d/%d calls, %.1f/s, p99 %.3fms", done, rep.Calls, rep.CallsPerSec, rep.P99MS)
	if n := rep.failed() + rep.ToolErrors; n > 0 {
		s += fmt.Sprintf(", %d errors", n)
	}
	var failing []string
	for _, t := range checkThresholds(ths, &rep) {
		if !t.OK {
			failing = append(failing, t.Expr)
		}
	}
	if len(failing) > 0 {
		s += ", failing " + strings.Join(failing, " ")
	}
	return s
}

// showProgress rewrites the progress line on w (a terminal) until stop is
// closed, then erases it; it returns when it has. w nil shows nothing.
func (r *benchRun) showProgress(w io.Writer, ths []Threshold, stop <-chan struct{}) <-chan struct{} {
	gone := make(chan struct{})
	if w == nil {
		close(gone)
		return gone
	}
	go func() {
		defer close(gone)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		shown := false
		for {
			select {
			case <-stop:
				if shown {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-tick.C:
				fmt.Fprint(w, "\r\x1b[K"+progressLine(r.snapshot(), ths))
				shown = true
			}
		}
	}()
	return gone
}
