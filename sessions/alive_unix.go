//go:build unix

package sessions

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// Live reports whether pid is a running sonde that records into the
// sessions folder (sonde tap, replay --serve --break, call or script
// --break): signal 0 reaches it (or it is another user's), and, where /proc
// says, it is no zombie and its command line has one of those commands as
// an argument (a pid reused by another program after sonde was killed is
// not taken for it).
func Live(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	dir := "/proc/" + strconv.Itoa(pid)
	if stat, err := os.ReadFile(dir + "/stat"); err == nil {
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	cmdline, err := os.ReadFile(dir + "/cmdline")
	if err != nil || len(cmdline) == 0 {
		return true // not ours to read: count it as live
	}
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		switch string(arg) {
		case "tap", "replay", "call", "script":
			return true
		}
	}
	return false
}
