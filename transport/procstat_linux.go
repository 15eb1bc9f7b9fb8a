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
	out := []ProcStat{lead}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out, nil
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pid {
			continue
		}
		if st, pgrp, err := readProcStat(n); err == nil && pgrp == pid {
			out = append(out, st)
		}
	}
	return out, nil
}

func readProcStat(pid int) (ProcStat, int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcStat{}, 0, err
	}
	st, pgrp, ok := parseProcStat(string(b))
	if !ok {
		return ProcStat{}, 0, errors.New("/proc/" + strconv.Itoa(pid) + "/stat: unreadable")
	}
	return st, pgrp, nil
}
