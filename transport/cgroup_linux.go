//go:build linux

package transport

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroup is the cgroup v2 a server is started in (CLONE_INTO_CGROUP), a
// child of sonde's own: everything the server starts is born in it and
// stays in it through setsid, a cleared environment and closed pipes, so
// Wait finds and kills what the sweep by mark and pipes cannot. It exists
// only where sonde may create cgroups (its cgroup v2 folder is writable:
// a systemd user session's app scope, a delegated container, root);
// elsewhere newCgroup returns nil and the sweep is all there is. A process
// that moves itself to another cgroup it may write to leaves it.
type cgroup struct {
	dir string
	fd  int
}

// ownCgroupDir is the folder of sonde's own cgroup v2 ("" when there is
// none: no cgroup2 mount, or sonde's cgroup is not in it).
func ownCgroupDir() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	path, ok := "", false
	for _, line := range strings.Split(string(b), "\n") {
		if p, found := strings.CutPrefix(line, "0::"); found {
			path, ok = p, true
		}
	}
	if !ok || !strings.HasPrefix(path, "/") {
		return ""
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source options
		pre, post, found := strings.Cut(sc.Text(), " - ")
		if !found || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) < 5 {
			continue
		}
		root, mount := fields[3], fields[4]
		rel, found := strings.CutPrefix(path, root)
		if root == "/" {
			rel, found = path, true
		}
		if !found {
			continue
		}
		return filepath.Join(mount, rel)
	}
	return ""
}

// newCgroup creates the cgroup of one server (nil when sonde may not).
func newCgroup(mark string) *cgroup {
	parent := ownCgroupDir()
	if parent == "" {
		return nil
	}
	removeStale(parent)
	dir := filepath.Join(parent, "sonde-"+strconv.Itoa(os.Getpid())+"-"+mark)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: fd}
}

// removeStale removes the empty cgroups that a sonde which is no longer
// running left in parent (it was killed before its servers' Wait): their
// names lead with that sonde's pid. One that still holds a process is
// left (rmdir refuses it), and so is one of a pid in use.
func removeStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "sonde-")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		_ = os.Remove(filepath.Join(parent, e.Name()))
	}
}

// CgroupsAvailable reports whether servers are started in a cgroup of
// their own here (Linux with a cgroup v2 folder sonde may create cgroups
// in), so that Wait stops even the processes that left the server's
// group, cleared their environment and closed its pipes.
func CgroupsAvailable() bool {
	c := newCgroup(newMark())
	if c == nil {
		return false
	}
	c.remove()
	return true
}

// attach makes cmd start in the cgroup.
func (c *cgroup) attach(cmd *exec.Cmd) {
	if c == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, c.fd
}

// members are the pids in the cgroup now.
func (c *cgroup) members() []int {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// sweep kills (SIGKILL) every process still in the cgroup and returns
// them, until it is empty; a member forking meanwhile is caught by the
// next round. It gives up after cgroupDrain.
func (c *cgroup) sweep() []ProcStat {
	if c == nil {
		return nil
	}
	var killed []ProcStat
	seen := map[int]bool{}
	deadline := time.Now().Add(cgroupDrain)
	for {
		pids := c.members()
		if len(pids) == 0 || time.Now().After(deadline) {
			return killed
		}
		for _, pid := range pids {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			st := ProcStat{Pid: pid}
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
				if s, _, ok := parseProcStat(string(b)); ok {
					st = s
				}
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, st)
			}
		}
		// A killed process leaves the cgroup once it has exited.
		time.Sleep(2 * time.Millisecond)
	}
}

// cgroupDrain bounds how long sweep waits for the cgroup to empty (the
// processes it killed to exit).
const cgroupDrain = 5 * time.Second

// remove closes the cgroup and removes its folder (it must be empty; one
// that cannot be removed is left).
func (c *cgroup) remove() {
	if c == nil {
		return
	}
	_ = syscall.Close(c.fd)
	for range 100 {
		err := os.Remove(c.dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
