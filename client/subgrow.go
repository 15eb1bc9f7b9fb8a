package client

import "sync"

// overflow is what a growing subscription (Observer.SubscribeGrowing)
// holds beyond its channel: the events that did not fit, oldest first, up
// to max, which a goroutine of its own moves on to the channel as the
// subscriber reads (and then ends, the queue freed). A subscription that
// keeps up costs its channel only; one that falls behind holds what it
// has not read, up to max, before events are missed.
type overflow struct {
	mu      sync.Mutex
	q       []Event
	head    int
	max     int
	pumping bool // a goroutine is moving q on
	closing bool // close the channel once q is delivered
}

// offer delivers ev to s (called under the hub's emitMu): at once when
// the channel has room and nothing waits before it, else after what
// waits; past max, it is missed.
func (g *overflow) offer(s *Subscription, ev Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.pumping {
		select {
		case s.ch <- ev:
			return
		default:
		}
	}
	if len(g.q)-g.head >= g.max {
		s.missed.Add(1)
		return
	}
	if g.head > 0 && len(g.q) == cap(g.q) && g.head >= len(g.q)/2 {
		// Reuse the room of what was delivered before growing.
		n := copy(g.q, g.q[g.head:])
		clear(g.q[n:])
		g.q, g.head = g.q[:n], 0
	}
	g.q = append(g.q, ev)
	if !g.pumping {
		g.pumping = true
		go g.pump(s)
	}
}

// pump moves the waiting events on to s's channel, in order, until none
// waits (or the subscription is closed), then ends.
func (g *overflow) pump(s *Subscription) {
	for {
		g.mu.Lock()
		if g.head == len(g.q) {
			g.q, g.head, g.pumping = nil, 0, false
			if g.closing {
				close(s.ch)
			}
			g.mu.Unlock()
			return
		}
		ev := g.q[g.head]
		g.q[g.head] = Event{}
		g.head++
		g.mu.Unlock()
		s.ch <- ev
	}
}

// close closes s's channel once what waits is delivered (as a closed
// channel still gives what it buffered). Called under the hub's emitMu,
// once.
func (g *overflow) close(s *Subscription) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pumping {
		g.closing = true // the pump closes it
		return
	}
	close(s.ch)
}

// SubscribeGrowing returns a subscription whose channel buffers buffer
// events (at least 1) and which, when the subscriber falls behind, holds
// up to max more (at least buffer; and the one on its way) in a queue that grows as they wait and
// is freed once they are read: a subscriber that keeps up costs only its
// channel, and one that lags loses nothing within max. Delivery is
// otherwise that of Subscribe (nothing waits for the subscriber; past
// max, events are missed). The subscriber must read C to its end (it is
// closed after the observer is) or Close the subscription.
func (o *Observer) SubscribeGrowing(buffer, max int) *Subscription {
	return o.hub.subscribeGrowing(buffer, max)
}

func (h *hub) subscribeGrowing(buffer, n int) *Subscription {
	buffer = max(buffer, 1)
	ch := make(chan Event, buffer)
	return h.add(&Subscription{C: ch, ch: ch, owner: h, grow: &overflow{max: max(n, buffer)}})
}
