package transport

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// ProcState is what the OS says a process is doing, in sonde's words.
type ProcState string

// The process states a snapshot tells apart.
const (
	ProcRunning  ProcState = "running"   // on a CPU or ready to run
	ProcSleeping ProcState = "sleeping"  // waiting for something (input, a timer, a lock)
	ProcDiskWait ProcState = "disk-wait" // in an uninterruptible wait (usually disk or network I/O)
	ProcStopped  ProcState = "stopped"   // stopped by a signal or a debugger: it will not run until continued
	ProcZombie   ProcState = "zombie"    // ended, not yet reaped
	ProcGone     ProcState = "gone"      // no such process
	ProcUnknown  ProcState = "unknown"   // this OS does not say
)

// ProcStat is one process as the OS reported it at a moment.
type ProcStat struct {
	Pid   int
	Name  string
	State ProcState
	// CPU is the user and system CPU time the process has used so far.
	CPU time.Duration
	// Wait is the time its threads were ready to run but waited for a CPU
	// (Linux, from schedstat; zero elsewhere): on a loaded machine a busy
	// server gets little CPU but waits for it.
	Wait time.Duration
}

// ErrStatUnsupported is returned by StatGroup where sonde cannot read
// another process's state and CPU time.
var ErrStatUnsupported = errors.New("process state and CPU time are not available on this OS")

// StatGroup reports the processes of the server started with process id
// pid: on Linux and macOS every process of its process group (the server
// first), on Windows the server process alone. A server that no longer
// runs is one ProcStat with State ProcGone. Elsewhere it returns
// ErrStatUnsupported.
func StatGroup(pid int) ([]ProcStat, error) {
	if pid <= 0 {
		return nil, errors.New("no process id")
	}
	return statGroup(pid)
}

// GroupCPU is the CPU time of every process in ps, and the time they
// waited for a CPU.
func GroupCPU(ps []ProcStat) (cpu, wait time.Duration) {
	for _, p := range ps {
		cpu += p.CPU
		wait += p.Wait
	}
	return cpu, wait
}

// parseSchedstat reads /proc/PID/task/TID/schedstat: the time on a CPU,
// the time waiting to run (both in ns) and the number of timeslices. It
// returns the wait.
func parseSchedstat(s string) (time.Duration, bool) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.ParseUint(f[1], 10, 63)
	if err != nil {
		return 0, false
	}
	return time.Duration(n), true
}

// threadsState is the state of a process from its threads' states: one
// ready to run makes it running, else one in an uninterruptible wait makes
// it disk-wait, else the process's own.
func threadsState(own ProcState, threads []ProcState) ProcState {
	if own == ProcZombie || own == ProcStopped {
		return own
	}
	out := own
	for _, t := range threads {
		switch {
		case t == ProcRunning:
			return ProcRunning
		case t == ProcDiskWait:
			out = ProcDiskWait
		}
	}
	return out
}

// linuxState maps the state letter of /proc/PID/stat.
func linuxState(c byte) ProcState {
	switch c {
	case 'R':
		return ProcRunning
	case 'S', 'I':
		return ProcSleeping
	case 'D':
		return ProcDiskWait
	case 'T', 't':
		return ProcStopped
	case 'Z', 'X', 'x':
		return ProcZombie
	}
	return ProcUnknown
}

// linuxTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture Go runs on.
const linuxTicks = 100

// parseProcStat reads one /proc/PID/stat line: the pid, the command name
// (between the first "(" and the last ")", since a name may hold both),
// the state, the process group and the CPU time (utime + stime).
func parseProcStat(line string) (st ProcStat, pgrp int, ok bool) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 1 || end < open {
		return ProcStat{}, 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil || pid <= 0 {
		return ProcStat{}, 0, false
	}
	// After the name: state(3) ppid(4) pgrp(5) session(6) tty_nr(7)
	// tpgid(8) flags(9) minflt(10) cminflt(11) majflt(12) cmajflt(13)
	// utime(14) stime(15).
	f := strings.Fields(line[end+1:])
	if len(f) < 13 || len(f[0]) != 1 {
		return ProcStat{}, 0, false
	}
	pgrp, err1 := strconv.Atoi(f[2])
	ut, err2 := strconv.ParseUint(f[11], 10, 63)
	stm, err3 := strconv.ParseUint(f[12], 10, 63)
	if err1 != nil || err2 != nil || err3 != nil || ut > 1<<40 || stm > 1<<40 {
		return ProcStat{}, 0, false
	}
	cpu := time.Duration(ut+stm) * (time.Second / linuxTicks)
	return ProcStat{Pid: pid, Name: line[open+1 : end], State: linuxState(f[0][0]), CPU: cpu}, pgrp, true
}

