//go:build darwin

package transport

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"syscall"
	"time"
)

// statGroup runs ps (macOS has no /proc, and its proc_pidinfo needs cgo):
// every process, filtered to the server's process group.
func statGroup(pid int) ([]ProcStat, error) {
	lead, rest, err := psGroup(pid)
	if err != nil {
		return nil, err
	}
	return append([]ProcStat{lead}, rest...), nil
}

// groupMembers lists the processes of process group pgid other than its
// leader. An empty group (the normal case once its leader is reaped)
// runs no ps.
func groupMembers(pgid int) []ProcStat {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return nil
	}
	_, rest, _ := psGroup(pgid)
	return rest
}

// psGroup is the leader of process group pid (ProcGone when it is not
// there) and the group's other members.
func psGroup(pid int) (ProcStat, []ProcStat, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/bin/ps", "-A", "-o", "pid=,pgid=,stat=,time=,comm=").Output()
	if err != nil {
		return ProcStat{}, nil, err
	}
	var lead *ProcStat
	var rest []ProcStat
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		st, pgid, ok := parsePSLine(sc.Text())
		switch {
		case !ok:
		case st.Pid == pid:
			lead = &st
		case pgid == pid:
			rest = append(rest, st)
		}
	}
	if lead == nil {
		lead = &ProcStat{Pid: pid, State: ProcGone}
	}
	return *lead, rest, nil
}
