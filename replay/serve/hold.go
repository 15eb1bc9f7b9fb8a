package serve

import (
	"bytes"
	"errors"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Breakpoints on the mock (Options.Hold; docs/breakpoints.md, "replay
// --serve"): the mock is the server, so dir:out is what its client sends
// it and dir:in what it plays back. A held client message is not answered
// until it is let go (released: answered as it came; edited: the edit is
// answered instead; answered: the client gets the answer and the mock
// never sees the request; dropped: never answered). A held line of the
// mock's is written when let go (released or edited, on the stream of the
// request it was played for), never when dropped; a held request of the
// mock's answered in the client's place is taken as the client's answer.
// A held frame never blocks the others.

// errEnded is what a decision gets after the mock's session ended.
var errEnded = errors.New("the mock's session ended")

// fromClient answers one client line, unless a breakpoint holds it.
func (p *player) fromClient(line []byte) {
	if p.hold != nil && p.hold.Armed() {
		held := bytes.Clone(line)
		route := routeOf(held)
		if p.hold.Offer(client.Out, held, func(o hold.Outcome) error { return p.decidedOut(o, route) }) {
			return
		}
	}
	_ = p.handleLine(line)
}

// handleLine answers a client line, one at a time.
func (p *player) handleLine(line []byte) error {
	p.hmu.Lock()
	defer p.hmu.Unlock()
	if p.isEnded() {
		return errEnded // (nothing is played once Serve waits for what plays)
	}
	p.handle(line)
	return nil
}

// routeOf is the JSON id of a request line (its answer's route), or nil.
func routeOf(line []byte) []byte {
	id, method := jsonrpc.ScanID(line)
	if !method || !id.IsValid() {
		return nil
	}
	b, err := id.MarshalJSON()
	if err != nil {
		return nil
	}
	return b
}

// decidedOut carries out the decision on a held client line.
func (p *player) decidedOut(o hold.Outcome, route []byte) error {
	if p.isEnded() {
		return errEnded
	}
	switch {
	case o.Action == client.HoldDropped:
		return nil
	case o.Back():
		return p.writeNow(o.Frame, route)
	}
	return p.handleLine(o.Frame)
}

// offer offers a line of the mock's to the breakpoints; true when held.
func (p *player) offer(raw, route []byte) bool {
	if p.hold == nil || !p.hold.Armed() {
		return false
	}
	held, r := bytes.Clone(raw), bytes.Clone(route)
	return p.hold.Offer(client.In, held, func(o hold.Outcome) error {
		if p.isEnded() {
			return errEnded
		}
		switch {
		case o.Action == client.HoldDropped:
			return nil
		case o.Back():
			// The mock's own request, answered in the client's place.
			return p.handleLine(o.Frame)
		}
		return p.writeNow(o.Frame, r)
	})
}

func (p *player) isEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// end marks the session over: decisions after it fail (errEnded).
func (p *player) end() {
	p.hmu.Lock()
	defer p.hmu.Unlock()
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
}
