package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/capfile"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/config"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/cli/doctor"
	"github.com/sonde-mcp/sonde/internal/cli/interactive"
	"github.com/sonde-mcp/sonde/internal/cli/live"
	"github.com/sonde-mcp/sonde/internal/cli/tap"
)

// NewCmdRoot is the sonde command: the interactive UI, with every family's
// commands under it.
func NewCmdRoot(env *cmdutil.Env) *cobra.Command {
	var ui interactive.UIOptions
	root := &cobra.Command{
		Use:           "sonde [flags] (-- COMMAND [ARG...] | --url URL | [--config FILE] --server NAME | --all)",
		Short:         "Inspect and debug MCP servers from the terminal",
		Long:          rootLong + "\n\n" + rootExamples,
		Version:       cmdutil.VersionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return cmdutil.Usagef(fmt.Sprintf("unknown command %q (see sonde --help); a server command goes after --", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return interactive.RunUI(cmd, env, &ui, args)
		},
	}
	var raw bool
	root.PersistentFlags().BoolVar(&raw, "raw", false, "write a server's text to the terminal as it is, escape sequences included (by default they are shown, not obeyed; a pipe always gets the bytes as they are)")
	root.PersistentPreRun = func(*cobra.Command, []string) {
		if raw {
			env.SetRaw()
		}
	}
	ui.Register(root)
	ui.Tapped = interactive.Tapped{Live: tap.PickerSessions, Open: func(ctx context.Context, env *cmdutil.Env, id string) error {
		return tap.WatchSession(ctx, env, interactive.RunReplay, id)
	}}
	root.SetVersionTemplate("sonde {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(
		live.NewCmdCall(env, tap.ServeEngine), live.NewCmdTools(env), live.NewCmdCheck(env), live.NewCmdScript(env, tap.ServeEngine), live.NewCmdBench(env),
		NewCmdFixture(env), interactive.NewCmdDemo(env), NewCmdVersion(env), config.NewCmdConfig(env), capfile.NewCmdReplay(env, interactive.RunReplay, tap.ServeBreaks),
		capfile.NewCmdLint(env), capfile.NewCmdStats(env), capfile.NewCmdTimeouts(env), capfile.NewCmdClients(env), capfile.NewCmdExport(env), tap.NewCmdTap(env),
	)
	root.AddCommand(doctor.NewCmdDoctor(env), config.NewCmdServers(env), config.NewCmdReport(env))
	root.AddCommand(capfile.NewCmdDiff(env), capfile.NewCmdBaseline(env))
	root.AddCommand(tap.NewCmdWrap(env), tap.NewCmdUnwrap(env), tap.NewCmdSessions(env), tap.NewCmdWatch(env, interactive.RunReplay), tap.NewCmdInject(env), tap.NewCmdFaults(env), tap.NewCmdBreaks(env))
	connect.CompleteServerNames(root)
	root.AddCommand(live.NewCmdFeatures(env)...)
	root.AddCommand(NewCmdMCP(env))
	addHelpTopics(root)
	suggestCommands(root)
	usual := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			rootHelp(c, args)
			return
		}
		usual(c, args)
	})
	return root
}
