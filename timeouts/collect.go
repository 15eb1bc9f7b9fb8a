package timeouts

import (
	"slices"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// MaxProgress is the most progress times kept per request: past it the
// later ones are counted (Request.ProgressDropped) and left out of the
// evaluation.
const MaxProgress = 10_000

// MaxRows is the most per-request rows a report keeps; the summary counts
// every request whatever the rows kept (Report.Omitted says how many rows
// were left out).
const MaxRows = 10_000

// Request is the recorded timing of one of the session's requests (sonde's,
// or a tapped host's), as the client's events tell it: the pairing of
// answers to requests is the client's, by id.
type Request struct {
	// Session counts the sessions of the capture from 1 (ids start again
	// with each server process or connection).
	Session int        `json:"session"`
	ID      jsonrpc.ID `json:"id"`
	Method  string     `json:"method"`
	Tool    string     `json:"tool,omitempty"`
	// Sent is when the request was sent (queued when it never was).
	Sent time.Time `json:"-"`
	// Progress are the times of its progress notifications.
	Progress        []time.Time `json:"-"`
	ProgressDropped int         `json:"progress_dropped,omitempty"`
	// Answered is when its response (a result or a JSON-RPC error) came,
	// zero when none did; an answer after the session itself gave up (a
	// late response) counts.
	Answered time.Time `json:"-"`
	// Outcome is how the session ended it; Ended when.
	Outcome client.State `json:"outcome"`
	Ended   time.Time    `json:"-"`
	// Timeout and MaxEnd are the session's own budget for it (zero for a
	// tapped host's request: a passive observer knows none).
	Timeout time.Duration `json:"-"`
	MaxEnd  time.Time     `json:"-"`
}

type reqKey struct {
	gen int
	id  jsonrpc.ID
}

// Collector folds events into requests and evaluates each, once it is
// complete, under every policy. Use NewCollector; it is not safe for
// concurrent use.
type Collector struct {
	policies []Policy
	start    time.Time
	last     time.Time
	gen      int
	open     map[reqKey]*Request
	// waiting are the requests the session gave up on (timeout, cancel):
	// a late answer may still come for them.
	waiting map[reqKey]*Request
	order   []reqKey // waiting's keys, oldest first (some already gone)
	rep     Report
	sums    []Summary
	budget  bool
	live    bool // for Live: nothing kept for a report
}

// NewCollector returns a collector evaluating under policies, with times
// counted from start (the capture's start; the first event's when zero).
func NewCollector(start time.Time, policies []Policy) *Collector {
	c := &Collector{policies: policies, start: start, open: map[reqKey]*Request{}, waiting: map[reqKey]*Request{}}
	for _, p := range policies {
		c.sums = append(c.sums, Summary{Policy: p})
	}
	return c
}

// Add folds one event in: process starts and connections (a new id space),
// request transitions of sonde's (or the host's) requests, and the
// response frames that answered them, in time or late.
func (c *Collector) Add(ev client.Event) {
	if c.start.IsZero() {
		c.start = ev.Time
	}
	c.last = later(c.last, ev.Time)
	switch {
	case ev.StartsSession():
		c.flush()
		c.gen++
	case ev.Kind == client.EvRequest && ev.Req != nil && ev.Req.Dir == client.Out:
		c.request(ev.Time, ev.Req)
	case ev.Kind == client.EvFrame && ev.Frame != nil && ev.Frame.Dir == client.In && ev.Frame.Msg.Kind == jsonrpc.KindResponse:
		c.response(ev.Time, ev.Frame)
	}
}

func (c *Collector) request(t time.Time, q *client.ReqInfo) {
	k := reqKey{c.gen, q.ID}
	r := c.open[k]
	switch {
	case q.State == client.StateQueued || (q.State == client.StateSent && r == nil):
		if r == nil {
			r = &Request{Session: c.gen, ID: q.ID, Method: q.Method, Tool: q.Tool, Sent: t}
			c.open[k] = r
			delete(c.waiting, k)
		}
		if q.State == client.StateQueued {
			r.Timeout, r.MaxEnd = q.Timeout, q.MaxEnd
			c.budget = c.budget || q.Timeout > 0
		}
	case r == nil:
	case q.State == client.StateSent:
		r.Sent = t
	case q.State == client.StateProgress:
		if len(r.Progress) < MaxProgress {
			r.Progress = append(r.Progress, t)
		} else {
			r.ProgressDropped++
		}
	case q.State == client.StateRejected:
		delete(c.open, k) // never sent: no client's timer ran
	case q.State.Final():
		delete(c.open, k)
		r.Outcome, r.Ended = q.State, t
		if r.Answered.IsZero() && (q.State == client.StateTimeout || q.State == client.StateCancelled) {
			c.wait(k, r)
			return
		}
		c.done(r)
	}
}

// wait keeps r for a late answer; past client.DefaultRetiredIDs waiting
// (the client itself forgets older ids: their answers come unknown, not
// late), the oldest is evaluated without one.
func (c *Collector) wait(k reqKey, r *Request) {
	c.waiting[k] = r
	c.order = append(c.order, k)
	for len(c.waiting) > client.DefaultRetiredIDs && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		if w := c.waiting[old]; w != nil {
			delete(c.waiting, old)
			c.done(w)
		}
	}
	if len(c.order) > 4*client.DefaultRetiredIDs { // keys of answered requests pile up: compact
		c.order = slices.DeleteFunc(c.order, func(k reqKey) bool { return c.waiting[k] == nil })
	}
}

