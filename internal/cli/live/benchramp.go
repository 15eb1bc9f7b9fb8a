package live

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/spf13/cobra"
)

// Defaults and bounds of --ramp-to-failure.
const (
	defaultRampStep  = 3 * time.Second
	defaultRampSteps = 8
	maxRampSteps     = 20
	maxRampStep      = 10 * time.Minute
	// rampFloor is the lowest rate tried: --rate divided by this.
	rampFloor = 10
)

// RampReport is the result of `sonde bench --ramp-to-failure` (its --json
// output): each step's rate and verdicts, and the ceiling found.
type RampReport struct {
	Tool string `json:"tool"`
	// Lowest and Highest are the rates the search is bounded by: a tenth
	// of --rate, and --rate.
	Lowest      float64    `json:"lowest"`
	Highest     float64    `json:"highest"`
	StepSeconds float64    `json:"step_seconds"`
	Concurrency int        `json:"concurrency"`
	Steps       []RampStep `json:"steps"`
	// Ceiling is the highest rate at which every threshold held (0 when
	// even Lowest failed); AtHighest says Highest itself held, so the
	// real ceiling may be higher.
	Ceiling   float64 `json:"ceiling"`
	AtHighest bool    `json:"at_highest"`
	OK        bool    `json:"ok"`
}

// RampStep is one fixed-rate run of the ramp.
type RampStep struct {
	Rate       float64 `json:"rate"`
	Holds      bool    `json:"holds"`
	Calls      int     `json:"calls"`
	Succeeded  int     `json:"succeeded"`
	Failed     int     `json:"failed"`
	ToolErrors int     `json:"tool_errors"`
	// Unfinished are the calls not started by half a step after the
	// step's end (-c calls were in flight): they are not sent, and any
	// fails the step. Calls started are waited for.
	Unfinished int `json:"unfinished"`
	// CallsPerSec is the calls answered over the step's time (at least
	// --ramp-step).
	CallsPerSec float64           `json:"calls_per_sec"`
	P99MS       float64           `json:"p99_ms"`
	Thresholds  []ThresholdResult `json:"thresholds"`
}

// rampShape checks the flags of --ramp-to-failure and returns the highest
// rate (--rate).
func rampShape(cmd *cobra.Command, o *BenchOptions) (float64, error) {
	switch {
	case o.Rate == "":
		return 0, cmdutil.Usagef("--ramp-to-failure needs --rate: the highest rate to try")
	case len(o.Asserts) == 0:
		return 0, cmdutil.Usagef("--ramp-to-failure needs --assert: the thresholds that must hold")
	case o.Stages != "" || o.Duration != 0 || cmd.Flags().Changed("calls"):
		return 0, cmdutil.Usagef("--ramp-to-failure does not go with --stages, --duration or -n: its steps are --ramp-step long")
	case len(o.Policies) > 0 || o.CPUProfile != "":
		return 0, cmdutil.Usagef("--ramp-to-failure does not go with --policies or --cpuprofile")
	case o.RampStep <= 0 || o.RampStep > maxRampStep:
		return 0, cmdutil.Usagef(fmt.Sprintf("--ramp-step must be above 0 and at most %s", maxRampStep))
	case o.RampSteps < 2 || o.RampSteps > maxRampSteps:
		return 0, cmdutil.Usagef(fmt.Sprintf("--ramp-steps must be from 2 to %d", maxRampSteps))
	}
	rate, err := parseRate(o.Rate, false)
	if err != nil {
		return 0, cmdutil.Usagef("--" + err.Error())
	}
	if n := rate * o.RampStep.Seconds(); n > maxRateCalls {
		return 0, cmdutil.Usagef(fmt.Sprintf("a step makes %.0f calls, at most %d", n, maxRateCalls))
	}
	if !cmd.Flags().Changed("concurrency") {
		o.Concurrency = 256
	}
	return rate, nil
}

// runRamp bisects over the rate for the highest one at which the
// thresholds hold, one --ramp-step run per step.
func runRamp(ctx context.Context, env *cmdutil.Env, o *BenchOptions, t *connect.Target, tool string, toolArgs []byte, checks benchChecks) error {
	return connect.Run(ctx, env, &o.Server, t, func(ctx context.Context, s *connect.Session) error {
		var term io.Writer
		if !o.Server.JSON {
			term = env.ErrTerminal()
		}
		rep := RampReport{Tool: tool, Lowest: checks.rate / rampFloor, Highest: checks.rate, StepSeconds: o.RampStep.Seconds(), Concurrency: o.Concurrency, Steps: []RampStep{}}
		step := func(rate float64) bool {
			st := rampStep(ctx, s.Client, tool, toolArgs, rate, o, checks, term)
			rep.Steps = append(rep.Steps, st)
			if term != nil {
				fmt.Fprintln(term, rampLine(len(rep.Steps), o.RampSteps, st))
			}
			return st.Holds
		}
		good, bad := 0.0, 0.0
		switch {
		case !step(rep.Lowest):
		case step(rep.Highest):
			good, rep.AtHighest = rep.Highest, true
		default:
			good, bad = rep.Lowest, rep.Highest
			for len(rep.Steps) < o.RampSteps && ctx.Err() == nil {
				mid := (good + bad) / 2
				if step(mid) {
					good = mid
				} else {
					bad = mid
				}
			}
		}
		rep.Ceiling, rep.OK = good, good > 0
		printRamp(env, o.Server.JSON, rep)
		switch {
		case ctx.Err() != nil:
			return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted, Msg: "bench interrupted"}
		case !rep.OK:
			return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: fmt.Sprintf("ramp: even the lowest rate, %s, fails: %s", rateText(rep.Lowest), stepFailures(rep.Steps[0]))}
		}
		return nil
	})
}

