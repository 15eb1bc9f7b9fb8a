package client

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// recorded is a sink that keeps what it is told; gate, when not nil, holds
// the first Apply until it is closed.
type recorded struct {
	mu   sync.Mutex
	evs  []Event
	gate chan struct{}
}

func (r *recorded) Apply(ev Event) {
	r.mu.Lock()
	first := len(r.evs) == 0
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
	if first && r.gate != nil {
		<-r.gate
	}
}

func (r *recorded) got() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

const followWait = 10 * time.Second

func waitDone(t *testing.T, f *Following) {
	t.Helper()
	select {
	case <-f.Done():
	case <-time.After(followWait):
		t.Fatal("Follow did not end")
	}
}

func TestFollowAppliesToEverySinkInOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	o := NewObserver(0)
	a, b := &recorded{}, &recorded{}
	f := Follow(context.Background(), o, a, b)
	for range 5 {
		o.Note("n", time.Time{})
	}
	o.Close()
	waitDone(t, f)
	f.Wait() // Done stays closed
	for _, r := range []*recorded{a, b} {
		evs := r.got()
		if len(evs) != 5 {
			t.Fatalf("applied %d events, want 5", len(evs))
		}
		for i, ev := range evs {
			if ev.Seq != uint64(i+1) {
				t.Errorf("event %d has Seq %d", i, ev.Seq)
			}
		}
	}
	if f.Missed() != 0 {
		t.Errorf("Missed = %d, want 0", f.Missed())
	}
}

func TestFollowCountsGaps(t *testing.T) {
	defer goleak.VerifyNone(t)
	o := NewObserver(0)
	r := &recorded{gate: make(chan struct{})}
	f := FollowN(context.Background(), o, 1, r)
	const sent = 20
	o.Note("first", time.Time{})
	// The first event is being applied (held) once it is recorded.
	deadline := time.Now().Add(followWait)
	for len(r.got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for range sent - 1 {
		o.Note("n", time.Time{})
	}
	close(r.gate)
	o.Close()
	waitDone(t, f)
	applied := uint64(len(r.got()))
	if f.Missed() == 0 || applied+f.Missed() != sent {
		t.Errorf("applied %d, missed %d: want some missed, %d in all", applied, f.Missed(), sent)
	}
}

func TestFollowEndsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	o := NewObserver(0)
	defer o.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorded{gate: make(chan struct{})}
	f := Follow(ctx, o, r)
	o.Note("first", time.Time{})
	deadline := time.Now().Add(followWait)
	for len(r.got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// Buffered while the first is held: cancelled before they are applied.
	for range 5 {
		o.Note("buffered", time.Time{})
	}
	cancel()
	close(r.gate)
	waitDone(t, f)
	o.Note("after", time.Time{})
	if evs := r.got(); len(evs) != 1 {
		t.Errorf("applied %d events, want only the one before the cancel", len(evs))
	}
}

func TestFollowCloseEnds(t *testing.T) {
	defer goleak.VerifyNone(t)
	o := NewObserver(0)
	defer o.Close()
	f := Follow(context.Background(), o, SinkFunc(func(Event) {}))
	f.Close()
	f.Close()
	waitDone(t, f)
}

func TestFollowGrowingSubscriptionCancelled(t *testing.T) {
	defer goleak.VerifyNone(t)
	o := NewObserver(0)
	defer o.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorded{gate: make(chan struct{})}
	f := Follow(ctx, growingSource{o}, r)
	for range 50 {
		o.Note("n", time.Time{})
	}
	cancel()
	close(r.gate)
	waitDone(t, f)
}

// growingSource subscribes with a one-event channel and an overflow queue
// (SubscribeGrowing), whose pump must not be left waiting.
type growingSource struct{ o *Observer }

func (g growingSource) Subscribe(int) *Subscription { return g.o.SubscribeGrowing(1, 1000) }

// ended is a sink that records when and how it was told the end.
type ended struct {
	recorded
	ends   int
	missed uint64
}

func (e *ended) End(missed uint64) { e.ends++; e.missed = missed }

func TestFollowTellsEndersOnceBeforeDone(t *testing.T) {
	defer goleak.VerifyNone(t)
	o := NewObserver(0)
	e := &ended{recorded: recorded{gate: make(chan struct{})}}
	f := FollowN(context.Background(), o, 1, e)
	o.Note("first", time.Time{})
	deadline := time.Now().Add(followWait)
	for len(e.got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for range 9 {
		o.Note("n", time.Time{})
	}
	close(e.gate)
	o.Close()
	waitDone(t, f)
	if e.ends != 1 || e.missed != f.Missed() || e.missed == 0 {
		t.Errorf("End called %d times with missed %d (Missed %d), want once with the missed count", e.ends, e.missed, f.Missed())
	}
}
