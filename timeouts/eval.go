package timeouts

import (
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Result is what a policy makes of one request.
type Result string

// The results.
const (
	// ResultPass: the answer came before the policy's deadline (or the
	// policy has none).
	ResultPass Result = "pass"
	// ResultFail: the policy's deadline came first; the client would have
	// given up at Verdict.At.
	ResultFail Result = "fail"
	// ResultUnknown: no answer came, and the request ended (the session
	// gave up on it, the server exited, ...) before the policy's deadline:
	// whether the answer would have come in time is not in the recording.
	ResultUnknown Result = "unknown"
	// ResultPending: the request is still in flight and the policy's
	// deadline has not come yet (Standing only).
	ResultPending Result = "pending"
)

// Reason says which limit failed a request.
type Reason string

// The reasons.
const (
	// ReasonDeadline: the timeout (since it was sent, or since the last
	// progress with reset-on-progress).
	ReasonDeadline Reason = "deadline"
	// ReasonMaxTotal: the cap on the request's whole life.
	ReasonMaxTotal Reason = "max-total"
)

// Verdict is a policy's verdict on one request.
type Verdict struct {
	Result Result `json:"result"`
	// Reason and At: for a fail, the limit and when the client gives up,
	// from when the request was sent.
	Reason Reason        `json:"reason,omitempty"`
	At     time.Duration `json:"at,omitempty"`
	// Margin is the deadline in force when the answer came minus the
	// answer's latency: above zero it passed by that much, below zero it
	// missed by that much. Nil without an answer or without a deadline.
	Margin *time.Duration `json:"margin,omitempty"`
	// Late: the policy failed the request, yet its answer came (Margin
	// says how long after): an answer this client would have thrown away.
	Late bool `json:"late,omitempty"`
	// Gaps counts the intervals between progress notifications (from the
	// send, to the answer or the end) longer than the policy's timeout;
	// LongestGap is the longest such, GapAt when it began (from the send).
	Gaps       int           `json:"long_gaps,omitempty"`
	LongestGap time.Duration `json:"longest_gap,omitempty"`
	GapAt      time.Duration `json:"gap_at,omitempty"`
}

// limits is a policy applied to one request: times absolute.
type limits struct {
	timeout  time.Duration // 0: none
	reset    bool
	hardCap  time.Time // zero: none
	softCap  time.Duration
	checkCap bool // softCap checked at each progress (TotalOnProgress)
}

func limitsFor(p Policy, r *Request) limits {
	if p.Session {
		return limits{timeout: r.Timeout, reset: !r.MaxEnd.IsZero(), hardCap: r.MaxEnd}
	}
	l := limits{timeout: p.Timeout, reset: p.ResetOnProgress}
	switch {
	case p.MaxTotal > 0 && p.TotalOnProgress:
		l.softCap, l.checkCap = p.MaxTotal, true
	case p.MaxTotal > 0:
		l.hardCap = r.Sent.Add(p.MaxTotal)
	}
	return l
}

// Evaluate is policy p's verdict on request r: the deadline starts when r
// was sent; each progress notification before it restarts it with
// reset-on-progress; the max total caps it (or, with total-on-progress,
// fails the request at the first progress past it).
func Evaluate(p Policy, r *Request) Verdict {
	stop := r.Ended
	if !r.Answered.IsZero() {
		stop = r.Answered
	}
	d, reason := DeadlineAt(p, r, stop)
	v := Verdict{}
	gaps(&v, limitsFor(p, r).timeout, r, stop)
	switch {
	case d.IsZero():
		v.Result = ResultPass
		if r.Answered.IsZero() {
			v.Result = ResultUnknown
		}
		return v
	case !r.Answered.IsZero():
		m := d.Sub(r.Answered)
		v.Margin = &m
		if r.Answered.Before(d) {
			v.Result = ResultPass
			return v
		}
		v.Late = true
	case d.After(r.Ended):
		v.Result = ResultUnknown
		return v
	}
	v.Result, v.Reason, v.At = ResultFail, reason, d.Sub(r.Sent)
	return v
}

// DeadlineAt is when policy p gives up on request r as r's events up to
// stop tell it: the deadline in force at stop (each progress before stop
// and before the deadline having restarted it, with reset-on-progress),
// and which limit it is; zero when p sets none. Evaluate and Standing
// both read it; a live view marks it on a request's bar.
func DeadlineAt(p Policy, r *Request, stop time.Time) (time.Time, Reason) {
	l := limitsFor(p, r)
	var d time.Time // the deadline in force; zero: none
	reason := ReasonDeadline
	if l.timeout > 0 {
		d = r.Sent.Add(l.timeout)
	}
	capAt := func() {
		if !l.hardCap.IsZero() && (d.IsZero() || !d.Before(l.hardCap)) {
			d, reason = l.hardCap, ReasonMaxTotal
		}
	}
	capAt()
	for _, t := range r.Progress {
		if !t.Before(stop) || (!d.IsZero() && !t.Before(d)) {
			break // the answer came, or the timer fired, first
		}
		if !l.reset {
			continue
		}
		if l.checkCap && t.Sub(r.Sent) >= l.softCap {
			d, reason = t, ReasonMaxTotal
			break
		}
		if l.timeout > 0 {
			d, reason = t.Add(l.timeout), ReasonDeadline
			capAt()
		}
	}
	return d, reason
}

// Standing is policy p's verdict on request r at now, while r may still be
// in flight (a live view: Live keeps r up to date as its events come).
// Once r has an answer or an end it is Evaluate's verdict. Before, it is
// ResultFail when the deadline in force has come by now (the client would
// have given up already; At and Reason say when and why), and
// ResultPending otherwise, At then the deadline in force (from the send; 0
// when p sets none): a progress notification may still move it.
func Standing(p Policy, r *Request, now time.Time) Verdict {
	if !r.Answered.IsZero() || !r.Ended.IsZero() {
		return Evaluate(p, r)
	}
	d, reason := DeadlineAt(p, r, now)
	v := Verdict{Result: ResultPending}
	if !d.IsZero() {
		v.At = d.Sub(r.Sent)
		if !d.After(now) {
			v.Result, v.Reason = ResultFail, reason
		}
	}
	return v
}

// gaps counts the progress gaps of r longer than timeout, up to stop.
func gaps(v *Verdict, timeout time.Duration, r *Request, stop time.Time) {
	if timeout <= 0 || len(r.Progress) == 0 {
		return
	}
	prev := r.Sent
	check := func(t time.Time) {
		if g := t.Sub(prev); g > timeout {
			v.Gaps++
			if g > v.LongestGap {
				v.LongestGap, v.GapAt = g, prev.Sub(r.Sent)
			}
		}
		prev = t
	}
	for _, t := range r.Progress {
		if t.After(stop) {
			break
		}
		check(t)
	}
	check(stop)
}

// Summary is one policy over every request.
type Summary struct {
	Policy Policy `json:"policy"`
	// Requests evaluated, and how many passed, failed or are unknown.
	Requests int `json:"requests"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Unknown  int `json:"unknown"`
	// Late are the failed requests whose answer came after all.
	Late int `json:"late"`
	// LongGaps are the requests with a progress gap over the timeout.
	LongGaps int `json:"long_gaps"`
	// WorstMargin is the smallest margin (nil when no request has one),
	// that of request WorstID of session WorstSession.
	WorstMargin  *time.Duration `json:"worst_margin"`
	WorstID      jsonrpc.ID     `json:"worst_id,omitzero"`
	WorstSession int            `json:"worst_session,omitempty"`
}

func (s *Summary) add(id jsonrpc.ID, session int, v Verdict) {
	s.Requests++
	switch v.Result {
	case ResultPass:
		s.Passed++
	case ResultFail:
		s.Failed++
	case ResultUnknown:
		s.Unknown++
	}
	if v.Late {
		s.Late++
	}
	if v.Gaps > 0 {
		s.LongGaps++
	}
	if v.Margin != nil && (s.WorstMargin == nil || *v.Margin < *s.WorstMargin) {
		m := *v.Margin
		s.WorstMargin, s.WorstID, s.WorstSession = &m, id, session
	}
}

// Row is one request and each policy's verdict on it (in the order of the
// policies).
type Row struct {
	Request
	// At is when it was sent, from the capture's start; Latency how long
	// its answer took (-1: none came); Progress how many progress
	// notifications it had.
	At       time.Duration `json:"at"`
	Latency  time.Duration `json:"latency"`
	Progress int           `json:"progress"`
	Verdicts []Verdict     `json:"verdicts"`
}

// Report is the evaluation of a session.
type Report struct {
	Duration time.Duration `json:"duration"`
	// Requests are those evaluated; Open those that never ended (not
	// evaluated); Omitted the rows left out past MaxRows.
	Requests int       `json:"requests"`
	Open     int       `json:"open"`
	Omitted  int       `json:"omitted"`
	Summary  []Summary `json:"summary"`
	Rows     []Row     `json:"rows"`
}

// Fails reports whether the policy named name failed any request.
func (r Report) Fails(name string) bool {
	for _, s := range r.Summary {
		if s.Policy.Name == name && s.Failed > 0 {
			return true
		}
	}
	return false
}

// Drop leaves the policy named name out of the report: its summary and
// its verdict in every row.
func (r *Report) Drop(name string) {
	for i, s := range r.Summary {
		if s.Policy.Name != name {
			continue
		}
		r.Summary = append(r.Summary[:i:i], r.Summary[i+1:]...)
		for j := range r.Rows {
			v := r.Rows[j].Verdicts
			r.Rows[j].Verdicts = append(v[:i:i], v[i+1:]...)
		}
		return
	}
}
