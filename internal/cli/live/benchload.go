package live

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// benchRun is one run of sonde bench: the calls, and what they measured.
type benchRun struct {
	c      *client.Client
	tool   string
	args   []byte
	echo   *echoCheck
	before client.Stats
	start  time.Time

	mu  sync.Mutex
	rep BenchReport
	lat []time.Duration
}

func newBenchRun(c *client.Client, tool string, args []byte, n, conc int, echo *echoCheck) *benchRun {
	return &benchRun{
		c: c, tool: tool, args: args, echo: echo, before: c.Stats(), start: time.Now(), lat: make([]time.Duration, 0, n),
		rep: BenchReport{Tool: tool, Calls: n, Concurrency: conc, Errors: map[string]int{}, EchoChecked: echo != nil, Thresholds: []ThresholdResult{}},
	}
}

// call makes call number i; its latency counts from due (when it was due:
// its start, or its slot of --rate, so a server that falls behind is seen
// to).
func (r *benchRun) call(ctx context.Context, i int, due time.Time) {
	callArgs := r.args
	if r.echo != nil {
		callArgs = r.echo.argsFor(i)
	}
	// Only isError is read from the result (client.ToolIsError): its
	// content is not decoded, as nothing here shows it (but for
	// --check-echo, which reads its text).
	raw, err := r.c.GoTool(ctx, r.tool, callArgs, client.CallOptions{}).Wait()
	isError := false
	if err == nil {
		isError, err = client.ToolIsError(r.tool, raw)
	}
	d := time.Since(due)
	mismatched := r.echo != nil && err == nil && !isError && !r.echo.matches(i, raw)
	r.mu.Lock()
	defer r.mu.Unlock()
	if mismatched {
		r.rep.Mismatched++
	}
	switch {
	case err != nil:
		r.rep.Errors[string(client.CodeOf(err))]++
	case isError:
		r.rep.ToolErrors++
	default:
		r.rep.Succeeded++
		r.lat = append(r.lat, d)
	}
}

// closedLoop makes n calls from conc callers, each starting its next call
// when its last one ended.
func (r *benchRun) closedLoop(ctx context.Context, n, conc int) {
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					return
				}
				r.call(ctx, i, time.Now())
			}
		}()
	}
	wg.Wait()
}

// openLoop makes the calls of the stages, each when it is due whatever
// the answers, with at most conc in flight (a call due while conc are
// waits, and its wait counts in its latency). Once send ends no call
// starts (the ramp's bound on a step); those started run on ctx.
func (r *benchRun) openLoop(ctx, send context.Context, stages []benchStage, conc int) {
	slots := make(chan struct{}, conc)
	var wg sync.WaitGroup
	timer := time.NewTimer(0)
	defer timer.Stop()
	i := -1
	for at := range dueTimes(stages) {
		i++
		due := r.start.Add(at)
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-send.Done():
			case <-timer.C:
			}
		}
		select {
		case <-send.Done():
		case slots <- struct{}{}:
		}
		if send.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-slots }()
			r.call(ctx, i, due)
		}(i)
	}
	wg.Wait()
}

// report is what the run measured.
func (r *benchRun) report() BenchReport {
	elapsed := time.Since(r.start)
	after := r.c.Stats()
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.rep
	rep.Late, rep.Duplicate, rep.Unknown = after.Late-r.before.Late, after.Duplicate-r.before.Duplicate, after.Unknown-r.before.Unknown
	rep.Seconds = elapsed.Seconds()
	done := rep.Succeeded + rep.ToolErrors + rep.failed()
	if elapsed > 0 {
		rep.CallsPerSec = float64(done) / elapsed.Seconds()
	}
	rep.OK = done == rep.Calls && rep.ToolErrors == 0 && len(rep.Errors) == 0
	lat := r.lat
	slices.Sort(lat)
	rep.P50MS, rep.P95MS, rep.P99MS = ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99))
	if len(lat) > 0 {
		rep.MaxMS = ms(lat[len(lat)-1])
	}
	return rep
}
