package ui

import (
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/mcp"
)

// stats are the status bar's counters, folded from events in bounded
// memory.
type stats struct {
	// errors counts failed outcomes (not the user's cancels), tool results
	// with isError, and frames that broke the protocol.
	errors int
	missed uint64
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
			// A cancel is the user's doing and a retry continues the call:
			// neither is an error.
			if r.State != client.StateResolved && r.State != client.StateCancelled && r.State != client.StateRetried {
				s.errors++
			}
		case client.EvFrame:
			f := ev.Frame
			if f.Dir == client.In && f.Verdict == client.VerdictResolved && mcp.ResultIsError(f.Msg.Result) {
				s.errors++ // the tool failed: an error, though the request resolved
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
