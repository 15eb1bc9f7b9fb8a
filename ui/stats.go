package ui

import (
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// stats are the status bar's counters, folded from events in bounded
// memory.
type stats struct {
	// errors counts sonde's requests that are errors (client.Errored: a
	// JSON-RPC error, a result with isError, a timeout…; not the user's
	// cancel), and frames that broke the protocol.
	errors int
	// isError holds the requests whose result had isError, from the
	// response frame until the request's outcome (which follows it).
	isError map[jsonrpc.ID]bool
	missed  uint64
	// buckets count request outcomes per 250 ms slot over the last 5 s,
	// for the calls/s figure.
	buckets [rateSlots]bucket
}

type bucket struct {
	slot int64
	n    int
}

const (
	slotMS    = 250
	rateSlots = 20 // 20 × 250 ms = 5 s
)

func (s *stats) apply(evs []client.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case client.EvRequest:
			r := ev.Req
			if r.Dir != client.Out || !r.State.Final() {
				continue
			}
			slot := ev.Time.UnixMilli() / slotMS
			b := &s.buckets[slot%rateSlots]
			if b.slot != slot {
				*b = bucket{slot: slot}
			}
			b.n++
			if client.Errored(r.State, s.isError[r.ID]) {
				s.errors++
			}
			delete(s.isError, r.ID)
		case client.EvProcess:
			if ev.StartsSession() {
				clear(s.isError) // ids start again
			}
		case client.EvFrame:
			f := ev.Frame
			if f.Dir == client.In && f.Verdict == client.VerdictResolved && mcp.ResultIsError(f.Msg.Result) {
				if s.isError == nil {
					s.isError = map[jsonrpc.ID]bool{}
				}
				s.isError[f.Msg.ID] = true // the tool failed: counted with the request's outcome
			}
			if filter.ProblemVerdict(f.Verdict) {
				s.errors++
			}
		}
	}
}

// rate returns request outcomes per second over the 5 s before now.
func (s *stats) rate(now time.Time) float64 {
	cur := now.UnixMilli() / slotMS
	n := 0
	for _, b := range s.buckets {
		if b.slot > cur-rateSlots && b.slot <= cur {
			n += b.n
		}
	}
	return float64(n) / (rateSlots * slotMS / 1000.0)
}
