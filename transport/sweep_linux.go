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
// It reads /proc, and only this user's processes are readable. A process
// that both cleared its environment and closed the server's pipes is not
// found; neither is one that runs as another user.
//
// A subreaper (PR_SET_CHILD_SUBREAPER) was the other way: sonde would adopt
// such orphans, but also every daemon any of its children starts (a tmux
// server started by a test, a browser opened for OAuth), and telling them
// apart needs these same marks. So sonde does not adopt; it searches.
func sweep(mark string, pipes []string) []ProcStat {
	inodes := make(map[string]bool, len(pipes))
	for _, id := range pipes {
		inodes[id] = true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	needle := []byte(MarkEnv + "=" + mark + "\x00")
	var killed []ProcStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		dir := "/proc/" + e.Name()
		if !marked(dir, needle) && (!holdsPipe(dir, inodes) || parent(dir) == self) {
			// A child of sonde's own holds the pipes for a moment without
			// being the server's: another server being started (between
			// fork and exec it has a copy of every file sonde has open).
			continue
		}
		st := ProcStat{Pid: pid}
		if b, err := os.ReadFile(dir + "/stat"); err == nil {
			if s, _, ok := parseProcStat(string(b)); ok {
				st = s
			}
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, st)
		}
	}
	return killed
}

// marked reports whether the process's initial environment holds needle
// (NAME=value followed by NUL; the first entry has no NUL before it).
func marked(dir string, needle []byte) bool {
	env, err := os.ReadFile(dir + "/environ")
	if err != nil {
		return false
	}
	return bytes.HasPrefix(env, needle) || bytes.Contains(env, append([]byte{0}, needle...))
}

// parent is the process's parent pid (0 when it cannot be read).
func parent(dir string) int {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
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
