package client

import (
	"fmt"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

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
	c.holdWanted = on
	c.holdCheckLocked()
}

// holdCheckLocked starts or ends the hold of sonde's deadlines after the
// wish (HoldDeadlines) or the set of the server's requests waiting for
// Respond changed: they are held while both say so.
func (c *Client) holdCheckLocked() {
	asked := c.holdWanted && len(c.srv.waiting) > 0 && !c.closed && c.dead == nil
	switch {
	case asked && c.heldSince.IsZero():
		c.heldSince = time.Now()
		for _, p := range c.pending {
			c.holdLocked(p, c.heldSince)
		}
		if len(c.pending) > 0 {
			c.emit(Event{Time: c.heldSince, Kind: EvNote, Note: fmt.Sprintf("%d deadline(s) held while you answer a request of the server's", len(c.pending))})
		}
	case !asked && !c.heldSince.IsZero():
		now := time.Now()
		held := now.Sub(c.heldSince)
		c.heldSince = time.Time{}
		for _, p := range c.pending {
			c.releaseLocked(p, now, held)
		}
		if len(c.pending) > 0 {
			c.emit(Event{Time: now, Kind: EvNote, Note: fmt.Sprintf("%d deadline(s) run again after %s held", len(c.pending), roundDur(held))})
		}
	}
}

// holdLocked stops p's clock with the time it has left.
func (c *Client) holdLocked(p *pending, now time.Time) {
	if p.held {
		return
	}
	p.timer.Stop()
	p.held, p.left = true, max(p.deadline.Sub(now), 0)
	c.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.Out, ID: jsonrpc.Int(p.id), Method: p.method, Tool: p.tool, State: StateHeld,
		Latency: now.Sub(p.queuedAt), RetryOf: p.retryOf}})
}

// releaseLocked gives p back the time it had left (and moves its
// MaxTotalTimeout end by the time held).
func (c *Client) releaseLocked(p *pending, now time.Time, held time.Duration) {
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
	c.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.Out, ID: jsonrpc.Int(p.id), Method: p.method, Tool: p.tool, State: state,
		Deadline: p.deadline, Latency: now.Sub(p.queuedAt), RetryOf: p.retryOf}})
}
