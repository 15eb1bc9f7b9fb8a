package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// runWithSignals runs the command line as the sonde binary does: the first
// SIGINT, SIGTERM or SIGHUP (a closed terminal) cancels the run, which stops
// the server cleanly; a second one kills the server at once. The same code
// serves Windows, where Go delivers Ctrl-C and Ctrl-Break as os.Interrupt and
// a closed console window, logoff or shutdown as SIGTERM (SIGHUP never
// comes).
func runWithSignals(args []string, in io.Reader, out, errw io.Writer) int {
	if len(args) > 0 && (args[0] == "fixture" || args[0] == "tap") {
		// The fixture is a server, not a client: signals keep their default
		// effect (SIGTERM ends it at once, as docs/fixtures.md says); its
		// HTTP mode handles them itself. The tap passes them on to its
		// server itself (internal/cli/tap).
		return Run(context.Background(), args, in, out, errw)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	live := &cmdutil.LiveClients{}
	ctx, cancel := context.WithCancel(cmdutil.WithLive(context.Background(), live))
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(errw, "sonde: interrupted again: killing the server now")
			live.KillAll()
		case <-done:
		}
	}()
	return Run(ctx, args, in, out, errw)
}
