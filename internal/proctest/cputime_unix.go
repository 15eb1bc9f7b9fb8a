//go:build unix

package proctest

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user and system) this process has used: on a
// loaded machine the benchmarks report it beside the wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
