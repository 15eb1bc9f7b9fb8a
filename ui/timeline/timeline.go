// Package timeline draws the Timeline pane of sonde's TUI: requests as
// spans on a time axis, one row per request (both directions), from sent to
// outcome and coloured by outcome, progress notifications as ticks on the
// span, late or duplicate answers as marks after its end; notifications
// and stderr on lanes of their own; under them, the latency p50/p95/p99
// per method of the requests in the window shown.
//
// The window follows "now" (the live clock, or the replay cursor: the root
// calls SetNow with it) until the user pans; zoom and pan are keys and the
// mouse wheel. History is a bounded ring of spans in start order, and View
// looks only at the spans near the window (a binary search, then at most a
// few screens of rows), so its cost does not grow with the session.
package timeline

import (
	"sort"
	"time"

	"github.com/sonde-mcp/sonde/client"
	flt "github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/timeouts"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Capacity is how many spans (and lane marks) are kept.
const Capacity = 100_000

// maxTicks bounds the progress ticks kept per span.
const maxTicks = 16

// span is one request's life.
type span struct {
	key     reqKey
	method  string
	tool    string
	start   time.Time
	end     time.Time // zero while in flight
	state   client.State
	ticks   []time.Time // progress notifications
	marks   []time.Time // late or duplicate answers after the end
	isError bool
	// tr is the request's timing as the policies see it (policies.go);
	// nil without policies.
	tr *timeouts.Request
}

type reqKey struct {
	gen int
	dir client.Direction
	id  jsonrpc.ID
}

// Model is the Timeline pane.
type Model struct {
	st    *theme.Styles
	keys  KeyMap
	w, h  int
	now   time.Time
	gen   int
	spans ring.Ring[span]
	open  map[reqKey]uint64 // the absolute ring index of each request seen recently
	order []reqKey          // open's keys, oldest first, to bound it
	notes ring.Ring[time.Time]
	errs  ring.Ring[time.Time]

	// The window: width, and its right edge when not following now.
	width  time.Duration
	follow bool
	right  time.Time
	// row scrolls the span rows (0: the newest at the bottom).
	row int
	// q is the `/` filter of the rows (the filter language).
	q list.Query
	// pol marks client timeout policies' deadlines (policies.go).
	pol policies
}

// New returns an empty pane following now with a 10 s window.
func New(st *theme.Styles) *Model {
	return &Model{st: st, keys: DefaultKeyMap(), spans: ring.New[span](Capacity), open: map[reqKey]uint64{},
		notes: ring.New[time.Time](Capacity), errs: ring.New[time.Time](Capacity), width: 10 * time.Second, follow: true,
		q: list.NewQuery()}
}

// SetSize sets the inner size in cells.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h; m.q.SetWidth(w) }

// SetNow moves "now": the live clock, or the replay cursor's time.
func (m *Model) SetNow(t time.Time) { m.now = t }

// Capturing reports whether the filter's query is being typed.
func (m *Model) Capturing() bool { return m.q.Typing }

// Reset keeps the history: a restart is a new generation of ids.
func (m *Model) Reset() {}

// Title names the pane with the window's width.
func (m *Model) Title() string {
	t := "Timeline " + fmtDur(m.width)
	if !m.follow {
		t += " · paused (f follows now)"
	}
	if m.q.Active() {
		t += " · filter: " + textfmt.Clean(m.q.Text)
	}
	return t + m.pol.legend()
}

// Ticking reports whether the view changes with the clock alone.
func (m *Model) Ticking() bool { return m.follow }

// Apply folds events into spans and lanes.
func (m *Model) Apply(evs []client.Event) {
	for i := range evs {
		ev := &evs[i]
		if m.pol.live != nil {
			m.pol.live.Add(*ev)
		}
		switch {
		case ev.StartsSession():
			m.gen++
		case ev.Kind == client.EvRequest && ev.Req != nil && ev.Req.ID.IsValid():
			m.applyReq(ev.Time, ev.Req)
		case ev.Kind == client.EvFrame && ev.Frame != nil:
			m.applyFrame(ev.Time, ev.Frame)
		case ev.Kind == client.EvStderr:
			m.errs.Push(ev.Time)
		}
	}
}

func (m *Model) applyReq(t time.Time, r *client.ReqInfo) {
	k := reqKey{m.gen, r.Dir, r.ID}
	s := m.span(k)
	if s == nil {
		m.spans.Push(span{key: k, method: r.Method, tool: r.Tool, start: t, state: r.State})
		m.remember(k, m.spans.Total()-1)
		m.pol.follow(m.spans.At(m.spans.Len() - 1))
		return
	}
	m.pol.follow(s)
	if r.Tool != "" {
		s.tool = r.Tool
	}
	s.state = r.State
	if r.State == client.StateProgress && len(s.ticks) < maxTicks {
		s.ticks = append(s.ticks, t)
	}
	if r.State.Final() && s.end.IsZero() {
		s.end = t
	}
}

func (m *Model) applyFrame(t time.Time, f *client.FrameInfo) {
	switch f.Verdict {
	case client.VerdictLate, client.VerdictDuplicate:
		if s := m.span(reqKey{m.gen, client.Out, f.Msg.ID}); s != nil && len(s.marks) < maxTicks {
			s.marks = append(s.marks, t)
		}
	case client.VerdictResolved:
		if s := m.span(reqKey{m.gen, client.Out, f.Msg.ID}); s != nil && isErrorResult(f) {
			s.isError = true
		}
	}
	if f.Msg.Kind == jsonrpc.KindNotification && f.Verdict != client.VerdictProgress {
		m.notes.Push(t)
	}
}

// span returns the span of request k, if it is still in the ring.
func (m *Model) span(k reqKey) *span {
	abs, ok := m.open[k]
	if !ok || abs < m.spans.Evicted() {
		return nil
	}
	return m.spans.At(int(abs - m.spans.Evicted()))
}

// remember indexes k, forgetting the oldest keys beyond the ring's size.
func (m *Model) remember(k reqKey, abs uint64) {
	m.open[k] = abs
	m.order = append(m.order, k)
	if len(m.order) > 2*Capacity {
		for _, old := range m.order[:Capacity] {
			if a, ok := m.open[old]; ok && a < m.spans.Evicted()+uint64(Capacity/2) {
				delete(m.open, old)
			}
		}
		m.order = append([]reqKey(nil), m.order[Capacity:]...)
	}
}

// window returns the window's ends.
func (m *Model) window() (from, to time.Time) {
	to = m.right
	if m.follow || to.IsZero() {
		to = m.now
	}
	return to.Add(-m.width), to
}

// firstAfter returns the ring index of the first span that starts after t.
func (m *Model) firstAfter(t time.Time) int {
	return sort.Search(m.spans.Len(), func(i int) bool { return m.spans.At(i).start.After(t) })
}

// item is what the filter language sees of a span.
func (s *span) item() flt.Item {
	it := flt.Item{Method: s.method, Tool: s.tool, ID: s.key.id.String(), Dir: s.key.dir.String(), Kind: "request",
		Status: []string{string(s.state)}, IsError: s.isError}
	if s.isError {
		it.Status = append(it.Status, "isError")
	}
	if !s.end.IsZero() {
		it.Duration, it.HasDuration = s.end.Sub(s.start), true
		switch s.state {
		case client.StateResolved, client.StateRetried, client.StateAnswered:
		default:
			it.Failed = true
		}
	}
	return it
}
