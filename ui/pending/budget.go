package pending

import (
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// budget is a request's budget as its queued event gave it: its own
// timeout and, with --timeout-reset-on-progress, the latest its deadline
// may move to.
type budget struct {
	timeout time.Duration
	maxEnd  time.Time
	queued  time.Time
}

func (b *budget) follow(r *client.ReqInfo) {
	if r.State != client.StateQueued || r.Timeout <= 0 {
		return
	}
	b.timeout, b.maxEnd = r.Timeout, r.MaxEnd
	b.queued = r.Deadline.Add(-r.Timeout)
}

// text is the budget at now for the end of a row's detail: "of 30s", and
// with a total cap "of 30s ↻ 4m48s of 5m0s" (progress restarts the
// deadline; the total left).
func (b *budget) text(now time.Time) string {
	if b.timeout <= 0 {
		return ""
	}
	s := "of " + clock(b.timeout)
	if !b.maxEnd.IsZero() {
		s += " ↻ " + clock(max(b.maxEnd.Sub(now), 0)) + " of " + clock(b.maxEnd.Sub(b.queued))
	}
	return s
}
