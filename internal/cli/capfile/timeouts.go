package capfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/timeouts"
)

// TimeoutsOptions are the flags of `sonde timeouts`.
type TimeoutsOptions struct {
	Policies []string // --policy: presets or specs; none: every preset
	FailOn   []string // --fail-on-policy: exit 1 when one of these fails a request
	JSON     bool
	All      bool // --all: every request, not only those some policy did not pass
}

// NewCmdTimeouts is `sonde timeouts FILE|SESSION`.
func NewCmdTimeouts(env *cmdutil.Env) *cobra.Command {
	var o TimeoutsOptions
	cmd := &cobra.Command{
		Use:   "timeouts FILE|SESSION [--policy P]...",
		Short: "Would these calls have passed under other clients' timeouts? A capture replayed under timeout policies",
		Long: `Read a capture (--record FILE, or a session of sonde tap by its id or a prefix of it) and
evaluate the recorded timing of every request (when it was sent, its progress
notifications, its answer or none) under client timeout policies, offline.

A policy is a preset's name or timeout=D[,reset-on-progress][,max-total=D][,total-on-progress]:
  timeout=D            the deadline from when the request was sent (D: 60s, 1m30s, none)
  reset-on-progress    a progress notification before the deadline restarts it
  max-total=D          the cap on the request's whole life
  total-on-progress    the cap is checked only when progress arrives (the TypeScript SDK's way)
Presets (sources in docs/timeouts.md): ` + strings.Join(timeouts.PresetNames(), ", ") + `.
Without --policy, every preset is evaluated (sonde: each request's own budget, left out
for a tapped host's session, which has none sonde knows).

For each request some policy did not pass (every request with --all): per policy, pass
and the margin, or fail at T with the reason (deadline, max-total) and whether its answer
came after all (one that client would have thrown away as late), or unknown (no answer,
and the request ended before that deadline); and the progress gaps longer than the
timeout. Then a table: policies × (requests, failed, late, unknown, gaps, worst margin).

  sonde timeouts bug.jsonl
  sonde timeouts github-20261201-143007-4242 --policy inspector --policy timeout=30s
  sonde timeouts bug.jsonl --fail-on-policy ts-sdk --json

--json prints one object: summary (one entry per policy) and rows (one per request, its
verdicts in the order of the summary); durations in nanoseconds.

Exit status: 0; 1 when a policy named with --fail-on-policy failed a request; 2 for a bad
policy or a file that cannot be read as a capture.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usagef("timeouts takes one capture FILE or SESSION (see sonde timeouts --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTimeouts(env, &o, args[0])
		},
	}
	cmd.Flags().StringArrayVar(&o.Policies, "policy", nil, "a policy to evaluate: a preset's name or timeout=D[,reset-on-progress][,max-total=D][,total-on-progress] (repeatable; default: every preset)")
	cmd.Flags().StringArrayVar(&o.FailOn, "fail-on-policy", nil, "exit 1 when this policy fails a request (repeatable; evaluated even when not given with --policy)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "machine-readable output")
	cmd.Flags().BoolVar(&o.All, "all", false, "list every request, not only those some policy did not pass")
	return cmd
}

// timeoutPolicies is what --policy and --fail-on-policy ask for, each
// once; explicit is false when every preset stands in for no --policy.
func timeoutPolicies(o *TimeoutsOptions) (ps []timeouts.Policy, explicit bool, err error) {
	names := o.Policies
	if len(names) == 0 {
		names = timeouts.PresetNames()
	}
	var seen []string
	for _, s := range append(slices.Clone(names), o.FailOn...) {
		p, err := timeouts.ParsePolicy(s)
		if err != nil {
			return nil, false, cmdutil.Usagef(strings.TrimPrefix(err.Error(), timeouts.ErrPolicy.Error()+" ") + " (see sonde timeouts --help)")
		}
		if !slices.Contains(seen, p.Name) {
			seen = append(seen, p.Name)
			ps = append(ps, p)
		}
	}
	return ps, len(o.Policies) > 0 || slices.ContainsFunc(o.FailOn, func(s string) bool { return s == "sonde" }), nil
}

// runTimeouts evaluates the capture at arg.
func runTimeouts(env *cmdutil.Env, o *TimeoutsOptions, arg string) error {
	ps, explicit, err := timeoutPolicies(o)
	if err != nil {
		return err
	}
	path, err := cmdutil.CaptureArg(arg)
	if err != nil {
		return err
	}
	var c *timeouts.Collector
	prog := newProgress(env, path, o.JSON)
	_, warnings, err := eachEvent(path, func(h capture.Header) { c = timeouts.NewCollector(h.Start, ps) }, func(ev client.Event) {
		prog.tick()
		c.Add(ev)
	})
	prog.done()
	if err != nil {
		return err
	}
	warnCapture(env, path, warnings)
	rep := c.Finish()
	if !explicit && !c.HasBudget() {
		rep.Drop("sonde") // a tapped host's requests: no budget of sonde's to evaluate
	}
	if o.JSON {
		cmdutil.WriteJSON(env.Out, rep)
	} else if err := rep.WriteText(env.Out, o.All); err != nil {
		return err
	}
	var failed []string
	for _, name := range o.FailOn {
		p, _ := timeouts.ParsePolicy(name)
		if rep.Fails(p.Name) && !slices.Contains(failed, p.Name) {
			failed = append(failed, p.Name)
		}
	}
	if len(failed) > 0 {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: fmt.Sprintf("policy %s failed a request (--fail-on-policy)", strings.Join(failed, ", "))}
	}
	return nil
}
