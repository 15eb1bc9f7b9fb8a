//go:build unix

package proctest

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// Alive reports whether pid is a live process: signal 0 reaches it and it is
// not a zombie waiting to be reaped by an init that does not reap.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return err == syscall.EPERM
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// No /proc (macOS): signal 0 is all we have. Otherwise the process
		// went away between the two probes.
		_, statErr := os.Stat("/proc/self")
		return statErr != nil
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
