//go:build !unix

package tap

import (
	"os"
	"os/signal"
	"syscall"
)

// notifySignals catches what the tap passes on to the server: on Windows,
// Go delivers Ctrl-C and Ctrl-Break as os.Interrupt and a closed console,
// logoff or shutdown as SIGTERM; the server gets CTRL_BREAK_EVENT (its
// console process group is its own, so it does not get the console's
// Ctrl-C itself). Other signals cannot be passed on there.
func notifySignals() (<-chan os.Signal, func()) {
	pass := make(chan os.Signal, 4)
	signal.Notify(pass, os.Interrupt, syscall.SIGTERM)
	return pass, func() { signal.Stop(pass) }
}
