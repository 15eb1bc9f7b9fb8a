package live

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"

	"github.com/sonde-mcp/sonde/client"
)

// BenchReport is the result of `sonde bench` (its --json output).
type BenchReport struct {
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

// BenchOptions are the flags of `sonde bench`.
type BenchOptions struct {
	Server      connect.Flags
	Args        string // --args: a JSON object, @FILE or @-
	Calls       int    // -n
	Concurrency int    // -c
	CPUProfile  string // --cpuprofile: a pprof CPU profile of the calls
}

// NewCmdBench is `sonde bench TOOL`.
func NewCmdBench(env *cmdutil.Env) *cobra.Command {
	var o BenchOptions
	cmd := &cobra.Command{
		Use:   "bench TOOL [--args JSON] [-n N] [-c C] (-- COMMAND [ARG...] | --url URL)",
		Short: "Load a tool: calls/s and latency p50/p95/p99/max",
		Long: `Run the handshake, then call TOOL N times from C concurrent callers over one session
(pipelined: up to C requests in flight), and report calls per second and latency
percentiles (nearest rank, from queueing to outcome). Failed calls are counted by
error code; the exit status is the one of the most frequent error code (0 when none).

--cpuprofile FILE writes a CPU profile of sonde while it makes the calls (the
handshake excluded), for ` + "`go tool pprof FILE`" + ` (docs/performance.md).

` + cmdutil.ExitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, t, err := connect.Resolve(cmd, &o.Server, args, 1, "bench takes exactly one TOOL before --")
			if err != nil {
				return err
			}
			if o.Calls < 1 || o.Concurrency < 1 {
				return cmdutil.Usagef("-n and -c must be at least 1")
			}
			toolArgs, err := readJSONObject(o.Args, env.In)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("max-pending") && o.Server.MaxPending < 1 {
				return cmdutil.Usagef("--max-pending must be at least 1")
			}
			t.MaxPending = o.Concurrency // -c calls in flight need room in the pending map
			return runBench(cmd.Context(), env, &o, t, own[0], toolArgs)
		},
	}
	o.Server.Register(cmd.Flags())
	cmd.Flags().StringVar(&o.Args, "args", "", "tool arguments: a JSON object, @FILE, or @- for stdin")
	cmd.Flags().IntVarP(&o.Calls, "calls", "n", 1000, "number of calls")
	cmd.Flags().IntVarP(&o.Concurrency, "concurrency", "c", 1, "calls in flight at once")
	cmd.Flags().StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the calls to `FILE` (for go tool pprof)")
	return cmd
}

// runBench loads tool on the target's server and reports.
func runBench(ctx context.Context, env *cmdutil.Env, o *BenchOptions, t *connect.Target, tool string, toolArgs []byte) error {
	var prof *os.File
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "--cpuprofile: " + err.Error()}
		}
		prof = f
		defer prof.Close()
	}
	return connect.Run(ctx, env, &o.Server, t, func(ctx context.Context, s *connect.Session) error {
		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "--cpuprofile: " + err.Error()}
			}
		}
		rep := BenchCalls(ctx, s.Client, tool, toolArgs, o.Calls, o.Concurrency)
		if prof != nil {
			pprof.StopCPUProfile()
		}
		printBench(env, o.Server.JSON, rep)
		if ctx.Err() != nil {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted, Msg: "bench interrupted"}
		}
		return benchStatus(rep)
	})
}

// BenchCalls makes n calls of tool with args, conc at a time, over c (an
// initialized client), and measures them: the engine of `sonde bench`, also
// driven by the peer benchmark (bench/peers).
func BenchCalls(ctx context.Context, c *client.Client, tool string, args []byte, n, conc int) BenchReport {
	rep := BenchReport{Tool: tool, Calls: n, Concurrency: conc, Errors: map[string]int{}}
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
				// Only isError is read from the result (client.ToolIsError): its
				// content is not decoded, as nothing here shows it.
				raw, err := c.GoTool(ctx, tool, args, client.CallOptions{}).Wait()
				isError := false
				if err == nil {
					isError, err = client.ToolIsError(tool, raw)
				}
				d := time.Since(t0)
				mu.Lock()
				switch {
				case err != nil:
					rep.Errors[string(client.CodeOf(err))]++
				case isError:
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

func printBench(env *cmdutil.Env, asJSON bool, r BenchReport) {
	if asJSON {
		cmdutil.WriteJSON(env.Out, r)
		return
	}
	failed := 0
	for _, k := range r.Errors {
		failed += k
	}
	fmt.Fprintf(env.Out, "bench %s: %d calls, concurrency %d: %d ok, %d isError, %d failed in %s\n",
		r.Tool, r.Calls, r.Concurrency, r.Succeeded, r.ToolErrors, failed, textfmt.Dur(time.Duration(r.Seconds*float64(time.Second))))
	fmt.Fprintf(env.Out, "  calls/s  %.1f\n", r.CallsPerSec)
	fmt.Fprintf(env.Out, "  latency  p50 %.3fms  p95 %.3fms  p99 %.3fms  max %.3fms\n", r.P50MS, r.P95MS, r.P99MS, r.MaxMS)
	codes := make([]string, 0, len(r.Errors))
	for code := range r.Errors {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		fmt.Fprintf(env.Out, "  errors   %s x%d\n", code, r.Errors[code])
	}
}

func benchStatus(r BenchReport) error {
	best, count := "", 0
	for code, k := range r.Errors {
		if k > count || k == count && code < best {
			best, count = code, k
		}
	}
	if count > 0 {
		return &cmdutil.ExitStatus{Code: cmdutil.CodeExit(client.Code(best)), Msg: fmt.Sprintf("%d of %d calls failed, most with %s", count, r.Calls, best)}
	}
	if r.ToolErrors > 0 {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: fmt.Sprintf("%d of %d calls returned isError", r.ToolErrors, r.Calls)}
	}
	return nil
}
