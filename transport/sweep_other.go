//go:build !linux

package transport

import (
	"os"
	"os/exec"
)

// sweep finds nothing outside Linux: there the process group (Unix) or the
// job object (Windows) is all sonde stops. On macOS and the BSDs a process
// that left the server's group (setsid) keeps running (README, docs/commands.md).
func sweep(mark string, pipes []string, born uint64) []ProcStat { return nil }

// startTime is not read outside Linux (sweep does not look).
func startTime(int) uint64 { return 0 }

// pipeIDs names nothing outside Linux (sweep does not look).
func pipeIDs(...*os.File) []string { return nil }

// cgroup is a Linux server's cgroup (cgroup_linux.go): there is none here.
type cgroup struct{}

func newCgroup(string) *cgroup    { return nil }
func (*cgroup) attach(*exec.Cmd)  {}
func (*cgroup) sweep() []ProcStat { return nil }
func (*cgroup) remove()           {}

// CgroupsAvailable reports whether servers are started in a cgroup of
// their own: only on Linux.
func CgroupsAvailable() bool { return false }