// response notes when an answer came: in time (the frame that settles the
// request comes before its outcome), or late, for a request the session
// gave up on.
func (c *Collector) response(t time.Time, f *client.FrameInfo) {
	k := reqKey{c.gen, f.Msg.ID}
	switch f.Verdict {
	case client.VerdictResolved, client.VerdictRemoteError:
		if r := c.open[k]; r != nil && r.Answered.IsZero() {
			r.Answered = t
		}
	case client.VerdictLate:
		if r := c.waiting[k]; r != nil {
			r.Answered = t
			delete(c.waiting, k)
			c.done(r)
		}
	}
}

// flush evaluates the requests that wait for a late answer that did not
// come; requests still open stay open (Finish counts them).
func (c *Collector) flush() {
	c.flushWaiting()
	c.rep.Open += len(c.open) // ended with their process, without an outcome
	clear(c.open)
}

func (c *Collector) done(r *Request) {
	if c.live {
		return
	}
	row := Row{Request: *r, Verdicts: make([]Verdict, len(c.policies))}
	for i, p := range c.policies {
		v := Evaluate(p, r)
		row.Verdicts[i] = v
		c.sums[i].add(row.Request.ID, r.Session, v)
	}
	c.rep.Requests++
	if len(c.rep.Rows) >= MaxRows {
		c.rep.Omitted++
		return
	}
	row.At = r.Sent.Sub(c.start)
	row.Latency = -1
	if !r.Answered.IsZero() {
		row.Latency = r.Answered.Sub(r.Sent)
	}
	row.Progress = len(r.Progress) + r.ProgressDropped
	row.Request.Progress = nil
	c.rep.Rows = append(c.rep.Rows, row)
}

// HasBudget reports whether the session gave any request a timeout of its
// own (a tapped host's session has none that sonde knows).
func (c *Collector) HasBudget() bool { return c.budget }

// Finish evaluates what still waits for a late answer and returns the
// report. Requests that never ended (the capture stops while they are in
// flight) are counted in Open, not evaluated.
func (c *Collector) Finish() Report {
	c.flushWaiting()
	c.rep.Open += len(c.open)
	clear(c.open)
	c.rep.Summary = c.sums
	if c.rep.Rows == nil {
		c.rep.Rows = []Row{}
	}
	if !c.last.IsZero() {
		c.rep.Duration = max(c.last.Sub(c.start), 0)
	}
	return c.rep
}

// flushWaiting evaluates every request still waiting for a late answer,
// oldest first.
func (c *Collector) flushWaiting() {
	for _, k := range c.order {
		if r := c.waiting[k]; r != nil {
			delete(c.waiting, k)
			c.done(r)
		}
	}
	c.order = c.order[:0]
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
