// Package stats summarises a session from its request lifecycle events:
// per method, how many requests, how many failed and how they ended, and
// latency percentiles; and how many of sonde's requests were in flight over
// time. It is pure over a stream of client events (Collector.Add), so a
// capture file and a live session are summarised the same way.
package stats

import (
	"slices"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// MaxBuckets is the most buckets an automatic bucket size gives.
const MaxBuckets = 40

// key groups requests: by direction, method and (for tools/call) tool.
type key struct {
	dir          client.Direction
	method, tool string
}

// acc accumulates one group.
type acc struct {
	count, errors int
	outcomes      map[client.State]int
	lat           []time.Duration
}

// reqKey names a request across restarts (ids start again with each
// server process).
type reqKey struct {
	gen int
	id  jsonrpc.ID
}

// point is a change of the in-flight count.
type point struct {
	t time.Time
	n int
}

// Collector accumulates events. Use New; it is not safe for concurrent use.
type Collector struct {
	start, last time.Time
	gen         int
	groups      map[key]*acc
	order       []key

	inflight map[reqKey]struct{}
	points   []point
	// isError holds sonde's requests whose result had isError, from the
	// response frame until the request's outcome (which follows it).
	isError map[reqKey]bool
	// heldFor is the time breakpoints held a request's frames (sonde tap
	// --break, docs/breakpoints.md) before its outcome; settled are the
	// latencies of the requests settled lately, for a hold's step noted
	// after the outcome. Held time is not the server's: it is taken off.
	heldFor map[holdKey]time.Duration
	settled map[holdKey]latencyAt
	// chains are the open MRTR chains by their last round; ended those
	// that ended (mrtr.go).
	chains map[reqKey]*openChain
	ended  []Chain
}

// holdKey names a request of either direction across restarts.
type holdKey struct {
	gen int
	dir client.Direction
	id  string
}

// latencyAt is where a settled request's latency is in its group.
type latencyAt struct {
	a *acc
	i int
}

// maxHoldKeys bounds heldFor and settled: past it they start again (a
// hold's time is then counted in its request's latency).
const maxHoldKeys = 4096

// New returns an empty collector whose times count from start (the
// capture's start; the first event's time when zero).
func New(start time.Time) *Collector {
	return &Collector{start: start, groups: map[key]*acc{}, inflight: map[reqKey]struct{}{}, isError: map[reqKey]bool{},
		heldFor: map[holdKey]time.Duration{}, settled: map[holdKey]latencyAt{}, chains: map[reqKey]*openChain{}}
}

// Add folds one event in. Request lifecycle events count, process starts,
// which begin a new id space, and the response frames of sonde's
// requests, which say whether a result had isError.
func (c *Collector) Add(ev client.Event) {
	if c.start.IsZero() {
		c.start = ev.Time
	}
	if ev.Time.After(c.last) {
		c.last = ev.Time
	}
	switch {
	case ev.StartsSession():
		c.gen++
		clear(c.isError)
		clear(c.heldFor)
		clear(c.settled)
		clear(c.chains)
		if len(c.inflight) > 0 { // the old process's requests are gone with it
			clear(c.inflight)
			c.points = append(c.points, point{ev.Time, 0})
		}
	case ev.Kind == client.EvRequest && ev.Req != nil:
		c.request(ev.Time, ev.Req)
	case ev.Kind == client.EvNote && ev.Hold != nil:
		c.held(ev.Hold)
	case ev.Kind == client.EvFrame && ev.Frame != nil && ev.Frame.Dir == client.In &&
		ev.Frame.Msg.Kind == jsonrpc.KindResponse && ev.Frame.Verdict == client.VerdictResolved &&
		mcp.ResultIsError(ev.Frame.Msg.Result):
		c.isError[reqKey{c.gen, ev.Frame.Msg.ID}] = true
	}
}

func (c *Collector) request(t time.Time, q *client.ReqInfo) {
	if q.Dir == client.Out {
		k := reqKey{c.gen, q.ID}
		_, in := c.inflight[k]
		switch {
		case q.State == client.StateSent && !in && q.ID.IsValid():
			c.inflight[k] = struct{}{}
			c.points = append(c.points, point{t, len(c.inflight)})
		case q.State.Final() && in:
			delete(c.inflight, k)
			c.points = append(c.points, point{t, len(c.inflight)})
		}
	}
	if !q.State.Final() {
		c.chain(t, q, 0)
		return
	}
	isError := false
	if q.Dir == client.Out {
		k := reqKey{c.gen, q.ID}
		isError = c.isError[k]
		delete(c.isError, k)
	}
	g := key{q.Dir, q.Method, q.Tool}
	a := c.groups[g]
	if a == nil {
		a = &acc{outcomes: map[client.State]int{}}
		c.groups[g] = a
		c.order = append(c.order, g)
	}
	a.count++
	a.outcomes[q.State]++
	if client.Errored(q.State, isError) {
		a.errors++
	}
	if q.State == client.StateResolved || q.State == client.StateError || q.State == client.StateAnswered {
		lat := q.Latency
		if q.ID.IsValid() {
			k := holdKey{c.gen, q.Dir, q.ID.String()}
			lat = max(0, lat-c.heldFor[k])
			delete(c.heldFor, k)
			if len(c.settled) >= maxHoldKeys {
				clear(c.settled)
			}
			c.settled[k] = latencyAt{a, len(a.lat)}
		}
		a.lat = append(a.lat, lat)
		c.chain(t, q, lat)
		return
	}
	c.chain(t, q, q.Latency)
}

// held takes the time a breakpoint held a frame off its request's latency
// (once the frame went on: a step other than held). A request's own frame
// held is its direction's; an answer held answers a request of the other.
func (c *Collector) held(h *client.Hold) {
	if h.Action == client.HoldHeld || h.Held <= 0 || !h.ID.IsValid() {
		return
	}
	dir := h.Dir
	if h.Kind == jsonrpc.KindResponse {
		dir = client.Out
		if h.Dir == client.Out {
			dir = client.In
		}
	}
	k := holdKey{c.gen, dir, h.ID.String()}
	if at, ok := c.settled[k]; ok { // the outcome came first
		at.a.lat[at.i] = max(0, at.a.lat[at.i]-h.Held)
		delete(c.settled, k)
		return
	}
	if len(c.heldFor) >= maxHoldKeys {
		clear(c.heldFor)
	}
	c.heldFor[k] += h.Held
}

// Method is the summary of one group of requests.
type Method struct {
	// Dir is "out" for sonde's requests, "in" for the server's.
	Dir    string `json:"dir"`
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	// Count is the number of requests that ended; Errors those that are
	// errors (client.Errored: a JSON-RPC error, a result with isError, a
	// timeout, an exit…; not the caller's cancel), by outcome in Outcomes.
	Count    int            `json:"count"`
	Errors   int            `json:"errors"`
	Outcomes map[string]int `json:"outcomes"`
	// Answered is the number of requests that got a response (a result or
	// a JSON-RPC error); the latencies are theirs, from queued to answer.
	Answered int           `json:"answered"`
	P50      time.Duration `json:"p50"`
	P95      time.Duration `json:"p95"`
	P99      time.Duration `json:"p99"`
	Max      time.Duration `json:"max"`
}

// Concurrency is how many of sonde's requests were in flight (sent, not
// yet ended) over time.
type Concurrency struct {
	Max   int           `json:"max"`
	MaxAt time.Duration `json:"max_at"` // when Max was first reached, from the start
	// Bucket is the width of each entry of InFlight; InFlight[i] is the
	// most requests in flight at any moment of [i*Bucket, (i+1)*Bucket).
	Bucket   time.Duration `json:"bucket"`
	InFlight []int         `json:"in_flight"`
}

// Report is the summary.
type Report struct {
	// Duration is from the start to the last event.
	Duration    time.Duration `json:"duration"`
	Requests    int           `json:"requests"`
	Methods     []Method      `json:"methods"`
	Concurrency Concurrency   `json:"concurrency"`
	// Chains are the MRTR chains that ended (at most 1,024), in order.
	Chains []Chain `json:"mrtr_chains"`
}

// Report summarises what was added. bucket is the width of the in-flight
// series; 0 picks a round width that gives at most MaxBuckets buckets.
func (c *Collector) Report(bucket time.Duration) Report {
	r := Report{Methods: []Method{}}
	if !c.last.IsZero() {
		r.Duration = max(c.last.Sub(c.start), 0)
	}
	for _, k := range c.order {
		a := c.groups[k]
		m := Method{Dir: k.dir.String(), Method: k.method, Tool: k.tool, Count: a.count, Errors: a.errors, Outcomes: map[string]int{}, Answered: len(a.lat)}
		for s, n := range a.outcomes {
			m.Outcomes[string(s)] = n
		}
		lat := slices.Clone(a.lat)
		slices.Sort(lat)
		m.P50, m.P95, m.P99 = Percentile(lat, 50), Percentile(lat, 95), Percentile(lat, 99)
		if len(lat) > 0 {
			m.Max = lat[len(lat)-1]
		}
		r.Requests += a.count
		r.Methods = append(r.Methods, m)
	}
	r.Concurrency = c.concurrency(bucket, r.Duration)
	r.Chains = append([]Chain{}, c.ended...)
	return r
}

// Percentile is the nearest-rank percentile p (0 < p <= 100) of sorted
// durations: the smallest value with at least p% of the values at or below
// it; 0 for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100 + 0.999999999)
	return sorted[max(0, min(rank, len(sorted))-1)]
}

