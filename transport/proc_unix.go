//go:build unix

package transport

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// The steps of Close on Unix: signals sent to the process group.
const (
	stopName = "SIGTERM"
	killName = "SIGKILL"
)

// pgroup is the process group led by the server: the server is started
// with Setpgid, so its pid is the group id, and every process it starts
// stays in the group unless it moves itself out.
type pgroup struct{ pid int }

// startGroup starts cmd as the leader of a new process group, so that
// signals reach everything it started.
func startGroup(cmd *exec.Cmd) (procGroup, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return pgroup{pid: cmd.Process.Pid}, nil
}

func (g pgroup) stop() error { return g.signal(syscall.SIGTERM) }
func (g pgroup) kill() error { return g.signal(syscall.SIGKILL) }
func (g pgroup) release()    {}

// send passes sig on to the whole group.
func (g pgroup) send(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("cannot send %v to the server", sig)
	}
	return g.signal(s)
}

// shellStatus is the exit code, or 128 plus the number of the signal that
// ended the process.
func shellStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// signal sends sig to the whole group. A group that is already gone is not
// an error.
func (g pgroup) signal(sig syscall.Signal) error {
	err := syscall.Kill(-g.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitStatus returns the exit code (or -1) and the name of the signal that
// ended the process (or "").
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, signalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}
