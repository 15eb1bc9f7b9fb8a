package live

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
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

// openLoop makes n calls at rate calls per second, whatever the answers,
// with at most conc in flight (a call due while conc are waits, and its
// wait counts in its latency).
func (r *benchRun) openLoop(ctx context.Context, n int, rate float64, conc int) {
	slots := make(chan struct{}, conc)
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := 0; i < n; i++ {
		due := r.start.Add(time.Duration(i) * interval)
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
		}
		select {
		case <-ctx.Done():
		case slots <- struct{}{}:
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			r.call(ctx, i, due)
		}()
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

// maxRate bounds --rate.
const maxRate = 1_000_000

// parseRate reads --rate: N/s (or N, per second), N/m.
func parseRate(s string) (float64, error) {
	num, per := s, time.Second
	if n, unit, ok := strings.Cut(s, "/"); ok {
		num = n
		switch unit {
		case "s":
		case "m":
			per = time.Minute
		default:
			return 0, fmt.Errorf("--rate %q: the unit is /s or /m", s)
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f > 0) {
		return 0, fmt.Errorf("--rate %q: want calls per second above 0, as 200/s", s)
	}
	f = f * float64(time.Second) / float64(per)
	if f > maxRate {
		return 0, fmt.Errorf("--rate %q: at most %d/s", s, maxRate)
	}
	return f, nil
}

// maxRateCalls bounds rate × duration.
const maxRateCalls = 10_000_000

// benchShape reads --rate and --duration: the rate (0 for the closed loop
// of -n and -c), with o.Calls and o.Concurrency set for it.
func benchShape(cmd *cobra.Command, o *BenchOptions) (float64, error) {
	if o.Rate == "" {
		if o.Duration != 0 {
			return 0, cmdutil.Usagef("--duration goes with --rate")
		}
		return 0, nil
	}
	rate, err := parseRate(o.Rate)
	switch {
	case err != nil:
		return 0, cmdutil.Usagef(err.Error())
	case o.Duration <= 0:
		return 0, cmdutil.Usagef("--rate needs --duration (how long to send)")
	case cmd.Flags().Changed("calls"):
		return 0, cmdutil.Usagef("--rate and -n do not go together: the calls are rate × --duration")
	}
	n := rate * o.Duration.Seconds()
	if n > maxRateCalls {
		return 0, cmdutil.Usagef(fmt.Sprintf("--rate × --duration is %.0f calls, at most %d", n, maxRateCalls))
	}
	o.Calls = max(int(n+0.5), 1)
	if !cmd.Flags().Changed("concurrency") {
		o.Concurrency = 256
	}
	return rate, nil
}
