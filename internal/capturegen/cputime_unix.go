//go:build unix

package capturegen

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used so far (user and system,
// every thread, the garbage collector's included), for benchmarks that
// report it beside their wall time: on a loaded machine the wall time
// mostly waits for a core.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
