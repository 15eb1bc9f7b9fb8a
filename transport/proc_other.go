//go:build !unix && !windows

package transport

import (
	"os"
	"os/exec"
)

// The steps of Close where there are neither process groups nor job
// objects: both stop the server process itself.
const (
	stopName = "kill"
	killName = "kill"
)

// single is the server process alone: what it started is not tracked.
type single struct{ p *os.Process }

func startGroup(cmd *exec.Cmd) (procGroup, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return single{p: cmd.Process}, nil
}

func (g single) stop() error { return g.kill() }
func (g single) release()    {}

// send passes sig on to the server process (what it started is not
// tracked here).
func (g single) send(sig os.Signal) error {
	if err := g.p.Signal(sig); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

func shellStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	return ps.ExitCode()
}

func (g single) kill() error {
	if err := g.p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}
