package cli

import (
	"fmt"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// NewCmdVersion is `sonde version`.
func NewCmdVersion(env *cmdutil.Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print sonde's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(env.Out, "sonde "+cmdutil.VersionString())
			return nil
		},
	}
}
