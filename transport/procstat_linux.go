//go:build linux

package transport

import (
	"bytes"
	"errors"
	"io/fs"
	"strconv"
	"syscall"
)

// statGroup reads /proc: the server's own stat, then every process whose
// process group is the server's (only this user's processes are there to
// read in full, but stat is world-readable).
func statGroup(pid int) ([]ProcStat, error) {
	p, ok := openProc()
	if !ok {
		return nil, errors.New("/proc is not readable")
	}
	defer p.close()
	lead, _, err := p.readProcStat(pid)
	if errors.Is(err, fs.ErrNotExist) {
		return []ProcStat{{Pid: pid, State: ProcGone}}, nil
	}
	if err != nil {
		return nil, err
	}
	return append([]ProcStat{lead}, p.groupMembers(pid)...), nil
}

// groupMembers lists the processes of process group pgid other than its
// leader.
func groupMembers(pgid int) []ProcStat {
	// The group is empty: the normal case once its leader is reaped, and
	// then no walk of /proc is needed.
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return nil
	}
	p, ok := openProc()
	if !ok {
		return nil
	}
	defer p.close()
	return p.groupMembers(pgid)
}

// groupMembers walks /proc for the members of pgid other than its leader:
// the stat line alone first, since most processes are not the group's.
func (p *procFS) groupMembers(pgid int) []ProcStat {
	var in []int
	p.eachPid(func(pid int) {
		if pid == pgid {
			return
		}
		if b, err := p.stat(pid); err == nil {
			if f, ok := parseStatFields(b); ok && f.pgrp == pgid {
				in = append(in, pid)
			}
		}
	})
	var out []ProcStat
	for _, pid := range in {
		if st, pgrp, err := p.readProcStat(pid); err == nil && pgrp == pgid {
			out = append(out, st)
		}
	}
	return out
}

// readProcStat reads a process's stat (its CPU time counts every thread),
// then each thread's state and wait for a CPU.
func (p *procFS) readProcStat(pid int) (ProcStat, int, error) {
	dir := strconv.Itoa(pid)
	b, err := p.read(dir + "/stat")
	if err != nil {
		return ProcStat{}, 0, err
	}
	st, pgrp, ok := parseProcStat(string(b))
	if !ok {
		return ProcStat{}, 0, errors.New("/proc/" + dir + "/stat: unreadable")
	}
	var tids []int
	if t, err := syscall.Openat(p.dir, dir+"/task", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0); err == nil {
		tp := &procFS{dir: t, ents: p.ents} // p's walk is not under way: its block is free
		tp.eachPid(func(tid int) { tids = append(tids, tid) })
		tp.close()
		p.ents = tp.ents
	}
	running, diskWait := false, false
	for _, tid := range tids {
		tdir := dir + "/task/" + strconv.Itoa(tid)
		if b, err := p.read(tdir + "/stat"); err == nil {
			// The state letter follows the name: "pid (name) S ...".
			if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
				switch linuxState(b[i+2]) {
				case ProcRunning:
					running = true
				case ProcDiskWait:
					diskWait = true
				}
			}
		}
		if b, err := p.read(tdir + "/schedstat"); err == nil {
			if w, ok := parseSchedstat(string(b)); ok {
				st.Wait += w
			}
		}
	}
	var states []ProcState
	if running {
		states = append(states, ProcRunning)
	} else if diskWait {
		states = append(states, ProcDiskWait)
	}
	st.State = threadsState(st.State, states)
	return st, pgrp, nil
}
