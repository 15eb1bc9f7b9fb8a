//go:build linux

package transport

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// statGroup reads /proc: the server's own stat, then every process whose
// process group is the server's (only this user's processes are there to
// read in full, but stat is world-readable).
func statGroup(pid int) ([]ProcStat, error) {
	lead, _, err := readProcStat(pid)
	if errors.Is(err, fs.ErrNotExist) {
		return []ProcStat{{Pid: pid, State: ProcGone}}, nil
	}
	if err != nil {
		return nil, err
	}
	return append([]ProcStat{lead}, groupMembers(pid)...), nil
}

// groupMembers lists the processes of process group pgid other than its
// leader.
func groupMembers(pgid int) []ProcStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []ProcStat
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pgid {
			continue
		}
		// The stat line alone first: most processes are not the group's.
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if _, pgrp, ok := parseProcStat(string(b)); !ok || pgrp != pgid {
			continue
		}
		if st, _, err := readProcStat(n); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// readProcStat reads a process's stat (its CPU time counts every thread),
// then each thread's state and wait for a CPU.
func readProcStat(pid int) (ProcStat, int, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return ProcStat{}, 0, err
	}
	st, pgrp, ok := parseProcStat(string(b))
	if !ok {
		return ProcStat{}, 0, errors.New(dir + "/stat: unreadable")
	}
	tasks, _ := os.ReadDir(dir + "/task")
	states := make([]ProcState, 0, len(tasks))
	for _, t := range tasks {
		tdir := dir + "/task/" + t.Name()
		if b, err := os.ReadFile(tdir + "/stat"); err == nil {
			if ts, _, ok := parseProcStat(string(b)); ok {
				states = append(states, ts.State)
			}
		}
		if b, err := os.ReadFile(tdir + "/schedstat"); err == nil {
			if w, ok := parseSchedstat(string(b)); ok {
				st.Wait += w
			}
		}
	}
	st.State = threadsState(st.State, states)
	return st, pgrp, nil
}
