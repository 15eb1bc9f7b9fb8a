package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv("PROCTEST_EXIT") == "1" {
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PROCTEST_EXIT=1", "GORACE=atexit_sleep_ms=0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Until it is reaped the child is a zombie: signal 0 still reaches it,
	// but it is not running.
	deadline := time.Now().Add(10 * time.Second)
	for Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		t.Fatalf("child %d vanished before it was reaped: %v", pid, err)
	}
	if Alive(pid) {
		t.Fatalf("exited child %d (a zombie) counts as alive", pid)
	}
	cmd.Wait()
	if Alive(pid) {
		t.Fatal("reaped child counts as alive")
	}
}

func TestReadPIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pids")
	if got := ReadPIDs(t, path); got != nil {
		t.Fatalf("missing file gave %v", got)
	}
	os.WriteFile(path, []byte("12\n\nx\n34\n"), 0o600)
	if got := ReadPIDs(t, path); len(got) != 2 || got[0] != 12 || got[1] != 34 {
		t.Fatalf("got %v", got)
	}
}
