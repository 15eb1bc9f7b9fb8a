package connect

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// countdownEvery is how often --trace shows the budget left of each
// request in flight; countdownMin is the age from which a request is
// shown, and countdownRows the most shown per tick.
const (
	countdownEvery = time.Second
	countdownMin   = time.Second
	countdownRows  = 5
)

// budget is one of sonde's requests in flight as --trace follows it.
type budget struct {
	id, method, tool string
	queued, deadline time.Time
	timeout          time.Duration
	maxEnd           time.Time
	held             bool
}

// budgets follows sonde's requests in flight from the event stream.
type budgets map[string]*budget

func (b budgets) follow(ev client.Event) {
	r := ev.Req
	if ev.Kind != client.EvRequest || r.Dir != client.Out || !r.ID.IsValid() {
		return
	}
	key := r.ID.String()
	if r.State.Final() {
		delete(b, key)
		return
	}
	e := b[key]
	if e == nil {
		if r.State != client.StateQueued {
			return
		}
		e = &budget{id: key, method: r.Method, tool: r.Tool, queued: ev.Time, timeout: r.Timeout, maxEnd: r.MaxEnd}
		b[key] = e
	}
	e.held = r.State == client.StateHeld
	if !r.Deadline.IsZero() {
		e.deadline = r.Deadline
	}
}

// due lists the requests old enough to show at now, oldest first, at most
// countdownRows, and how many more there are.
func (b budgets) due(now time.Time) ([]*budget, int) {
	var out []*budget
	for _, e := range b {
		if now.Sub(e.queued) >= countdownMin {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].queued.Before(out[j].queued) })
	if len(out) > countdownRows {
		return out[:countdownRows], len(out) - countdownRows
	}
	return out, 0
}

// countdownLine is one request's budget at now, as --trace prints it:
// "pending 12s: 18s left of 30s (resets on progress; 4m48s of the 5m0s
// total left)".
func countdownLine(at string, e *budget, now time.Time) string {
	who := e.method
	if e.tool != "" {
		who += " " + e.tool
	}
	line := fmt.Sprintf("%s     id %-5s %-28s pending %s: ", at, e.id, who, textfmt.Dur(now.Sub(e.queued)))
	switch {
	case e.held:
		line += "deadline held (a request of the server's is being answered)"
	default:
		line += fmt.Sprintf("%s left of %s", textfmt.Dur(max(e.deadline.Sub(now), 0)), textfmt.Dur(e.timeout))
	}
	if !e.maxEnd.IsZero() {
		line += fmt.Sprintf(" (resets on progress; %s of the %s total left)", textfmt.Dur(max(e.maxEnd.Sub(now), 0)), textfmt.Dur(e.maxEnd.Sub(e.queued)))
	}
	return line
}

// countdownJSON is the same as a JSON object (--trace with --json).
func countdownJSON(e *budget, now time.Time) string {
	m := map[string]any{"id": json.RawMessage(e.id), "method": e.method, "age_ms": now.Sub(e.queued).Milliseconds(),
		"timeout_ms": e.timeout.Milliseconds(), "held": e.held}
	if e.tool != "" {
		m["tool"] = e.tool
	}
	if !e.held {
		m["left_ms"] = max(e.deadline.Sub(now), 0).Milliseconds()
	}
	if !e.maxEnd.IsZero() {
		m["reset_on_progress"] = true
		m["total_left_ms"] = max(e.maxEnd.Sub(now), 0).Milliseconds()
	}
	b, _ := json.Marshal(map[string]any{"countdown": m})
	return string(b)
}
