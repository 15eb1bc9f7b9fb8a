// Package cli is sonde's command line: Main runs it as the sonde binary
// does. The commands are in families that never import each other (live,
// capfile, interactive, config); what they share is in cmdutil and
// connect; the root command here wires them.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// Main runs the command line args as the sonde binary does (signals
// included: see runWithSignals) and returns the exit status.
func Main(args []string, in io.Reader, out, errw io.Writer) int {
	return runWithSignals(args, in, out, errw)
}

// Run executes the command line with ctx and returns the exit status
// (docs/errors.md); signals are the caller's (tests cancel ctx).
func Run(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	env := cmdutil.NewEnv(in, out, errw)
	root := NewCmdRoot(env)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	code := cmdutil.ExitCode(ctx, err)
	cmdutil.PrintURLElicitations(env.Err, err, env.ServerName())
	var quiet *cmdutil.ExitStatus
	if !errors.As(err, &quiet) || quiet.Msg != "" {
		fmt.Fprintf(env.Err, "sonde: %s\n", env.Hidden(cmdutil.ErrText(err)))
		if env.ErrTerminal() != nil { // a person reads it: the snapshot's evidence too
			cmdutil.PrintSnapshot(env.Err, err)
		}
	}
	return code
}
