// Package cli is sonde's command line: Main runs it as the sonde binary
// does.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Main runs the command line args as the sonde binary does (signals
// included) and returns the exit status.
func Main(args []string, in io.Reader, out, errw io.Writer) int {
	return runWithSignals(args, in, out, errw)
}

// streams are the standard streams of one run (tests pass buffers).
type streams struct {
	in       io.Reader
	out, err io.Writer
	// server is the name and version of the server the run last
	// completed a handshake with (set by connect), for what run prints
	// after the command.
	server *string
}

// serverName is the server the run last completed a handshake with ("" if
// none).
func (s streams) serverName() string {
	if s.server == nil {
		return ""
	}
	return *s.server
}

// run executes the command line and returns the exit status (docs/errors.md).
func run(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	io := streams{in: in, out: out, err: errw, server: new(string)}
	root := newRootCmd(io)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(ctx, err)
	printURLElicitations(errw, err, io.serverName())
	var quiet *exitStatus
	if !errors.As(err, &quiet) || quiet.msg != "" {
		fmt.Fprintf(errw, "sonde: %s\n", errText(err))
	}
	return code
}
