//go:build !unix

package tap

import (
	"os"

	"github.com/sonde-mcp/sonde/transport"
)

// signalName names a signal as process events do. Outside Unix the tap
// passes on what Windows delivers as os.Interrupt (Ctrl-C, Ctrl-Break) and
// SIGTERM (a closed console, logoff, shutdown) as CTRL_BREAK_EVENT.
func signalName(sig os.Signal) string {
	if sig == os.Interrupt {
		return "interrupt (sent as " + transport.StopName + ")"
	}
	return sig.String() + " (sent as " + transport.StopName + ")"
}
