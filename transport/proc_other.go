//go:build !unix

package transport

import (
	"os"
	"os/exec"
)

// setProcessGroup is a no-op where process groups do not exist; the server
// alone is signalled (a job object per server is the Windows plan, see
// docs/architecture.md).
func setProcessGroup(cmd *exec.Cmd) {}

var (
	sigTerm os.Signal = os.Interrupt
	sigKill os.Signal = os.Kill
)

// signalGroup stops the process itself: a graceful interrupt is not
// deliverable to a console-less child on Windows, so both steps kill.
func signalGroup(pid int, sig os.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}
