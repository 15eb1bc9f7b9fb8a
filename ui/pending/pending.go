// Package pending draws the pending-request pane of sonde's TUI: every
// request in flight in either direction (sonde's requests and the server's
// requests to sonde, which have their own id space and are marked "srv"),
// its age, the countdown to its deadline and its progress; a settled request
// lingers for a moment with its outcome and latency, then moves to a bounded
// history, which `h` shows.
//
// The pane never does I/O. What it wants the root to do comes back as a
// tea.Cmd producing one of these messages:
//
//   - CancelMsg{ID}: the user pressed `c` on one of sonde's in-flight
//     requests; the root cancels request ID.
//   - AnswerMsg{ID}: the user pressed `a` on a request from the server that
//     waits for an answer; the root opens its dialog.
//   - ShowFramesMsg{ID, Dir}: the user pressed `enter` or `f` on a row; the
//     root shows the frames of that request.
//   - CancelTaskMsg{TaskID}: the user pressed `c` on the row of a task (a
//     task-augmented tools/call, shown until the task ends); the root sends
//     tasks/cancel.
package pending

import (
	"slices"
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/timeouts"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// CancelMsg asks the root to cancel sonde's in-flight request ID (of
// Server, when the pane shows several: SetTag).
type CancelMsg struct {
	ID     int64
	Server string
}

// AnswerMsg asks the root to open the dialog that answers the server's
// request ID (a sampling or elicitation request waiting for the user).
type AnswerMsg struct {
	ID     jsonrpc.ID
	Server string
}

// ShowFramesMsg asks the root to show the frames of request ID. Dir is
// client.Out for sonde's requests and client.In for the server's.
type ShowFramesMsg struct {
	ID     jsonrpc.ID
	Dir    client.Direction
	Server string
}

// Options configure a Model. Zero values mean the defaults.
type Options struct {
	// Linger is how long a settled request stays in the live view before it
	// moves to history (default 3s; negative: it moves at once).
	Linger time.Duration
	// HistorySize bounds the history ring (default 1000).
	HistorySize int
}

// Entry is a read-only snapshot of one live row.
type Entry struct {
	ID     jsonrpc.ID // unset for a request rejected before it got an id
	Dir    client.Direction
	Method string
	Tool   string
	State  client.State
	// Age is now minus the time the request was queued (or received); for
	// a settled request it stops at its latency.
	Age time.Duration
	// Remaining is the time left before the deadline (negative once it has
	// passed); zero when there is no deadline or the request has settled.
	Remaining time.Duration
	Progress  *client.Progress
	// Latency and Err are set once the request has settled.
	Latency time.Duration
	Err     string
	// Stream is the HTTP stream the request's answer is expected on ("POST
	// 7", or "GET resume 7" after its stream dropped); "" on stdio.
	Stream string
	// RetryOf is, for a modern-era retry after input_required, the id of
	// the request it continues.
	RetryOf jsonrpc.ID
	// IsError is set for a tools/call whose result has isError: the tool
	// failed (the request itself resolved).
	IsError bool
	// Policies are, with SetPolicies, each policy's standing on one of
	// sonde's requests at the pane's clock (timeouts.Standing), in the
	// policies' order.
	Policies []timeouts.Verdict
}

type reqKey struct {
	dir client.Direction
	id  jsonrpc.ID
}

// entry is one request as the pane knows it.
type entry struct {
	key      reqKey
	server   string // the server it went to, with several (SetTag)
	method   string
	tool     string
	state    client.State
	queued   time.Time
	deadline time.Time
	budget   budget // the request's own timeout and total cap (budget.go)
	progress *client.Progress
	settled  time.Time
	latency  time.Duration
	err      string
	stream   string // HTTP: the stream the answer is expected on
	fault    string // "dropped by fault rule 2": sonde tap --fault kept its answer away
	retryOf  jsonrpc.ID
	task     string // a task's row: its status and status message
	isError  bool   // a tools/call answered with a result whose isError is set
	dead     bool   // retired: compacted out of live at the end of the batch
	// tr is the request's timing as the policies see it (policies.go);
	// nil without policies.
	tr *timeouts.Request
}

// cursor is a selection and scroll offset in one view.
type cursor struct{ sel, off int }

// Model is the pending pane.
type Model struct {
	st     *theme.Styles
	breaks bool // b sets a breakpoint (SetBreaks)
	opts   Options
	keys   KeyMap
	w, h   int
	now    time.Time
	live   []*entry // in queue order
	byKey  map[reqKey]*entry
	// byServer holds each server's byKey once SetTag was called (each
	// server numbers its requests from 1); byKey is then the one of the
	// server whose events are applied.
	byServer map[string]map[reqKey]*entry
	// inFlight and settled count the live rows that are not final / final.
	inFlight, settled int
	hist              ring.Ring[entry]
	history           bool
	lv, hv            cursor // live view and history view cursors
	dirty             bool   // some live rows are dead
	q                 query  // the / filter (filter.go)
	// tag is the server whose events Apply folds (SetTag), only the server
	// whose rows are shown ("" for all: SetServer).
	tag, only string
	pol       policies // SetPolicies (policies.go)
}

// New returns an empty pane; Options are optional (only the first is used).
func New(st *theme.Styles, options ...Options) *Model {
	var opts Options
	if len(options) > 0 {
		opts = options[0]
	}
	if opts.Linger == 0 {
		opts.Linger = 3 * time.Second
	}
	if opts.HistorySize <= 0 {
		opts.HistorySize = 1000
	}
	return &Model{st: st, opts: opts, keys: DefaultKeyMap(), byKey: map[reqKey]*entry{}, hist: ring.New[entry](opts.HistorySize), q: query{Query: list.NewQuery()}}
}

// SetSize sets the inner size in cells.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.q.SetWidth(w)
	m.scroll()
}