// rampStep runs one step at rate: an open loop for --ramp-step, whose
// calls not started half a step after its end are not sent; the calls in
// flight then (at most -c) are waited for.
func rampStep(ctx context.Context, c *client.Client, tool string, args []byte, rate float64, o *BenchOptions, checks benchChecks, term io.Writer) RampStep {
	stages := []benchStage{{Duration: o.RampStep, From: rate, To: rate}}
	n := 0
	for range dueTimes(stages) {
		n++
	}
	send, cancel := context.WithTimeout(ctx, o.RampStep+o.RampStep/2)
	defer cancel()
	run := newBenchRun(c, tool, args, n, o.Concurrency, checks.echo)
	stop := make(chan struct{})
	gone := run.showProgress(term, checks.thresholds, stop)
	run.openLoop(ctx, send, stages, o.Concurrency)
	close(stop)
	<-gone
	r := run.report()
	r.Rate = rate
	st := RampStep{
		Rate: rate, Calls: n, Succeeded: r.Succeeded, Failed: r.failed(), ToolErrors: r.ToolErrors,
		CallsPerSec: float64(r.Succeeded+r.ToolErrors+r.failed()) / max(r.Seconds, o.RampStep.Seconds()), P99MS: r.P99MS, Thresholds: checkThresholds(checks.thresholds, &r),
	}
	st.Unfinished = n - (r.Succeeded + r.ToolErrors + r.failed())
	st.Holds = st.Unfinished == 0
	for _, th := range st.Thresholds {
		st.Holds = st.Holds && th.OK
	}
	return st
}

// stepFailures names what failed in a step.
func stepFailures(st RampStep) string {
	s := ""
	for _, th := range st.Thresholds {
		if !th.OK {
			s += fmt.Sprintf("%s (%s is %s) ", th.Expr, th.Metric, th.valueText())
		}
	}
	if st.Unfinished > 0 {
		s += fmt.Sprintf("%d calls not sent in time ", st.Unfinished)
	}
	return s[:max(len(s)-1, 0)]
}

// rampLine is a step's progress line.
func rampLine(i, of int, st RampStep) string {
	verdict := "holds"
	if !st.Holds {
		verdict = "fails: " + stepFailures(st)
	}
	return fmt.Sprintf("sonde: ramp step %d/%d: %s %s (%d calls, p99 %.3fms)", i, of, rateText(st.Rate), verdict, st.Calls, st.P99MS)
}

// rateText is a rate as calls per second, to a tenth.
func rateText(r float64) string { return fmt.Sprintf("%.1f/s", r) }

func printRamp(env *cmdutil.Env, asJSON bool, r RampReport) {
	if asJSON {
		cmdutil.WriteJSON(env.Out, r)
		return
	}
	fmt.Fprintf(env.Out, "bench %s --ramp-to-failure: %d steps of %s, %s to %s, concurrency %d\n",
		r.Tool, len(r.Steps), textfmt.Dur(time.Duration(r.StepSeconds*float64(time.Second))), rateText(r.Lowest), rateText(r.Highest), r.Concurrency)
	for i, st := range r.Steps {
		verdict := "ok"
		if !st.Holds {
			verdict = "FAIL " + stepFailures(st)
		}
		fmt.Fprintf(env.Out, "  step %-2d %10s  %6d calls  %8.1f calls/s  p99 %10.3fms  %s\n", i+1, rateText(st.Rate), st.Calls, st.CallsPerSec, st.P99MS, verdict)
	}
	switch {
	case !r.OK:
		fmt.Fprintf(env.Out, "  ceiling  none: %s fails\n", rateText(r.Lowest))
	case r.AtHighest:
		fmt.Fprintf(env.Out, "  ceiling  at least %s (the highest rate tried held)\n", rateText(r.Ceiling))
	default:
		fmt.Fprintf(env.Out, "  ceiling  %s\n", rateText(r.Ceiling))
	}
}
