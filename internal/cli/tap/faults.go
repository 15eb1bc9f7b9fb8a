package tap

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// FaultsOptions are the flags of sonde faults.
type FaultsOptions struct {
	Session string
	JSON    bool
	Timeout time.Duration
	Dir     string // the sessions folder (tests)
}

// NewCmdFaults is `sonde faults [on|off N]`.
func NewCmdFaults(env *cmdutil.Env) *cobra.Command {
	var o FaultsOptions
	cmd := &cobra.Command{
		Use:   "faults [on N | off N] [--session SESSION] [--json]",
		Short: "List the fault rules of a live sonde tap session, or turn one on or off while it runs",
		Long: `List the fault rules (--fault) of a live session of sonde tap (--session: its id or the
start of one; default: the newest live session), each with its number, whether it is on, and
how many frames it matched and acted on; or turn rule N off or on again while the host keeps
talking (docs/chaos.md). A rule turned off matches nothing until it is turned on; frames a
reorder rule already holds are still released. The recording notes each change.

  sonde faults
  sonde faults off 2
  sonde faults on 2 --session github-20261201-143007-4242

Exit status: 0; 2 for a usage error, no live session, a session without fault rules, or no
rule N; 4 when the tap did not answer within --timeout; 5 when it went away first.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return nil
			case len(args) == 2 && (args[0] == "on" || args[0] == "off"):
				if n, err := strconv.Atoi(args[1]); err != nil || n < 1 {
					return cmdutil.Usagef(fmt.Sprintf("sonde faults %s %s: want a rule number (1, 2, …)", args[0], args[1]))
				}
				return nil
			}
			return cmdutil.Usagef("sonde faults takes nothing, or on N / off N")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunFaults(env, &o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Session, "session", "", "the session's `ID` (or the start of one); default: the newest live session")
	f.BoolVar(&o.JSON, "json", false, "the rules as JSON: {\"seed\":N,\"rules\":[{\"rule\",\"text\",\"enabled\",\"matched\",\"fired\"}]}")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Second, "how long to wait for the tap's answer")
	return cmd
}

// RunFaults lists the rules of a live session, or turns one on or off
// (args: "on"|"off", N).
func RunFaults(env *cmdutil.Env, o *FaultsOptions, args []string) error {
	n, on := 0, false
	if len(args) == 2 {
		n, _ = strconv.Atoi(args[1])
		on = args[0] == "on"
	}
	path, _, err := watchTarget("sonde faults", &WatchOptions{Dir: o.Dir}, o.Session)
	if err != nil {
		return err
	}
	st, err := askFaults(path, n, on, o.Timeout, "sonde faults", "is it live, a tap recording in the sessions folder?")
	var refused *jsonrpc.Error
	if errors.As(err, &refused) {
		return cmdutil.Usagef("sonde faults: " + refused.Message)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		cmdutil.WriteJSON(env.Out, st)
		return nil
	}
	tw := cmdutil.NewTable(env.Out)
	fmt.Fprintf(tw, "RULE\tSTATE\tMATCHED\tACTED\tTEXT\n")
	for _, r := range st.Rules {
		state := "on"
		if !r.Enabled {
			state = "off"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\n", r.Rule, state, r.Matched, r.Fired, textfmt.Escape(r.Text))
	}
	return tw.Flush()
}