// statFields are the fields of a /proc/PID/stat line that the walks of
// /proc filter every process on: read without allocating, since the walks
// read one line of each process on the machine.
type statFields struct {
	ppid, pgrp int
	start      uint64 // starttime: clock ticks since boot
}

// parseStatFields reads the parent, the process group and the start time
// of a /proc/PID/stat line (fields 4, 5 and 22; the name, field 2, may
// hold spaces and parentheses, so the fields are counted from its last
// ")").
func parseStatFields(b []byte) (statFields, bool) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return statFields{}, false
	}
	var f statFields
	i := end + 1
	for k := 0; k <= 19; k++ { // k is the field's number less 3: 0 is the state
		for i < len(b) && b[i] == ' ' {
			i++
		}
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\n' {
			j++
		}
		if j == i {
			return statFields{}, false
		}
		if k == 1 || k == 2 || k == 19 {
			n, ok := decimal(b[i:j])
			if !ok {
				return statFields{}, false
			}
			switch k {
			case 1:
				f.ppid = int(n)
			case 2:
				f.pgrp = int(n)
			default:
				f.start = n
			}
		}
		i = j
	}
	return f, true
}

// decimal reads an unsigned decimal number of at most 18 digits.
func decimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// bsdState maps the first letter of ps's STAT column (macOS, the BSDs).
func bsdState(s string) ProcState {
	if s == "" {
		return ProcUnknown
	}
	switch s[0] {
	case 'R':
		return ProcRunning
	case 'S', 'I':
		return ProcSleeping
	case 'U', 'D':
		return ProcDiskWait
	case 'T':
		return ProcStopped
	case 'Z':
		return ProcZombie
	}
	return ProcUnknown
}

// parsePSLine reads one line of `ps -o pid=,pgid=,stat=,time=,comm=`:
// TIME is [[dd-]hh:]mm:ss[.ff] and the command name may hold spaces.
func parsePSLine(line string) (st ProcStat, pgid int, ok bool) {
	f := strings.Fields(line)
	if len(f) < 5 {
		return ProcStat{}, 0, false
	}
	pid, err1 := strconv.Atoi(f[0])
	pgid, err2 := strconv.Atoi(f[1])
	cpu, ok := parsePSTime(f[3])
	if err1 != nil || err2 != nil || !ok || pid <= 0 {
		return ProcStat{}, 0, false
	}
	name := strings.Join(f[4:], " ")
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	return ProcStat{Pid: pid, Name: name, State: bsdState(f[2]), CPU: cpu}, pgid, true
}

// parsePSTime reads ps's TIME: [[dd-]hh:]mm:ss[.ff].
func parsePSTime(s string) (time.Duration, bool) {
	var days int64
	if d, rest, found := strings.Cut(s, "-"); found {
		n, err := strconv.ParseInt(d, 10, 32)
		if err != nil || n < 0 {
			return 0, false
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	secs, err := strconv.ParseFloat(parts[len(parts)-1], 64)
	if err != nil || secs < 0 || secs >= 60 || math.IsNaN(secs) {
		return 0, false
	}
	total := time.Duration(secs * float64(time.Second))
	mult := time.Minute
	for i := len(parts) - 2; i >= 0; i-- {
		n, err := strconv.ParseInt(parts[i], 10, 32)
		if err != nil || n < 0 || n > 1<<20 {
			return 0, false
		}
		total += time.Duration(n) * mult
		mult *= 60
	}
	return total + time.Duration(days)*24*time.Hour, true
}
