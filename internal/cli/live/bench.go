package live

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"

	"github.com/sonde-mcp/sonde/client"
)

// BenchReport is the result of `sonde bench` (its --json output).
type BenchReport struct {
	Tool        string `json:"tool"`
	Calls       int    `json:"calls"`
	Concurrency int    `json:"concurrency"`
	// Rate is --rate, the calls per second asked for (0: closed loop).
	Rate float64 `json:"rate,omitempty"`
	// Stages are the open loop\'s rates over time (--rate, --stages).
	Stages []benchStage `json:"stages,omitempty"`
	// Timeouts is --policies: the calls under client timeout policies.
	Timeouts    *BenchTimeouts `json:"timeouts,omitempty"`
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
	// Late, Duplicate and Unknown count the answers the client told so
	// during the calls (client.Stats); Mismatched, with --check-echo
	// (EchoChecked), the answers that did not carry their own call's
	// token, or carried another's.
	Late        uint64 `json:"late"`
	Duplicate   uint64 `json:"duplicate"`
	Unknown     uint64 `json:"unknown"`
	EchoChecked bool   `json:"echo_checked"`
	Mismatched  int    `json:"mismatched"`
	// Thresholds are the --assert results, in the order given.
	Thresholds []ThresholdResult `json:"thresholds"`
}