// MaxGivenBuckets bounds the in-flight series whatever bucket width is
// asked for: a narrower width is widened to fit (Concurrency.Bucket says
// the width used).
const MaxGivenBuckets = 100_000

// AutoBucket picks the smallest round width that covers d in at most
// MaxBuckets buckets.
func AutoBucket(d time.Duration) time.Duration {
	for _, b := range [...]time.Duration{
		time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
		50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour,
	} {
		if d/b < MaxBuckets {
			return b
		}
	}
	return (d/MaxBuckets + time.Hour).Truncate(time.Hour)
}

func (c *Collector) concurrency(bucket, d time.Duration) Concurrency {
	if bucket <= 0 {
		bucket = AutoBucket(d)
	}
	if d/bucket >= MaxGivenBuckets {
		bucket = d/(MaxGivenBuckets-1) + 1 // a width given too small for d: memory stays bounded
	}
	pts := slices.Clone(c.points)
	slices.SortStableFunc(pts, func(a, b point) int { return a.t.Compare(b.t) })
	cc := Concurrency{Bucket: bucket, InFlight: make([]int, int(d/bucket)+1)}
	cur, i := 0, 0
	for b := range cc.InFlight {
		end := time.Duration(b+1) * bucket
		v := cur
		for ; i < len(pts) && pts[i].t.Sub(c.start) < end; i++ {
			cur = pts[i].n
			v = max(v, cur)
			if cur > cc.Max {
				cc.Max, cc.MaxAt = cur, max(pts[i].t.Sub(c.start), 0)
			}
		}
		cc.InFlight[b] = v
	}
	return cc
}
