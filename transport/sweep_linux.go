//go:build linux

package transport

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sweep finds and kills, with SIGKILL, the processes a server left behind
// outside its process group: a daemon that called setsid is no longer
// reached by a signal to the group. A process is the server's when its
// environment still carries the server's mark (MarkEnv, given to the
// server at start and inherited by everything it starts), or when it holds
// one of the server's pipes (an open copy of its stdin, stdout or stderr).
// It reads /proc, and only this user's processes are readable. Of those
// only the ones that started no earlier than born (the server's start
// time: see startTime) are looked into, since the server cannot have
// started the others. A process that both cleared its environment and
// closed the server's pipes is not found; neither is one that runs as
// another user.
//
// A subreaper (PR_SET_CHILD_SUBREAPER) was the other way: sonde would adopt
// such orphans, but also every daemon any of its children starts (a tmux
// server started by a test, a browser opened for OAuth), and telling them
// apart needs these same marks. So sonde does not adopt; it searches.
func sweep(mark string, pipes []string, born uint64) []ProcStat {
	inodes := make(map[string]bool, len(pipes))
	for _, id := range pipes {
		inodes[id] = true
	}
	p, ok := openProc()
	if !ok {
		return nil
	}
	defer p.close()
	self := os.Getpid()
	needle := []byte("\x00" + MarkEnv + "=" + mark + "\x00")
	var killed []ProcStat
	p.eachPid(func(pid int) {
		if pid == self || pid <= 1 {
			return
		}
		b, err := p.stat(pid)
		if err != nil {
			return // gone
		}
		f, ok := parseStatFields(b)
		if ok && f.start < born {
			return // started before the server: not one it left
		}
		dir := "/proc/" + strconv.Itoa(pid)
		if !marked(dir, needle) && (!holdsPipe(dir, inodes) || f.ppid == self) {
			// A child of sonde's own holds the pipes for a moment without
			// being the server's: another server being started (between
			// fork and exec it has a copy of every file sonde has open).
			return
		}
		st := ProcStat{Pid: pid}
		if s, _, ok := parseProcStat(string(b)); ok {
			st = s
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, st)
		}
	})
	return killed
}

// startTime is when process pid started, in clock ticks since boot (its
// stat's starttime), or 0 when it cannot be read. Read as a server starts,
// it bounds the sweep: everything the server starts starts after it, so a
// process that started before is not read further.
func startTime(pid int) uint64 {
	p, ok := openProc()
	if !ok {
		return 0
	}
	defer p.close()
	if b, err := p.stat(pid); err == nil {
		if f, ok := parseStatFields(b); ok {
			return f.start
		}
	}
	return 0
}

// marked reports whether the process's initial environment holds needle
// (NAME=value between NULs; the first entry has no NUL before it).
func marked(dir string, needle []byte) bool {
	env, err := os.ReadFile(dir + "/environ")
	if err != nil {
		return false
	}
	return bytes.HasPrefix(env, needle[1:]) || bytes.Contains(env, needle)
}

// pipeIDs names the pipes behind files as /proc shows them ("pipe:[N]"),
// read when the server starts: at Wait its caller may have closed them
// (the tap closes stdout once the host stops reading), and the numbers of
// closed files are given to the next ones opened, so reading them then
// could name another server's pipe, or race with the close.
func pipeIDs(files ...*os.File) []string {
	var ids []string
	for _, f := range files {
		var st syscall.Stat_t
		if f != nil && syscall.Fstat(int(f.Fd()), &st) == nil {
			ids = append(ids, "pipe:["+strconv.FormatUint(st.Ino, 10)+"]")
		}
	}
	return ids
}

// holdsPipe reports whether one of the process's open files is one of the
// pipes named in inodes ("pipe:[N]").
func holdsPipe(dir string, inodes map[string]bool) bool {
	if len(inodes) == 0 {
		return false
	}
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(dir + "/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, "pipe:") && inodes[target] {
			return true
		}
	}
	return false
}
