package capfile

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/gate"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// BaselineOptions are the flags of `sonde baseline`.
type BaselineOptions struct {
	Label string
	JSON  bool
}

// NewCmdBaseline is `sonde baseline accept|show|reset`.
func NewCmdBaseline(env *cmdutil.Env) *cobra.Command {
	var o BaselineOptions
	cmd := &cobra.Command{
		Use:   "baseline (accept FILE | show [LABEL] | reset LABEL)",
		Short: "Keep the trusted tool definitions of a server, for --fail-on drift",
		Long: `A baseline is the tool definitions you trust for one server label. Once one is accepted,
sonde check --fail-on drift and sonde lint --fail-on drift report every tool added,
removed or changed since (field by field, annotations through the spec's defaults), and
name a read-only tool that turned destructive: the rug-pull this exists for.

  sonde baseline accept FILE [--label L]   trust the tools the capture FILE listed last
                                           (the label: --label, else the server's name)
  sonde baseline show [LABEL]              the baselines, or one baseline's tools
  sonde baseline reset LABEL               forget the label's baseline

The baselines are files in the state folder (on Linux $XDG_STATE_HOME/sonde/baselines,
or $SONDE_HOME/baselines), one per label. docs/ci.md#drift.

Exit status: 0; 1 when show or reset finds no baseline for LABEL; 2 for a usage error or
a capture that cannot be read or never listed tools.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 2 && args[0] == "accept", len(args) == 2 && args[0] == "reset",
				len(args) <= 2 && len(args) >= 1 && args[0] == "show":
				return nil
			}
			return cmdutil.Usagef("baseline takes accept FILE, show [LABEL] or reset LABEL (see sonde baseline --help)")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := cmdutil.BaselinesDir()
			if err != nil {
				return err
			}
			store := gate.Store{Dir: dir}
			switch args[0] {
			case "accept":
				return acceptBaseline(env, &o, store, args[1])
			case "reset":
				if err := store.Reset(args[1]); err != nil {
					return baselineErr(err)
				}
				fmt.Fprintf(env.Out, "baseline %s forgotten\n", textfmt.Escape(args[1]))
				return nil
			}
			if len(args) == 2 {
				return showBaseline(env, &o, store, args[1])
			}
			return listBaselines(env, &o, store)
		},
	}
	cmd.Flags().StringVar(&o.Label, "label", "", "accept: the server label (default: the server's name in the capture)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "machine-readable output")
	return cmd
}

func baselineErr(err error) error {
	if errors.Is(err, gate.ErrNoBaseline) {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: err.Error()}
	}
	return err
}

func acceptBaseline(env *cmdutil.Env, o *BaselineOptions, store gate.Store, path string) error {
	s, warnings, err := readSession(env, path, o.JSON)
	if err != nil {
		return err
	}
	warnCapture(env, path, warnings)
	if !s.Listed["tools"] {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "capture " + path + ": no complete tools/list answer: nothing to accept (record a session that lists the tools: sonde tools --record FILE)"}
	}
	label := cmdutil.BaselineLabel(o.Label, s)
	if label == "" {
		return cmdutil.Usagef("the capture names no server: give the baseline a --label")
	}
	b := gate.NewBaseline(label, path, s, time.Now())
	old, _ := store.Load(label)
	file, err := store.Save(b)
	if err != nil {
		return err
	}
	if o.JSON {
		cmdutil.WriteJSON(env.Out, map[string]any{"label": label, "file": file, "tools": len(b.Tools)})
		return nil
	}
	fmt.Fprintf(env.Out, "baseline %s: %d tools accepted from %s (%s)\n", textfmt.Escape(label), len(b.Tools), path, file)
	if old != nil {
		changes := diff.CompareItems(diff.SectionTool, old.Items(), s.Tools, diff.NormalizeTool)
		fmt.Fprintf(env.Out, "it replaces the baseline of %s: %d %s\n", old.Accepted.Format(time.RFC3339), len(changes), textfmt.Plural(len(changes), "change", "changes"))
	}
	return nil
}

func showBaseline(env *cmdutil.Env, o *BaselineOptions, store gate.Store, label string) error {
	b, err := store.Load(label)
	if err != nil {
		return baselineErr(err)
	}
	if o.JSON {
		cmdutil.WriteJSON(env.Out, b)
		return nil
	}
	fmt.Fprintf(env.Out, "baseline %s: accepted %s from %s, server %s %s, %d tools\n", textfmt.Escape(b.Label), b.Accepted.Format(time.RFC3339),
		textfmt.Escape(b.From), textfmt.Escape(b.Server.Name), textfmt.Escape(b.Server.Version), len(b.Tools))
	for _, t := range b.Tools {
		c := diff.DefCost(t.Name, t.Def)
		fmt.Fprintf(env.Out, "  %s  (%d B)\n", textfmt.Escape(t.Name), c.Def)
	}
	return nil
}

func listBaselines(env *cmdutil.Env, o *BaselineOptions, store gate.Store) error {
	all, err := store.List()
	if err != nil {
		return err
	}
	if o.JSON {
		type row struct {
			Label    string    `json:"label"`
			Accepted time.Time `json:"accepted"`
			Tools    int       `json:"tools"`
		}
		rows := []row{}
		for _, b := range all {
			rows = append(rows, row{b.Label, b.Accepted, len(b.Tools)})
		}
		cmdutil.WriteJSON(env.Out, rows)
		return nil
	}
	if len(all) == 0 {
		fmt.Fprintf(env.Out, "no baselines (in %s)\n", store.Dir)
	}
	for _, b := range all {
		fmt.Fprintf(env.Out, "%s  %d tools  accepted %s\n", textfmt.Escape(b.Label), len(b.Tools), b.Accepted.Format(time.RFC3339))
	}
	return nil
}
