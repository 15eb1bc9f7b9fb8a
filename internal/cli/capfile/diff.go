package capfile

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// diffPreview bounds each value shown by sonde diff's text.
const diffPreview = 120

// DiffOptions are the flags of `sonde diff`.
type DiffOptions struct {
	JSON     bool
	ExitCode bool
	diff.Thresholds
}

// NewCmdDiff is `sonde diff A B`.
func NewCmdDiff(env *cmdutil.Env) *cobra.Command {
	o := DiffOptions{Thresholds: diff.DefaultThresholds}
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two captures: capabilities, tools, prompts, resources, calls, context cost",
		Long: `Read two captures (--record FILE) of a server, A the old and B the new, and list what
changed between them:

  server      name, version, protocol version
  capabilities, tools, prompts, resources, resource templates
              added, removed, and changed field by field (descriptions, schemas,
              annotations). A tool's annotations are compared with the spec's defaults
              put in (readOnlyHint false, destructiveHint true, idempotentHint false,
              openWorldHint true; execution.taskSupport "forbidden"), so a hint left
              out equals the hint at its default; a read-only tool that turned
              destructive is named as such.
  calls       matched by tool and arguments (keys in any order): a change of outcome
              (resolved, error, timeout, tool-error…) and a shift of the median latency
              by at least --min-shift and --ratio times
  context     the bytes each tool costs a model: its definition (compact JSON; the
              description and the schemas apart) and its results

Each capture's lists are its last complete listing (the pages joined); a list one side
never fetched is not compared. Calls are those of every session in the file.

  sonde diff before.jsonl after.jsonl
  sonde diff --exit-code --min-shift 50ms --ratio 2 before.jsonl after.jsonl

Exit status: 0; with --exit-code, 1 when something differs; 2 when a file cannot be read
as a capture.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return cmdutil.Usagef("diff takes two capture files, A and B (see sonde diff --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(env, &o, args[0], args[1])
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "machine-readable output")
	cmd.Flags().BoolVar(&o.ExitCode, "exit-code", false, "exit with status 1 when the captures differ")
	cmd.Flags().DurationVar(&o.MinShift, "min-shift", o.MinShift, "report a call's median latency shift only from this much")
	cmd.Flags().Float64Var(&o.Ratio, "ratio", o.Ratio, "report a call's median latency shift only from this many times")
	return cmd
}

// readSession folds a whole capture into what its server showed, with
// progress on a terminal unless quiet.
func readSession(env *cmdutil.Env, path string, quiet bool) (*diff.Shown, []string, error) {
	c := diff.NewCollector()
	prog := newProgress(env, path, quiet)
	_, warnings, err := eachEvent(path, nil, func(ev client.Event) {
		prog.tick()
		c.Add(ev)
	})
	prog.done()
	return c.Shown(), warnings, err
}

func runDiff(env *cmdutil.Env, o *DiffOptions, pathA, pathB string) error {
	if o.MinShift < 0 || o.Ratio < 1 {
		return cmdutil.Usagef("--min-shift must not be negative and --ratio must be at least 1")
	}
	pathA, err := cmdutil.CaptureArg(pathA)
	if err != nil {
		return err
	}
	pathB, err = cmdutil.CaptureArg(pathB)
	if err != nil {
		return err
	}
	a, warnA, err := readSession(env, pathA, o.JSON)
	if err != nil {
		return err
	}
	b, warnB, err := readSession(env, pathB, o.JSON)
	if err != nil {
		return err
	}
	warnCapture(env, pathA, warnA)
	warnCapture(env, pathB, warnB)
	rep := diff.Compare(a, b, o.Thresholds)
	if o.JSON {
		cmdutil.WriteJSON(env.Out, struct {
			A       string `json:"a"`
			B       string `json:"b"`
			Differs bool   `json:"differs"`
			*diff.Report
		}{pathA, pathB, rep.Differs(), rep})
	} else {
		writeDiff(env, rep)
	}
	if o.ExitCode && rep.Differs() {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError}
	}
	return nil
}

func clip(s string) string { return textfmt.Preview([]byte(s), diffPreview) }

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return clip(s)
}

func writeDiff(env *cmdutil.Env, rep *diff.Report) {
	if !rep.Differs() {
		fmt.Fprintln(env.Out, "no differences")
	}
	for _, ch := range rep.Changes {
		what := ch.Section
		if ch.Key != "" {
			what += " " + textfmt.Escape(ch.Key)
		}
		switch {
		case ch.Field == "":
			fmt.Fprintf(env.Out, "%s: %s\n", what, ch.Kind)
		case ch.Field == "…":
			fmt.Fprintf(env.Out, "%s: %s\n", what, ch.Note)
		default:
			fmt.Fprintf(env.Out, "%s: %s %s: %s → %s", what, textfmt.Escape(ch.Field), ch.Kind, orAbsent(ch.Old), orAbsent(ch.New))
			if ch.Note != "" {
				fmt.Fprintf(env.Out, "  (%s)", ch.Note)
			}
			fmt.Fprintln(env.Out)
		}
	}
	if len(rep.Calls) > 0 {
		fmt.Fprintln(env.Out, "calls:")
	}
	for _, c := range rep.Calls {
		call := textfmt.Escape(c.Tool) + " " + clip(c.Args)
		switch c.Kind {
		case diff.CallOnlyA:
			fmt.Fprintf(env.Out, "  %s: only in A (%s)\n", call, c.Old)
		case diff.CallOnlyB:
			fmt.Fprintf(env.Out, "  %s: only in B (%s)\n", call, c.New)
		case diff.CallStatus:
			fmt.Fprintf(env.Out, "  %s: outcome %s → %s\n", call, c.Old, c.New)
		default:
			fmt.Fprintf(env.Out, "  %s: %s, median %s → %s\n", call, c.Kind, textfmt.Dur(c.OldMedian), textfmt.Dur(c.NewMedian))
		}
	}
	writeCostDiff(env, rep)
}

// writeCostDiff shows the context cost of the tools of each side, and the
// tools whose cost changed.
func writeCostDiff(env *cmdutil.Env, rep *diff.Report) {
	o, n := rep.OldTotal, rep.NewTotal
	if rep.ANoToolList || rep.BNoToolList {
		which := "A holds no tool list"
		switch {
		case rep.ANoToolList && rep.BNoToolList:
			which = "neither capture holds a tool list"
		case rep.BNoToolList:
			which = "B holds no tool list"
		}
		fmt.Fprintf(env.Out, "context cost: %s (no tools/list answer), so tool definitions are not compared; results %s → %s\n", which, bytesText(o.Results), bytesText(n.Results))
		return
	}
	fmt.Fprintf(env.Out, "context cost: tool definitions %s → %s (%s); results %s → %s\n", bytesText(o.Def), bytesText(n.Def), delta(o.Def, n.Def), bytesText(o.Results), bytesText(n.Results))
	for _, c := range rep.Costs {
		switch {
		case c.Old == nil:
			fmt.Fprintf(env.Out, "  %s: new, definition %s\n", textfmt.Escape(c.Name), bytesText(c.New.Def))
		case c.New == nil:
			fmt.Fprintf(env.Out, "  %s: gone, definition %s\n", textfmt.Escape(c.Name), bytesText(c.Old.Def))
		default:
			fmt.Fprintf(env.Out, "  %s: definition %s → %s (description %s → %s, input schema %s → %s); results %s → %s\n", textfmt.Escape(c.Name),
				bytesText(c.Old.Def), bytesText(c.New.Def), bytesText(c.Old.Description), bytesText(c.New.Description),
				bytesText(c.Old.InputSchema), bytesText(c.New.InputSchema), bytesText(c.Old.Results), bytesText(c.New.Results))
		}
	}
}

func bytesText(n int) string { return fmt.Sprintf("%d B", n) }

func delta(a, b int) string {
	if b >= a {
		return fmt.Sprintf("+%d B", b-a)
	}
	return fmt.Sprintf("-%d B", a-b)
}
