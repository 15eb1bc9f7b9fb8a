//go:build unix

package transport

import (
	"syscall"
	"testing"
	"time"
)

// TestProcessSignal: a signal sent with Signal ends the program, and Wait
// reports it as a shell does (128 + the signal's number).
func TestProcessSignal(t *testing.T) {
	p := startProcessRole(t, "sleep")
	time.Sleep(50 * time.Millisecond)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	got := p.Wait()
	if got.Signal != "SIGTERM" || got.Status != 128+int(syscall.SIGTERM) || got.Code != -1 {
		t.Errorf("Wait = %+v, want SIGTERM, status 143", got)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("Signal after Wait: %v", err)
	}
}
