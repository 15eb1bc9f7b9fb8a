package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

func newToolsCmd(io streams) *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "tools (-- COMMAND [ARG...] | --url URL)",
		Short: "List the server's tools (all pages)",
		Long: `Start the server, run the handshake, list every tool (following nextCursor), stop the server.
--json prints the tools as a JSON array, with their input schemas.

` + exitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, argv, err := f.serverArgv(cmd, args, 0, "tools takes no arguments before --")
			if err != nil {
				return err
			}
			s, err := f.connect(cmd.Context(), io, argv)
			if err != nil {
				return jsonFailure(io.out, f.json, err)
			}
			defer s.close()
			var tools []mcp.Tool
			err = s.retry(cmd.Context(), func(c *client.Client) (err error) {
				tools, err = c.ListTools(cmd.Context())
				return err
			})
			if err != nil {
				return jsonFailure(io.out, f.json, err)
			}
			if f.json {
				writeJSON(io.out, tools)
				return nil
			}
			if len(tools) == 0 {
				fmt.Fprintln(io.err, "sonde: the server lists no tools")
				return nil
			}
			tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
			for _, t := range tools {
				desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
				fmt.Fprintf(tw, "%s\t%s\n", t.Name, desc)
			}
			tw.Flush()
			return nil
		},
	}
	f.register(cmd.Flags())
	return cmd
}
