package capfile

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/stats"
)

// StatsOptions are the flags of `sonde stats`.
type StatsOptions struct {
	JSON   bool
	Bucket time.Duration // the in-flight histogram's bucket width (0: automatic)
	Filter string        // --filter: the requests counted
}

// NewCmdStats is `sonde stats FILE`.
func NewCmdStats(env *cmdutil.Env) *cobra.Command {
	var o StatsOptions
	cmd := &cobra.Command{
		Use:   "stats FILE|SESSION",
		Short: "Summarise a capture: per method counts, errors and latency; requests in flight over time",
		Long: `Read a capture (--record FILE) and summarise its requests, from their lifecycle records:
per method (and tool, for tools/call): how many ended, how many did not end with a result
(by outcome: error, timeout, cancelled, exited…), and the latency p50/p95/p99/max of those
that were answered (from queued to the response); requests from the server are listed
apart. Then how many of sonde's requests were in flight at most, and when, with a
histogram of the most in flight per time bucket (--bucket; by default a round width that
gives at most 40 buckets). Last, the context cost of each tool, in bytes (not tokens):
its definition as tools/list sent it (compact JSON; its description and input schema
apart) and the results of its calls, largest definition first.

  sonde stats bug.jsonl
  sonde stats --json --bucket 1s bug.jsonl
  sonde stats --filter 'method:tools/call tool:search' bug.jsonl

--json prints one object: durations in nanoseconds, in_flight[i] is the most requests in
flight during bucket i, context_cost the cost of each tool (the last tool listing of the
capture; a tool called but not listed has no definition bytes).

Exit status: 0, or 2 when the file cannot be read as a capture.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usagef("stats takes one capture FILE (see sonde stats --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStats(env, &o, args[0])
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "machine-readable output")
	cmd.Flags().DurationVar(&o.Bucket, "bucket", 0, "width of the in-flight histogram's buckets (default: automatic)")
	addFilterFlag(cmd, &o.Filter)
	return cmd
}

// runStats summarises the capture at path.
func runStats(env *cmdutil.Env, o *StatsOptions, arg string) error {
	if o.Bucket < 0 {
		return cmdutil.Usagef("--bucket must not be negative")
	}
	path, err := cmdutil.CaptureArg(arg)
	if err != nil {
		return err
	}
	keep, err := eventFilter(path, o.Filter)
	if err != nil {
		return err
	}
	var c *stats.Collector
	defs := diff.NewToolCollector()
	prog := newProgress(env, path, o.JSON)
	_, warnings, err := eachEvent(path, func(h capture.Header) { c = stats.New(h.Start) }, func(ev client.Event) {
		prog.tick()
		if o.Filter == "" {
			defs.Add(ev) // the context cost: left out of a filtered stats
		}
		if keep(ev) {
			c.Add(ev)
		}
	})
	prog.done()
	if err != nil {
		return err
	}
	warnCapture(env, path, warnings)
	rep := c.Report(o.Bucket)
	var costs []diff.ToolCost
	if o.Filter == "" { // the context cost is the definitions', whatever a filter keeps
		costs = diff.Costs(defs.Shown())
		diff.SortByDef(costs)
	}
	if o.JSON {
		cmdutil.WriteJSON(env.Out, struct {
			stats.Report
			Context []diff.ToolCost `json:"context_cost"`
		}{rep, cmdutil.NonNil(costs)})
		return nil
	}
	if err := rep.WriteText(env.Out); err != nil {
		return err
	}
	if o.Filter != "" {
		return nil
	}
	return writeCosts(env, costs)
}

// writeCosts is the context cost table of stats.
func writeCosts(env *cmdutil.Env, costs []diff.ToolCost) error {
	if len(costs) == 0 {
		_, err := fmt.Fprintln(env.Out, "\ncontext cost: no tools listed or called")
		return err
	}
	t := diff.TotalCost(costs)
	fmt.Fprintf(env.Out, "\ncontext cost (bytes, not tokens): tool definitions %d, results %d\n", t.Def, t.Results)
	w := len("tool")
	for _, c := range costs {
		w = max(w, len(textfmt.Escape(c.Name)))
	}
	row := func(name string, cells ...any) {
		fmt.Fprintf(env.Out, "%-*s", w, name)
		for _, c := range cells {
			fmt.Fprintf(env.Out, "  %11v", c)
		}
		fmt.Fprintln(env.Out)
	}
	row("tool", "definition", "description", "input", "output", "calls", "results")
	for _, c := range costs {
		row(textfmt.Escape(c.Name), c.Def, c.Description, c.InputSchema, c.OutputSchema, c.Calls, c.Results)
	}
	return nil
}
