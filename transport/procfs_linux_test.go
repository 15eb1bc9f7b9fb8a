//go:build linux

package transport

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcFS: the walk lists this process among the pids, a file longer
// than the buffer is read whole, and directory names that are not pids are
// skipped.
func TestProcFS(t *testing.T) {
	p, ok := openProc()
	if !ok {
		t.Skip("no /proc")
	}
	defer p.close()
	var pids []int
	p.eachPid(func(pid int) { pids = append(pids, pid) })
	if !slices.Contains(pids, os.Getpid()) || slices.Contains(pids, 0) {
		t.Fatalf("the walk listed %d pids, not this one (%d) or with 0", len(pids), os.Getpid())
	}
	// A file several buffers long, with no newline: a process's environ.
	long := "SONDE_TEST_LONG=" + strings.Repeat("x", 5000)
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{long}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// Until the child has exec'd, its environ is not yet the one given:
	// wait for it, not for a time.
	got, err := p.read(strconv.Itoa(cmd.Process.Pid) + "/environ")
	for deadline := time.Now().Add(10 * time.Second); err == nil && string(got) != long+"\x00" && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		got, err = p.read(strconv.Itoa(cmd.Process.Pid) + "/environ")
	}
	if string(got) != long+"\x00" || err != nil {
		t.Fatalf("read environ: %d bytes, %v; want %d", len(got), err, len(long)+1)
	}
	for name, want := range map[string]int{"1\x00": 1, "4194304\x00\x00": 4194304, "self\x00": 0, "\x00": 0, "12a\x00": 0, "1234567890\x00": 0} {
		if got, ok := pidName([]byte(name)); got != want || ok != (want > 0) {
			t.Errorf("pidName(%q) = %d, %v", name, got, ok)
		}
	}
}

// TestGroupMembersAfterLeader: once the leader of a group is reaped, a
// process it left in the group is still named (the check that the group
// is empty must not skip it), and once that one is gone too, nothing is.
func TestGroupMembersAfterLeader(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g, err := startGroup(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.kill() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	sleep, _ := strconv.Atoi(strings.TrimSpace(line))
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	// The background child is a fork of sh until it has exec'd sleep: wait
	// for the name, not for a time.
	m := groupMembers(cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); len(m) == 1 && m[0].Pid == sleep && m[0].Name == "sh" && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		m = groupMembers(cmd.Process.Pid)
	}
	if len(m) != 1 || m[0].Pid != sleep || m[0].Name != "sleep" {
		t.Fatalf("groupMembers = %+v, want the sleep %d", m, sleep)
	}
	if err := g.kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-cmd.Process.Pid, 0) != syscall.ESRCH; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Skip("the killed sleep is not reaped here (no init that reaps orphans)")
		}
	}
	if m := groupMembers(cmd.Process.Pid); len(m) != 0 {
		t.Fatalf("groupMembers of an empty group = %+v", m)
	}
}
