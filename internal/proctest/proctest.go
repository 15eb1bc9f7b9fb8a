// Package proctest helps tests prove that no process was left running: the
// fixture records the pids it and its children had, and Gone probes them.
package proctest

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ReadPIDs returns the pids listed one per line in path (missing file: none).
func ReadPIDs(t testing.TB, path string) []int {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	return pids
}

// AssertGone fails the test if any pid in the pid file is still alive after
// a grace period (death after SIGKILL is asynchronous; the grace is not a
// speed claim).
func AssertGone(t testing.TB, pidFile string) {
	t.Helper()
	for _, pid := range ReadPIDs(t, pidFile) {
		deadline := time.Now().Add(5 * time.Second)
		for Alive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d is still running: %s", pid, describe(pid))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func describe(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(string(b), "\x00", " ")
}
