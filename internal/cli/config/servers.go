package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/manager"
)

// ServersOptions are the flags of `sonde servers`.
type ServersOptions struct {
	Config  string
	Servers []string
	Inputs  []string
	JSON    bool
}

// NewCmdServers is `sonde servers` and `sonde servers approve NAME`.
func NewCmdServers(env *cmdutil.Env) *cobra.Command {
	var o ServersOptions
	cmd := &cobra.Command{
		Use:   "servers [--config FILE] [--server NAME...] [--json]",
		Short: "The restart policy's view of the configured servers: failures, backoff, quarantine",
		Long: `List the servers of the hosts' config files (or of --config FILE, or those named with
--server) as the restart policy of several servers at once (tools/call --all) sees them:
the hash of each (command, arguments, environment names, working directory, URL and the
executable's content), its failures in a row, when it may be started again, and its
quarantine with why. Nothing is started. The state is kept per user (the state folder,
servers.json).

sonde servers approve NAME lifts the quarantine of a server whose configuration or binary
changed since it was quarantined; a server unchanged since stays quarantined (exit 2). For a
server of a project's file (.mcp.json, .cursor/mcp.json, .vscode/mcp.json), it also lets the
runs over every server (doctor, tools --all) start it, which they do only for the project
servers its host approved (Claude Code's settings) or you approved here: the approval holds
while its entry and executable stay as they are (the hash), and is kept per user (the state
folder, approved.json).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := o.open(cmd, env, o.Servers)
			if err != nil {
				return err
			}
			defer m.Stop(nil)
			return printServers(env, m.Status(), o.JSON)
		},
	}
	o.register(cmd.Flags(), true)
	approve := &cobra.Command{
		Use:   "approve NAME [--config FILE]",
		Short: "Approve a quarantined server whose configuration or binary changed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := o.open(cmd, env, args)
			if err != nil {
				return err
			}
			defer m.Stop(nil)
			if err := approveProject(env, o.Config, args[0]); err != nil {
				return err
			}
			if err := m.Approve(args[0]); err != nil {
				return cmdutil.Usagef(err.Error())
			}
			fmt.Fprintf(env.Err, "sonde: server %s approved: it starts at its next use\n", args[0])
			return nil
		},
	}
	o.register(approve.Flags(), false)
	cmd.AddCommand(approve)
	return cmd
}

func (o *ServersOptions) register(fs *pflag.FlagSet, list bool) {
	fs.StringVar(&o.Config, "config", "", "the servers of this host config `FILE` only")
	fs.StringArrayVar(&o.Inputs, "input", nil, "the value of VS Code's ${input:ID}, as `ID=VALUE` (repeatable)")
	if list {
		fs.StringArrayVar(&o.Servers, "server", nil, "only the server `NAME` (repeatable)")
		fs.BoolVar(&o.JSON, "json", false, "machine-readable output")
	}
}

// open resolves the servers (every one when names is empty) into a
// manager that starts nothing.
func (o *ServersOptions) open(cmd *cobra.Command, env *cmdutil.Env, names []string) (*connect.Fleet, error) {
	var f connect.Flags
	f.Register(pflag.NewFlagSet("servers", pflag.ContinueOnError)) // the defaults
	f.Config, f.Servers, f.Inputs = o.Config, names, o.Inputs
	mf := connect.FleetFlags{All: len(names) == 0, MaxFailures: manager.DefaultPolicy.MaxFailures}
	_, m, err := connect.OpenFleet(cmd, env, &f, &mf, nil, 0, "")
	return m, err
}

// approveProject approves the project server name (of file, or of the
// files found) for the runs over every server (connect's Unnamed), and
// says so with what it runs; a server of the user's own files needs no
// such approval.
func approveProject(env *cmdutil.Env, file, name string) error {
	h, found, err := connect.LoadHosts(file)
	if err != nil {
		return err
	}
	s, err := hostconfig.Find(found.Servers, name)
	if err != nil || !connect.Project(s) {
		return nil // OpenFleet found it; not a project server
	}
	hash, err := h.Approve(s)
	if err != nil {
		return &cmdutil.ExitStatus{Code: 1, Msg: "servers approve: " + err.Error()}
	}
	fmt.Fprintf(env.Err, "sonde: server %s (%s) approved: doctor and tools --all start it while its entry and executable stay as they are (hash %s): %s\n",
		textfmt.Escape(name), s.Where(), hash[:12], textfmt.Escape(connect.ServerLine(s)))
	return nil
}

// serverJSON is one server of `sonde servers --json`.
type serverJSON struct {
	Name        string     `json:"name"`
	Where       string     `json:"where"`
	Hash        string     `json:"hash"`
	State       string     `json:"state"`
	Failures    int        `json:"failures"`
	NextTry     *time.Time `json:"next_try,omitempty"`
	Quarantined bool       `json:"quarantined"`
	Changed     bool       `json:"changed,omitempty"`
	Why         string     `json:"why,omitempty"`
}

func printServers(env *cmdutil.Env, sts []manager.Status, asJSON bool) error {
	if asJSON {
		out := make([]serverJSON, 0, len(sts))
		for _, s := range sts {
			j := serverJSON{Name: s.Name, Where: s.Where, Hash: s.Hash, State: string(s.State), Failures: s.Failures, Quarantined: s.State == manager.Quarantined, Changed: s.Changed, Why: s.Why}
			if s.State == manager.BackingOff {
				t := s.NextTry
				j.NextTry = &t
			}
			out = append(out, j)
		}
		cmdutil.WriteJSON(env.Out, out)
		return nil
	}
	tw := cmdutil.NewTable(env.Out)
	fmt.Fprintln(tw, "NAME\tWHERE\tSTATE\tFAILURES\tHASH\tWHY")
	for _, s := range sts {
		state := string(s.State)
		switch {
		case s.State == manager.BackingOff:
			state += " (" + textfmt.Dur(time.Until(s.NextTry)) + " left)"
		case s.State == manager.Quarantined && s.Changed:
			state += " (changed: approve it)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, s.Where, state, s.Failures, s.Hash[:12], s.Why)
	}
	tw.Flush()
	return nil
}

// NewCmdReport is `sonde report`.
func NewCmdReport(env *cmdutil.Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "report [FILE] [--json]",
		Short: "Show the failure report of the last failed call",
		Long: `Show the failure report of the last call that failed (sonde call TOOL -- CMD, or
over several servers: sonde call SERVER/TOOL --all, or --server NAME more than once), or
the report FILE (the FILE.report.json written beside a --record capture): the server's
name (the command's, the URL, or the --server entry's), where it is
configured and its hash, its identity and protocol version, the method, tool and request
id, the phase (start or call), the stable code, the duration, the exit status and the last
lines of its stderr. It never holds the call's argument values: they are also scrubbed
from the message and the stderr lines.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			} else {
				p, err := paths.Current()
				if err != nil {
					return cmdutil.Usagef(err.Error())
				}
				path = filepath.Join(p.State, manager.ReportFile)
			}
			r, err := manager.ReadReport(path)
			if errors.Is(err, fs.ErrNotExist) && len(args) == 0 {
				return cmdutil.Usagef("no failure report yet: one is written when a call fails (sonde call)")
			}
			if err != nil {
				return cmdutil.Usagef(err.Error())
			}
			if asJSON {
				cmdutil.WriteJSON(env.Out, r)
				return nil
			}
			r.WriteText(env.Out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	return cmd
}
