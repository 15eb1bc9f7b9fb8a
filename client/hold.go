package client

import (
	"fmt"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// deadlineHold holds the clock of sonde's requests while a request of the
// server's waits for an answer (HoldDeadlines). It is guarded by Client.mu:
// its methods are called with c.mu held, from the Client only.
type deadlineHold struct {
	c *Client // the client it belongs to
	// wanted: HoldDeadlines(true) was called; since is when sonde's
	// deadlines were held (zero: they run).
	wanted bool
	since  time.Time
	// frames: HoldForFrames(true) was called (a breakpoint holds frames
	// of this session).
	frames bool
}

// HoldForFrames stops (on) or restarts the clock of sonde's requests
// while breakpoints hold frames of this session (docs/breakpoints.md):
// the time a frame is held is not the server's, so a request does not
// time out for it. It works as HoldDeadlines does, without waiting for a
// request of the server's.
func (c *Client) HoldForFrames(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold.frames = on
	c.hold.holdCheckLocked()
}

// HoldDeadlines stops (on) or restarts the clock of sonde's requests
// while someone is answering a request of the server's: the UI calls it
// when the dialog of such a request opens and closes. While on, and while
// a request of the server's waits for Respond, every pending request of
// sonde's (and every new one) is held: its timer stops with the time it
// had left (state held); when the hold ends, or nothing waits any more,
// each gets that time back (a new deadline in its event). A tools/call
// that made the server ask then does not time out while the user writes
// the answer. Progress for a held request keeps it held; with
// ResetOnProgress it refills the time left.
func (c *Client) HoldDeadlines(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold.wanted = on
	c.hold.holdCheckLocked()
}

// holdCheckLocked starts or ends the hold of sonde's deadlines after the
// wish (HoldDeadlines) or the set of the server's requests waiting for
// Respond changed: they are held while both say so.
func (s *deadlineHold) holdCheckLocked() {
	c := s.c
	asked := (c.hold.wanted && len(c.srv.waiting) > 0 || c.hold.frames) && !c.closed && c.dead == nil
	switch {
	case asked && c.hold.since.IsZero():
		c.hold.since = time.Now()
		for _, p := range c.pending {
			c.hold.holdLocked(p, c.hold.since)
		}
		if len(c.pending) > 0 {
			c.hub.emit(Event{Time: c.hold.since, Kind: EvNote, Note: fmt.Sprintf("%d deadline(s) held while %s", len(c.pending), c.hold.why())})
		}
	case !asked && !c.hold.since.IsZero():
		now := time.Now()
		held := now.Sub(c.hold.since)
		c.hold.since = time.Time{}
		for _, p := range c.pending {
			c.hold.releaseLocked(p, now, held)
		}
		if len(c.pending) > 0 {
			c.hub.emit(Event{Time: now, Kind: EvNote, Note: fmt.Sprintf("%d deadline(s) run again after %s held", len(c.pending), roundDur(held))})
		}
	}
}

// holdLocked stops p's clock with the time it has left.
func (s *deadlineHold) holdLocked(p *pending, now time.Time) {
	c := s.c
	if p.held {
		return
	}
	p.timer.Stop()
	p.held, p.left = true, max(p.deadline.Sub(now), 0)
	c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.Out, ID: jsonrpc.Int(p.id), Method: p.method, Tool: p.tool, State: StateHeld,
		Latency: now.Sub(p.queuedAt), RetryOf: p.retryOf}})
}

// releaseLocked gives p back the time it had left (and moves its
// MaxTotalTimeout end by the time held).
func (s *deadlineHold) releaseLocked(p *pending, now time.Time, held time.Duration) {
	c := s.c
	if !p.held {
		return
	}
	p.held = false
	p.deadline = now.Add(p.left)
	if !p.maxEnd.IsZero() {
		p.maxEnd = p.maxEnd.Add(held)
	}
	p.timer.Reset(p.left)
	state := StateQueued
	if p.wstate == written {
		state = StateSent
	}
	c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.Out, ID: jsonrpc.Int(p.id), Method: p.method, Tool: p.tool, State: state,
		Deadline: p.deadline, Latency: now.Sub(p.queuedAt), RetryOf: p.retryOf}})
}

// why says what the deadlines are held for (the caller holds c.mu).
func (s *deadlineHold) why() string {
	if s.frames {
		return "a breakpoint holds frames"
	}
	return "you answer a request of the server's"
}
