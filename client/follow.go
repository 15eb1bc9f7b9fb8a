package client

import "context"

// Source is an event stream that can be followed: a *Client, an *Observer
// (a session seen by sonde tap), or anything that hands out subscriptions
// under the delivery rule of Subscription (a capture being read back).
type Source interface {
	Subscribe(n int) *Subscription
}

// Sink is what a followed stream is told: each event, once, in Seq order,
// from Follow's goroutine (one at a time, so a sink fed by one Follow needs
// no lock of its own for that).
type Sink interface {
	Apply(ev Event)
}

// Ender is a Sink that is also told, once, that the stream ended: after
// its last event is applied and before Done is closed, with the count of
// the events its subscription missed (Following.Missed).
type Ender interface {
	Sink
	End(missed uint64)
}

// SinkFunc is a function used as a Sink.
type SinkFunc func(ev Event)

// Apply calls f(ev).
func (f SinkFunc) Apply(ev Event) { f(ev) }

// DefaultFollowBuffer is the subscription buffer of Follow, in events.
const DefaultFollowBuffer = 4096

// Following is a stream being followed (Follow): its done signal and the
// count of the events its subscription missed.
type Following struct {
	sub  *Subscription
	done chan struct{}
}

// Follow subscribes to src (with a buffer of DefaultFollowBuffer events)
// and applies each of its events to every sink, in order, on a goroutine of
// its own, until src closes the subscription or ctx is cancelled; then
// the sinks that are Enders are told, and Done is closed. Subscribe before the source starts to see every event.
func Follow(ctx context.Context, src Source, sinks ...Sink) *Following {
	return FollowN(ctx, src, DefaultFollowBuffer, sinks...)
}

// FollowN is Follow with a subscription buffer of n events (at least 1).
//
// Cancelling ctx closes the subscription: no event is applied after the
// cancel is seen, and what was buffered is drained, so that nothing is left
// waiting on the subscription once Done is closed.
func FollowN(ctx context.Context, src Source, n int, sinks ...Sink) *Following {
	f := &Following{sub: src.Subscribe(n), done: make(chan struct{})}
	stop := context.AfterFunc(ctx, f.sub.Close)
	go func() {
		defer close(f.done)
		for ev := range f.sub.C {
			if ctx.Err() != nil {
				continue
			}
			for _, s := range sinks {
				s.Apply(ev)
			}
		}
		stop()
		for _, s := range sinks {
			if e, ok := s.(Ender); ok {
				e.End(f.sub.Missed())
			}
		}
	}()
	return f
}

// Done is closed once every event has been applied (the source closed the
// subscription, or ctx was cancelled).
func (f *Following) Done() <-chan struct{} { return f.done }

// Wait returns once Done is closed.
func (f *Following) Wait() { <-f.done }

// Missed is how many events the subscription did not receive because its
// buffer was full (Subscription.Missed): final once Done is closed.
func (f *Following) Missed() uint64 { return f.sub.Missed() }

// Close unsubscribes: the events still buffered are applied, then Done is
// closed. It is idempotent.
func (f *Following) Close() { f.sub.Close() }