// Capturing reports whether the filter's query is being typed.
func (m *Model) Capturing() bool { return m.q.Typing }

// Reset is called when the server restarts. It keeps everything: history,
// and the live rows too, because the old process's requests arrive through
// Apply as "exited" outcomes and then linger and retire like any other.
func (m *Model) Reset() {}

// SetTag says which server the events Apply folds next come from, when
// the pane shows the requests of several (each numbers its own from 1):
// their rows are tagged with it, shown in a SERVER column. "" (the
// default) is one server, and no column.
func (m *Model) SetTag(server string) {
	if m.byServer == nil {
		m.byServer = map[string]map[reqKey]*entry{m.tag: m.byKey}
	}
	m.tag = server
	if m.byServer[server] == nil {
		m.byServer[server] = map[reqKey]*entry{}
	}
	m.byKey = m.byServer[server]
}

// SetServer shows only the rows of server ("" shows every server's); the
// title says which.
func (m *Model) SetServer(server string) {
	if server == m.only {
		return
	}
	m.only = server
	m.q.stale = true
	m.lv, m.hv = cursor{}, cursor{}
	m.scroll()
}

// Ticking reports whether the view changes with the clock alone: some
// row is live (its age and countdown run, or a settled row lingers).
func (m *Model) Ticking() bool { return len(m.live) > 0 }

// InFlight returns how many requests (both directions) have not settled.
func (m *Model) InFlight() int { return m.inFlight }

// Entries returns a snapshot of the live rows (in flight and lingering), in
// queue order.
func (m *Model) Entries() []Entry {
	out := make([]Entry, 0, len(m.live))
	for _, e := range m.live {
		x := Entry{ID: e.key.id, Dir: e.key.dir, Method: e.method, Tool: e.tool, State: e.state,
			Progress: e.progress, Latency: e.latency, Err: e.err, Stream: e.stream, RetryOf: e.retryOf, IsError: e.isError,
			Policies: m.verdicts(e)}
		if e.state.Final() {
			x.Age = e.latency
		} else {
			x.Age = m.now.Sub(e.queued)
			if !e.deadline.IsZero() {
				x.Remaining = e.deadline.Sub(m.now)
			}
		}
		out = append(out, x)
	}
	return out
}

// Apply folds request events into the pane, and HTTP events into the
// stream each request waits on; other kinds are ignored.
func (m *Model) Apply(evs []client.Event) {
	for i := range evs {
		ev := &evs[i]
		m.pol.add(m.tag, ev)
		switch {
		case ev.Kind == client.EvRequest && ev.Req != nil:
			m.apply(ev.Time, ev.Req)
		case ev.Kind == client.EvTask && ev.Task != nil:
			m.applyTask(ev.Time, ev.Task)
		case ev.Kind == client.EvHTTP && ev.HTTP != nil && ev.HTTP.ReqID.IsValid() && ev.HTTP.Stream != "":
			if e := m.byKey[reqKey{client.Out, ev.HTTP.ReqID}]; e != nil && !e.state.Final() {
				e.stream = clean(ev.HTTP.Stream, 60)
			}
		case ev.Kind == client.EvFrame && ev.Frame != nil:
			m.applyFrame(ev.Frame)
		case ev.Kind == client.EvNote:
			if k, what, ok := faultedAnswer(ev.Fault); ok {
				if e := m.byKey[k]; e != nil && !e.state.Final() {
					e.fault = what
				}
			}
		}
	}
	m.compact()
	m.q.stale = true
	m.scroll()
}

func (m *Model) apply(t time.Time, r *client.ReqInfo) {
	if t.IsZero() {
		t = m.now
	}
	k := reqKey{r.Dir, r.ID}
	var e *entry
	if r.ID.IsValid() { // rejected requests have no id: always a row of their own
		e = m.byKey[k]
	}
	if e != nil && e.state.Final() { // the id came back (a new process, or the server reused it)
		m.retire(e)
		e = nil
	}
	if e == nil {
		e = &entry{key: k, queued: t, server: m.tag}
		if r.State != client.StateQueued && r.State != client.StateReceived && r.Latency > 0 {
			e.queued = t.Add(-r.Latency) // we missed the start
		}
		m.live = append(m.live, e)
		if r.ID.IsValid() {
			m.byKey[k] = e
		}
		m.inFlight++
	}
	m.pol.follow(m.tag, e)
	if r.Method != "" {
		e.method = clean(r.Method, 200)
	}
	if r.Tool != "" {
		e.tool = clean(r.Tool, 200)
	}
	if !r.Deadline.IsZero() {
		e.deadline = r.Deadline
	}
	e.budget.follow(r)
	if r.Progress != nil {
		e.progress = r.Progress
	}
	if r.RetryOf.IsValid() {
		e.retryOf = r.RetryOf
	}
	e.state = r.State
	if !r.State.Final() {
		return
	}
	m.inFlight--
	m.settled++
	e.settled, e.latency = t, r.Latency
	if r.Err != nil {
		e.err = clean(r.Err.Error(), 1000)
	}
	if m.opts.Linger < 0 {
		m.retire(e)
	}
}

