package transport

import (
	"os"
	"os/exec"
	"testing"
)

// TestGroupAfterExit: once the server is reaped, the steps of Close are
// harmless: kill finds nothing left (not an error), and after release stop
// and kill do nothing; release twice is fine.
func TestGroupAfterExit(t *testing.T) {
	// The test binary itself, running no test, exits at once.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	g, err := startGroup(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server: %v", err)
	}
	if err := g.kill(); err != nil {
		t.Errorf("kill after exit: %v", err)
	}
	g.release()
	if err := g.stop(); err != nil {
		t.Errorf("stop after release: %v", err)
	}
	if err := g.kill(); err != nil {
		t.Errorf("kill after release: %v", err)
	}
	g.release()
}

// TestGroupStartFails: a command that cannot start gives cmd.Start's error
// and no group.
func TestGroupStartFails(t *testing.T) {
	g, err := startGroup(exec.Command("/nonexistent/sonde-test-server"))
	if err == nil || g != nil {
		t.Fatalf("got %v, %v; want an error and no group", g, err)
	}
	if se := classifySpawn("x", err); se.Reason != SpawnNotFound {
		t.Errorf("classified %v, want SpawnNotFound", se.Reason)
	}
}
