package manager

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

func TestDelay(t *testing.T) {
	p := Policy{BaseDelay: time.Second, MaxDelay: 5 * time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 40: 5 * time.Second} {
		if got := p.Delay(n); got != want {
			t.Errorf("Delay(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestBackoffQuarantineApproval runs in a synctest bubble: a server whose
// executable does not exist (a real spawn failure) is tried at once, then
// after 1s, 2s and 4s (the backoff doubles: each use waits for it), and the
// fourth failure quarantines it. The quarantine outlives the manager (the
// state file), is not lifted by approval while the hash is the same, and
// is lifted by approval once the configuration changed.
func TestBackoffQuarantineApproval(t *testing.T) {
	state := filepath.Join(t.TempDir(), StateFile)
	synctest.Test(t, func(t *testing.T) {
		missing := Spec{Name: "gone", Argv: []string{filepath.Join(t.TempDir(), "no-such-server")}}
		pol := Policy{BaseDelay: time.Second, MaxDelay: time.Minute, MaxFailures: 4, HealthyAfter: time.Minute}
		m, err := New([]Spec{missing}, Options{Policy: pol, StatePath: state})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		start := time.Now()
		var at []time.Duration
		for range 4 {
			_, err := m.Client(ctx, "gone")
			if !errors.Is(err, client.ErrSpawn) {
				t.Fatalf("start: %v", err)
			}
			at = append(at, time.Since(start))
		}
		want := []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second}
		for i := range want {
			if at[i] != want[i] {
				t.Fatalf("attempts at %v, want %v", at, want)
			}
		}
		st := m.Status()[0]
		if st.State != Quarantined || st.Failures != 4 || st.Why == "" {
			t.Fatalf("status %+v", st)
		}
		if _, err := m.Client(ctx, "gone"); !errors.Is(err, ErrQuarantined) || time.Since(start) != at[3] {
			t.Fatalf("quarantined: %v after %s", err, time.Since(start))
		}
		m.Stop(nil)

		m2, _ := New([]Spec{missing}, Options{Policy: pol, StatePath: state})
		if _, err := m2.Client(ctx, "gone"); !errors.Is(err, ErrQuarantined) {
			t.Fatalf("a new run: %v", err)
		}
		if err := m2.Approve("gone"); !errors.Is(err, ErrUnchanged) {
			t.Fatalf("approve unchanged: %v", err)
		}
		m2.Stop(nil)

		changed := missing
		changed.Argv = append(changed.Argv, "--fixed")
		m3, _ := New([]Spec{changed}, Options{Policy: pol, StatePath: state})
		if st := m3.Status()[0]; st.State != Quarantined || !st.Changed {
			t.Fatalf("changed, not approved: %+v", st)
		}
		if _, err := m3.Client(ctx, "gone"); !errors.Is(err, ErrQuarantined) {
			t.Fatalf("changed but not approved: %v", err)
		}
		if err := m3.Approve("gone"); err != nil {
			t.Fatal(err)
		}
		if st := m3.Status()[0]; st.State != NotStarted || st.Failures != 0 {
			t.Fatalf("approved: %+v", st)
		}
		t0 := time.Now()
		if _, err := m3.Client(ctx, "gone"); !errors.Is(err, client.ErrSpawn) || time.Since(t0) != 0 {
			t.Fatalf("approved start: %v", err)
		}
		if st := m3.Status()[0]; st.State != BackingOff || st.Failures != 1 || !st.NextTry.Equal(t0.Add(time.Second)) {
			t.Fatalf("after approval the count starts afresh: %+v", st)
		}
		// A caller whose context ends while the server backs off gets its
		// reason, and the wait is not a failure.
		bctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err = m3.Client(bctx, "gone")
		var r *Reason
		if !errors.Is(err, client.ErrAborted) || !errors.As(err, &r) || r.Kind != BudgetStop {
			t.Fatalf("budget stop while backing off: %v", err)
		}
		if st := m3.Status()[0]; st.Failures != 1 {
			t.Fatalf("the stop counted: %+v", st)
		}
		m3.Stop(nil)
	})
}
