package live

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/mcp"
)

// ToolsOptions are the flags of `sonde tools`.
type ToolsOptions struct {
	Server connect.Flags
	Fleet  connect.FleetFlags
}

// NewCmdTools is `sonde tools`.
func NewCmdTools(env *cmdutil.Env) *cobra.Command {
	var o ToolsOptions
	cmd := &cobra.Command{
		Use:   "tools (-- COMMAND [ARG...] | --url URL | --server NAME... | --all)",
		Short: "List the server's tools (all pages)",
		Long: `Start the server, run the handshake, list every tool (following nextCursor), stop the server.
--json prints the tools as a JSON array, with their input schemas.

With several servers (--all: every server of the hosts' config files, or of --config FILE;
or --server NAME more than once) every server is started and its tools are listed as
server/tool; a tool name that several servers have is flagged ("conflict: also in …").
A server that fails is reported on stderr and the others are still listed. --all starts no
server of a project's file (.mcp.json, .cursor/mcp.json, .vscode/mcp.json) that neither its
host (Claude Code's settings) nor you (sonde servers approve NAME) approved: each is named
on stderr with the command that approves it, and --server NAME starts it. --json prints
{"ok", "tools": [{"name", "server", "tool", "conflicts"}], "conflicts": {NAME: [SERVER…]},
"errors": {SERVER: {"code", "message"}}, "not_approved": [SERVER…]}.

` + cmdutil.ExitCodesSee,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Fleet.Fleet(&o.Server) {
				return runToolsAll(cmd, env, &o, args)
			}
			_, t, err := connect.Resolve(cmd, &o.Server, args, 0, "tools takes no arguments before --")
			if err != nil {
				return err
			}
			return connect.Run(cmd.Context(), env, &o.Server, t, func(ctx context.Context, s *connect.Session) error {
				return runTools(ctx, env, &o, s)
			})
		},
	}
	o.Server.Register(cmd.Flags())
	o.Fleet.Register(cmd.Flags())
	return cmd
}

// runTools lists the tools of the session's server.
func runTools(ctx context.Context, env *cmdutil.Env, o *ToolsOptions, s *connect.Session) error {
	var tools []mcp.Tool
	err := s.Retry(ctx, func(c *client.Client) (err error) {
		tools, err = c.ListTools(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if o.Server.JSON {
		cmdutil.WriteJSON(env.Out, tools)
		return nil
	}
	if len(tools) == 0 {
		fmt.Fprintln(env.Err, "sonde: the server lists no tools")
		return nil
	}
	tw := tabwriter.NewWriter(env.Out, 0, 0, 2, ' ', 0)
	for _, t := range tools {
		desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, desc)
	}
	tw.Flush()
	return nil
}
