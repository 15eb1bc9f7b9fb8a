package transport

import (
	"errors"
	"io"
	"os"
	"testing"
)

func startProcessRole(t *testing.T, role string) *Process {
	t.Helper()
	p, err := StartProcess(ProcessConfig{Argv: []string{os.Args[0]}, Env: append(os.Environ(), roleEnv+"="+role, "GORACE=atexit_sleep_ms=0")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		p.Wait()
		p.Stdin.Close()
		p.Stdout.Close()
		p.Stderr.Close()
	})
	return p
}

// TestProcessRawPipes: StartProcess gives the raw pipes (the role's
// stderr and exit code come through them and Wait), and the whole
// environment when Env is nil.
func TestProcessRawPipes(t *testing.T) {
	p := startProcessRole(t, "exit7")
	errText, _ := io.ReadAll(p.Stderr)
	if got := p.Wait(); got.Code != 7 || got.Status != 7 || got.Signal != "" || len(got.Left) != 0 {
		t.Errorf("Wait = %+v, want code 7", got)
	}
	if string(errText) != "first line\nbye from role\n" {
		t.Errorf("stderr = %q", errText)
	}
	if got := p.Wait(); got.Code != 7 {
		t.Errorf("second Wait = %+v", got)
	}
}

// TestProcessSpawnError: a program that cannot start is a *SpawnError
// saying so.
func TestProcessSpawnError(t *testing.T) {
	_, err := StartProcess(ProcessConfig{Argv: []string{"/nonexistent/sonde-test-server"}})
	var se *SpawnError
	if !errors.As(err, &se) || se.Reason != SpawnNotFound {
		t.Errorf("err = %v, want a SpawnNotFound *SpawnError", err)
	}
	if _, err := StartProcess(ProcessConfig{}); !errors.As(err, &se) || se.Reason != SpawnBadConfig {
		t.Errorf("no argv: err = %v", err)
	}
}
