package cli

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/textfmt"

	"github.com/sonde-mcp/sonde/client"
)

// benchReport is the result of `sonde bench`.
type benchReport struct {
	Tool        string         `json:"tool"`
	Calls       int            `json:"calls"`
	Concurrency int            `json:"concurrency"`
	OK          bool           `json:"ok"`
	Succeeded   int            `json:"succeeded"`
	Errors      map[string]int `json:"errors"`
	ToolErrors  int            `json:"tool_errors"`
	Seconds     float64        `json:"seconds"`
	CallsPerSec float64        `json:"calls_per_sec"`
	P50MS       float64        `json:"p50_ms"`
	P95MS       float64        `json:"p95_ms"`
	P99MS       float64        `json:"p99_ms"`
	MaxMS       float64        `json:"max_ms"`
}

func newBenchCmd(io streams) *cobra.Command {
	var f serverFlags
	var argsText string
	var n, conc int
	cmd := &cobra.Command{
		Use:   "bench TOOL [--args JSON] [-n N] [-c C] (-- COMMAND [ARG...] | --url URL)",
		Short: "Load a tool: calls/s and latency p50/p95/p99/max",
		Long: `Run the handshake, then call TOOL N times from C concurrent callers over one session
(pipelined: up to C requests in flight), and report calls per second and latency
percentiles (nearest rank, from queueing to outcome). Failed calls are counted by
error code; the exit status is the one of the most frequent error code (0 when none).

` + exitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, argv, err := f.serverArgv(cmd, args, 1, "bench takes exactly one TOOL before --")
			if err != nil {
				return err
			}
			if n < 1 || conc < 1 {
				return usagef("-n and -c must be at least 1")
			}
			toolArgs, err := readJSONObject(argsText, io.in)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("max-pending") && f.maxPending < 1 {
				return usagef("--max-pending must be at least 1")
			}
			if f.maxPending < conc {
				f.maxPending = conc // -c calls in flight need room in the pending map
			}
			s, err := f.connect(cmd.Context(), io, argv)
			if err != nil {
				return jsonFailure(io.out, f.json, err)
			}
			defer s.close()
			rep := runBench(cmd.Context(), s.c, own[0], toolArgs, n, conc)
			printBench(io, f.json, rep)
			if cmd.Context().Err() != nil {
				return &exitStatus{code: exitInterrupted, msg: "bench interrupted"}
			}
			return benchStatus(rep)
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&argsText, "args", "", "tool arguments: a JSON object, @FILE, or @- for stdin")
	cmd.Flags().IntVarP(&n, "calls", "n", 1000, "number of calls")
	cmd.Flags().IntVarP(&conc, "concurrency", "c", 1, "calls in flight at once")
	return cmd
}

func runBench(ctx context.Context, c *client.Client, tool string, args []byte, n, conc int) benchReport {
	rep := benchReport{Tool: tool, Calls: n, Concurrency: conc, Errors: map[string]int{}}
	lat := make([]time.Duration, 0, n)
	var mu sync.Mutex
	next := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		next <- struct{}{}
	}
	close(next)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				if ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				res, _, err := c.CallTool(ctx, tool, args, client.CallOptions{})
				d := time.Since(t0)
				mu.Lock()
				switch {
				case err != nil:
					rep.Errors[string(client.CodeOf(err))]++
				case res.IsError:
					rep.ToolErrors++
				default:
					rep.Succeeded++
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	rep.Seconds = elapsed.Seconds()
	done := rep.Succeeded + rep.ToolErrors
	for _, k := range rep.Errors {
		done += k
	}
	if elapsed > 0 {
		rep.CallsPerSec = float64(done) / elapsed.Seconds()
	}
	rep.OK = done == n && rep.ToolErrors == 0 && len(rep.Errors) == 0
	slices.Sort(lat)
	rep.P50MS, rep.P95MS, rep.P99MS = ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99))
	if len(lat) > 0 {
		rep.MaxMS = ms(lat[len(lat)-1])
	}
	return rep
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func printBench(io streams, asJSON bool, r benchReport) {
	if asJSON {
		writeJSON(io.out, r)
		return
	}
	failed := 0
	for _, k := range r.Errors {
		failed += k
	}
	fmt.Fprintf(io.out, "bench %s: %d calls, concurrency %d: %d ok, %d isError, %d failed in %s\n",
		r.Tool, r.Calls, r.Concurrency, r.Succeeded, r.ToolErrors, failed, textfmt.Dur(time.Duration(r.Seconds*float64(time.Second))))
	fmt.Fprintf(io.out, "  calls/s  %.1f\n", r.CallsPerSec)
	fmt.Fprintf(io.out, "  latency  p50 %.3fms  p95 %.3fms  p99 %.3fms  max %.3fms\n", r.P50MS, r.P95MS, r.P99MS, r.MaxMS)
	codes := make([]string, 0, len(r.Errors))
	for code := range r.Errors {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		fmt.Fprintf(io.out, "  errors   %s x%d\n", code, r.Errors[code])
	}
}

func benchStatus(r benchReport) error {
	best, count := "", 0
	for code, k := range r.Errors {
		if k > count || k == count && code < best {
			best, count = code, k
		}
	}
	if count > 0 {
		return &exitStatus{code: codeExit(client.Code(best)), msg: fmt.Sprintf("%d of %d calls failed, most with %s", count, r.Calls, best)}
	}
	if r.ToolErrors > 0 {
		return &exitStatus{code: exitToolError, msg: fmt.Sprintf("%d of %d calls returned isError", r.ToolErrors, r.Calls)}
	}
	return nil
}