// BenchOptions are the flags of `sonde bench`.
type BenchOptions struct {
	Server      connect.Flags
	Args        string        // --args: a JSON object, @FILE or @-
	Calls       int           // -n
	Concurrency int           // -c
	CPUProfile  string        // --cpuprofile: a pprof CPU profile of the calls
	Asserts     []string      // --assert: thresholds
	CheckEcho   string        // --check-echo ARG: a token per call in argument ARG, checked in its result
	Rate        string        // --rate: calls per second, whatever the answers (open loop)
	Duration    time.Duration // --duration: how long --rate sends
	Stages      string        // --stages: D:RATE,...: the rate ramped to each RATE over its D
	Policies    []string      // --policies: client timeout policies to evaluate the calls under
	Ramp        bool          // --ramp-to-failure: bisect over --rate for the highest at which --assert holds
	RampStep    time.Duration // --ramp-step: how long each step of the ramp sends
	RampSteps   int           // --ramp-steps: how many steps the ramp takes at most
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
Answers the client found late, duplicate or unknown (by id) are counted too.

--rate 200/s --duration 30s is an open loop instead: a call starts every 1/RATE whatever
the answers (rate × duration calls, at most -c in flight, -c 256 unless given), and a
call's latency counts from when it was due, so a server that falls behind shows.
--stages 10s:50,30s:200,10s:0 is an open loop whose rate ramps linearly, from 0, to
each RATE (calls/s) over its D.

--check-echo ARG checks that every answer is its own call's: each call puts a unique
token in argument ARG (a tool that echoes it, as the fixture's echo does with value), and
its result (text or structuredContent) must carry that token and no other call's; one that
does not is mismatched (a server or proxy that pairs answers by order, say).

--assert 'METRIC OP VALUE' (repeatable) sets the thresholds: p50, p95, p99, max (a
duration: p99<500ms), rate (calls/s: rate>=1000), errors (a count, or a percentage of the
calls: errors<1%), late, duplicate, unknown, mismatched (counts: mismatched==0); OP is <,
<=, ==, >= or >. With --assert, the exit status is 0 when every threshold holds and 1
when one fails (the message names it), whatever the errors; without, mismatched answers
are exit status 1.

On a terminal, a progress line on stderr shows the calls done, the rate, the p99 of the
latest calls and the thresholds failing so far; piped, or with --json, nothing.

--ramp-to-failure --rate MAX --assert ... finds the ceiling: the highest rate at which
every threshold holds, by bisection. Each step is an open loop at one rate for --ramp-step
(3s); calls still unanswered half a step after its end are cancelled and fail the step. The
first step is a tenth of MAX (when it fails: exit status 1, nothing holds), the second MAX
(when it holds: the ceiling is at least MAX), then bisection up to --ramp-steps (8) steps.
On a terminal, a line per step on stderr; --json reports each step and the ceiling.

--policies P (repeatable) also evaluates the calls under client timeout policies, as
sonde timeouts does a capture (docs/timeouts.md): a summary table per policy.

--cpuprofile FILE writes a CPU profile of sonde while it makes the calls (the
handshake excluded), for ` + "`go tool pprof FILE`" + ` (docs/performance.md).

` + cmdutil.ExitCodesSee,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchCommand(cmd, env, &o, args)
		},
	}
	o.Server.Register(cmd.Flags())
	cmd.Flags().StringVar(&o.Args, "args", "", "tool arguments: a JSON object, @FILE, or @- for stdin")
	cmd.Flags().IntVarP(&o.Calls, "calls", "n", 1000, "number of calls")
	cmd.Flags().IntVarP(&o.Concurrency, "concurrency", "c", 1, "calls in flight at once")
	cmd.Flags().StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the calls to `FILE` (for go tool pprof)")
	cmd.Flags().StringArrayVar(&o.Asserts, "assert", nil, "a threshold, METRIC OP VALUE: p99<500ms, errors<1%, late==0, mismatched==0 (repeatable; exit 1 when one fails)")
	cmd.Flags().StringVar(&o.Rate, "rate", "", "open loop: start calls at this `RATE` (200/s), whatever the answers, for --duration (at most -c in flight; default -c 256)")
	cmd.Flags().DurationVar(&o.Duration, "duration", 0, "with --rate: how long to send (-n is then rate × duration)")
	cmd.Flags().StringVar(&o.Stages, "stages", "", "open loop in `STAGES` D:RATE,...: the rate ramps from the last RATE (0 at first) to RATE over D (10s:50,30s:200,10s:0)")
	cmd.Flags().StringArrayVar(&o.Policies, "policies", nil, "evaluate the calls under client timeout `POLICY` too: a preset (ts-sdk, inspector…) or timeout=D[,reset-on-progress][,max-total=D] (repeatable; docs/timeouts.md)")
	cmd.Flags().BoolVar(&o.Ramp, "ramp-to-failure", false, "find the highest rate at which every --assert holds: bisection from a tenth of --rate up to --rate, one --ramp-step run a step")
	cmd.Flags().DurationVar(&o.RampStep, "ramp-step", defaultRampStep, "with --ramp-to-failure: how long each step sends at its rate")
	cmd.Flags().IntVar(&o.RampSteps, "ramp-steps", defaultRampSteps, "with --ramp-to-failure: at most `N` steps (2 to 20)")
	cmd.Flags().StringVar(&o.CheckEcho, "check-echo", "", "put a unique token in tool argument `ARG` of each call and check that its result carries it and no other call's (mismatched)")
	return cmd
}

// benchCommand checks bench's flags and runs it.
func benchCommand(cmd *cobra.Command, env *cmdutil.Env, o *BenchOptions, args []string) error {
	own, t, err := connect.Resolve(cmd, &o.Server, args, 1, "bench takes exactly one TOOL before --")
	if err != nil {
		return err
	}
	if o.Calls < 1 || o.Concurrency < 1 {
		return cmdutil.Usagef("-n and -c must be at least 1")
	}
	var rate float64
	var stages []benchStage
	if o.Ramp {
		rate, err = rampShape(cmd, o)
	} else {
		rate, stages, err = benchShape(cmd, o)
	}
	if err != nil {
		return err
	}
	toolArgs, err := readJSONObject(o.Args, env.In)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("max-pending") && o.Server.MaxPending < 1 {
		return cmdutil.Usagef("--max-pending must be at least 1")
	}
	ths, err := parseThresholds(o.Asserts)
	if err != nil {
		return err
	}
	policies, err := parsePolicies(o.Policies)
	if err != nil {
		return err
	}
	var echo *echoCheck
	if o.CheckEcho != "" {
		if echo, err = newEchoCheck(o.CheckEcho, toolArgs); err != nil {
			return cmdutil.Usagef(err.Error())
		}
	}
	t.MaxPending = o.Concurrency // -c calls in flight need room in the pending map
	if o.Ramp {
		return runRamp(cmd.Context(), env, o, t, own[0], toolArgs, benchChecks{thresholds: ths, echo: echo, rate: rate})
	}
	return runBench(cmd.Context(), env, o, t, own[0], toolArgs, benchChecks{thresholds: ths, echo: echo, rate: rate, stages: stages, policies: policies})
}

// runBench loads tool on the target's server and reports.
func runBench(ctx context.Context, env *cmdutil.Env, o *BenchOptions, t *connect.Target, tool string, toolArgs []byte, checks benchChecks) error {
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
		var watch *policyWatch
		if len(checks.policies) > 0 {
			watch = watchPolicies(s.Client, checks.policies, o.Calls)
		}
		run := newBenchRun(s.Client, tool, toolArgs, o.Calls, o.Concurrency, checks.echo)
		var term io.Writer
		if !o.Server.JSON {
			term = env.ErrTerminal() // the progress line: a terminal's only
		}
		stop := make(chan struct{})
		gone := run.showProgress(term, checks.thresholds, stop)
		if checks.stages != nil {
			run.rep.Rate, run.rep.Stages = checks.rate, checks.stages
			run.openLoop(ctx, ctx, checks.stages, o.Concurrency)
		} else {
			run.closedLoop(ctx, o.Calls, o.Concurrency)
		}
		close(stop)
		<-gone
		rep := run.report()
		if watch != nil {
			rep.Timeouts = watch.finish()
		}
		if prof != nil {
			pprof.StopCPUProfile()
		}
		rep.Thresholds = checkThresholds(checks.thresholds, &rep)
		printBench(env, o.Server.JSON, rep)
		if ctx.Err() != nil {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted, Msg: "bench interrupted"}
		}
		if len(checks.thresholds) > 0 {
			return thresholdStatus(rep)
		}
		return benchStatus(rep)
	})
}

// BenchCalls makes n calls of tool with args, conc at a time, over c (an
// initialized client), and measures them: the engine of `sonde bench`, also
// driven by the peer benchmark (bench/peers).
func BenchCalls(ctx context.Context, c *client.Client, tool string, args []byte, n, conc int) BenchReport {
	return benchCalls(ctx, c, tool, args, n, conc, nil)
}

// benchCalls is BenchCalls, with each answer checked by echo (when not
// nil), and the client's late, duplicate and unknown answers counted.
func benchCalls(ctx context.Context, c *client.Client, tool string, args []byte, n, conc int, echo *echoCheck) BenchReport {
	r := newBenchRun(c, tool, args, n, conc, echo)
	r.closedLoop(ctx, n, conc)
	return r.report()
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
	rate := ""
	if r.Rate > 0 {
		rate = fmt.Sprintf(" at %g/s", r.Rate)
	}
	fmt.Fprintf(env.Out, "bench %s: %d calls%s, concurrency %d: %d ok, %d isError, %d failed in %s\n",
		r.Tool, r.Calls, rate, r.Concurrency, r.Succeeded, r.ToolErrors, failed, textfmt.Dur(time.Duration(r.Seconds*float64(time.Second))))
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
	writeThresholds(env.Out, r)
	if r.Timeouts != nil {
		writeBenchTimeouts(env.Out, r.Timeouts)
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
	if r.Mismatched > 0 {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: fmt.Sprintf("%d of %d answers carried another call's token (--check-echo)", r.Mismatched, r.Calls)}
	}
	return nil
}
