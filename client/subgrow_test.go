package client

import (
	"testing"
	"time"
)

// TestSubscribeGrowing: a growing subscription whose reader is away
// while 10,000 events go by (a channel of 4) loses none of them, and gets
// them in order once it reads; past its max, events are missed and
// counted; the queue is freed once read.
func TestSubscribeGrowing(t *testing.T) {
	o := NewObserver(0)
	sub := o.SubscribeGrowing(4, 20000)
	for i := range 10000 {
		o.Note("n", time.Unix(int64(i), 0))
	}
	var last uint64
	for i := range 10000 {
		ev := <-sub.C
		if ev.Seq != last+1 {
			t.Fatalf("event %d: seq %d after %d", i, ev.Seq, last)
		}
		last = ev.Seq
	}
	waitPumped(t, sub)
	if sub.Missed() != 0 {
		t.Errorf("%d missed, want 0", sub.Missed())
	}
	sub.grow.mu.Lock()
	if sub.grow.q != nil {
		t.Errorf("the queue was not freed once read: cap %d", cap(sub.grow.q))
	}
	sub.grow.mu.Unlock()
	// Past max: 4 in the channel, 100 waiting (and the one the goroutine
	// is handing on), the rest missed.
	o2 := NewObserver(0)
	sub2 := o2.SubscribeGrowing(4, 100)
	for range 1000 {
		o2.Note("n", time.Now())
	}
	o2.Close()
	n := 0
	for range sub2.C {
		n++
	}
	if n < 104 || n > 105 || uint64(n)+sub2.Missed() != 1000 {
		t.Errorf("%d delivered, %d missed; want 104 (or 105) and the rest", n, sub2.Missed())
	}
	o.Close()
	if _, ok := <-sub.C; ok {
		t.Errorf("C not closed after the observer")
	}
}

// TestSubscribeGrowingClose: a growing subscription closed while events
// wait for its reader still gives them, then closes C (as a channel
// does what it buffered), and its goroutine ends; the observer's later
// events go on.
func TestSubscribeGrowingClose(t *testing.T) {
	o := NewObserver(0)
	sub := o.SubscribeGrowing(2, 1000)
	for range 100 {
		o.Note("n", time.Now())
	}
	<-sub.C
	sub.Close()
	n := 1
	for range sub.C {
		n++
	}
	if n != 100 {
		t.Errorf("%d events read, want the 100 emitted before Close", n)
	}
	o.Note("after", time.Now())
	o.Close()
	waitPumped(t, sub)
}

// waitPumped waits (10 s at most) for sub's goroutine to end.
func waitPumped(t *testing.T, sub *Subscription) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sub.grow.mu.Lock()
		p := sub.grow.pumping
		sub.grow.mu.Unlock()
		if !p {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the subscription's goroutine did not end")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSubscribeGrowingOrder: events emitted while the reader reads at
// its own pace, now behind and now caught up (the queue filling, drained,
// its goroutine ended and started again), all arrive once, in order.
func TestSubscribeGrowingOrder(t *testing.T) {
	const n = 200000
	o := NewObserver(0)
	sub := o.SubscribeGrowing(8, n)
	got := make(chan uint64, 1)
	go func() {
		var last, count uint64
		for ev := range sub.C {
			if ev.Seq != last+1 {
				t.Errorf("seq %d after %d", ev.Seq, last)
			}
			last = ev.Seq
			count++
			if count%1000 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		got <- count
	}()
	for i := range n {
		o.Note("n", time.Now())
		if i%5000 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	o.Close()
	if c := <-got; c != n || sub.Missed() != 0 {
		t.Errorf("%d events read, %d missed, want %d and 0", c, sub.Missed(), n)
	}
}
