//go:build unix

package tap

import (
	"os"
	"os/signal"
	"syscall"
)

// notifySignals catches the signals the tap passes on to the server:
// SIGINT, SIGTERM and SIGHUP. It also catches SIGPIPE, which is not passed
// on: a host that stopped reading makes the tap's next write fail (and the
// tap then closes the server's end, so the server's next write fails as it
// would have), instead of killing the tap and leaving the server behind.
func notifySignals() (<-chan os.Signal, func()) {
	pass := make(chan os.Signal, 4)
	signal.Notify(pass, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	return pass, func() {
		signal.Stop(pass)
		signal.Stop(pipe)
	}
}
