//go:build linux || darwin

package client

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSnapshotStopped: a server stopped with SIGSTOP is "stopped".
func TestSnapshotStopped(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	pid := fixturePid(t, s)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	var snap *Snapshot
	// The state may take a moment to show.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if snap = timeoutSnapshot(t, s, echoX, 500*time.Millisecond); snap.Kind == SnapStopped {
			break
		}
	}
	if snap.Kind != SnapStopped {
		t.Fatalf("kind %s", snap.Kind)
	}
}

func fixturePid(t *testing.T, s *session) int {
	t.Helper()
	b, err := os.ReadFile(s.pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.Fields(string(b))[0])
	if err != nil || pid <= 0 {
		t.Fatal(errors.Join(err, errors.New("no pid in "+s.pidFile)))
	}
	return pid
}