// retire moves a settled live row to history; compact removes it from live.
func (m *Model) retire(e *entry) {
	e.dead = true
	m.dirty = true
	m.settled--
	keys := m.byKey // one server
	if m.byServer != nil {
		keys = m.byServer[e.server]
	}
	if keys[e.key] == e {
		delete(keys, e.key)
	}
	follow := m.hv.sel >= m.hist.Len()-1
	if _, evicted := m.hist.Push(*e); evicted {
		if !follow {
			m.hv.sel = max(m.hv.sel-1, 0)
		}
	}
	if follow {
		m.hv.sel = m.hist.Len() - 1
	}
}

// applyFrame marks the request a tool result with isError answers (the
// frame of the answer may come before or after its outcome event).
func (m *Model) applyFrame(f *client.FrameInfo) {
	if f.Dir != client.In || f.Verdict != client.VerdictResolved || !f.Msg.ID.IsValid() {
		return
	}
	if e := m.byKey[reqKey{client.Out, f.Msg.ID}]; e != nil && e.method == mcp.MethodToolsCall && mcp.ResultIsError(f.Msg.Result) {
		e.isError = true
	}
}

// compact removes dead rows from live and puts requests still in flight
// before the settled ones that linger (so a short pane shows what is
// pending first), keeping the selection on the same request (or the next
// one when it was removed).
func (m *Model) compact() {
	ordered := true
	for i := 1; i < len(m.live) && ordered; i++ {
		ordered = !m.live[i-1].state.Final() || m.live[i].state.Final()
	}
	if !m.dirty && ordered {
		return
	}
	m.dirty = false
	var selected *entry
	if m.lv.sel >= 0 && m.lv.sel < len(m.live) {
		selected = m.live[m.lv.sel]
	}
	next := -1 // the position after a removed selection
	var inFlight, settled []*entry
	for i, e := range m.live {
		if e.dead {
			if e == selected && next < 0 {
				next = i
			}
			continue
		}
		if e.state.Final() {
			settled = append(settled, e)
		} else {
			inFlight = append(inFlight, e)
		}
	}
	m.live = append(inFlight, settled...)
	m.lv.sel = list.Clamp(m.lv.sel, len(m.live))
	for i, e := range m.live {
		if e == selected && !e.dead {
			m.lv.sel = i
			return
		}
	}
	if next >= 0 {
		m.lv.sel = list.Clamp(next, len(m.live))
	}
}

// SetNow sets the pane's clock; settled rows older than Linger move to
// history, in the order they settled.
func (m *Model) SetNow(t time.Time) {
	m.now = t
	if m.settled == 0 {
		return
	}
	var due []*entry
	for _, e := range m.live {
		if !e.dead && e.state.Final() && t.Sub(e.settled) >= m.opts.Linger {
			due = append(due, e)
		}
	}
	slices.SortStableFunc(due, func(a, b *entry) int { return a.settled.Compare(b.settled) })
	for _, e := range due {
		m.retire(e)
	}
	m.compact()
	m.q.stale = true
	m.scroll()
}

// Title is "Pending N", plus " · M settled" while rows linger, plus
// " · history" (and " · K evicted") in the history view.
func (m *Model) Title() string {
	s := "Pending " + itoa(m.inFlight)
	if m.only != "" {
		n := 0
		for _, e := range m.live {
			if e.server == m.only && !e.state.Final() {
				n++
			}
		}
		s = "Pending " + itoa(n) + " · server " + clean(m.only, 40)
	}
	if m.settled > 0 {
		s += " · " + itoa(m.settled) + " settled"
	}
	if m.history {
		s += " · history"
		if m.hist.Evicted() > 0 {
			s += " · " + itoa(int(m.hist.Evicted())) + " evicted"
		}
	}
	return s
}

// faultedAnswer reads the note of a fault rule (sonde tap --fault,
// docs/chaos.md) that kept a response from its requester (dropped it, or
// closed the stream instead of forwarding it): the request's key and
// "dropped by fault rule 2".
func faultedAnswer(f *client.Fault) (reqKey, string, bool) {
	dir, id, ok := f.KeptAnswer()
	if !ok {
		return reqKey{}, "", false
	}
	verb := "dropped"
	if f.Action == client.FaultClose {
		verb = "closed"
	}
	return reqKey{dir, id}, verb + " by fault rule " + strconv.Itoa(f.Rule), true
}
