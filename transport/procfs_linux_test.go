//go:build linux

package transport

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
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
	got, err := p.read(strconv.Itoa(cmd.Process.Pid) + "/environ")
	if string(got) != long+"\x00" || err != nil {
		t.Fatalf("read environ: %d bytes, %v; want %d", len(got), err, len(long)+1)
	}
	for name, want := range map[string]int{"1\x00": 1, "4194304\x00\x00": 4194304, "self\x00": 0, "\x00": 0, "12a\x00": 0, "1234567890\x00": 0} {
		if got, ok := pidName([]byte(name)); got != want || ok != (want > 0) {
			t.Errorf("pidName(%q) = %d, %v", name, got, ok)
		}
	}
}
