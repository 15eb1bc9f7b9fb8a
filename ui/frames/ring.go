package frames

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	flt "github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/lint"
	"github.com/sonde-mcp/sonde/mcp"
)

// entry is one frame in the ring.
type entry struct {
	proc   int    // which server process (1, 2, … after restarts)
	gen    int    // the request index's generation when it arrived (filter.Requests.Gen)
	srv    string // which server, when the pane shows several (SetTag)
	seq    uint64
	t      time.Time
	f      *client.FrameInfo
	h      *client.HTTPEvent // set for an HTTP row (f is then its stand-in)
	lint   []lint.Finding    // the protocol rules the frame breaks (package lint)
	search string            // built on first use by the filter
	// isError: a tool result with isError set (the tool failed).
	isError bool
	// name is the tool, prompt or resource a request names (nameOf), read
	// on first use: named says it was.
	name  string
	named bool
	// preview is the frame's gist (the preview column), built on first
	// use: gisted says it was.
	preview string
	gisted  bool
}

// gist returns the frame's gist, building it once.
func (e *entry) gist() string {
	if !e.gisted {
		e.preview, e.gisted = gist(e.f), true
	}
	return e.preview
}

// target returns what the frame's request names, reading it once.
func (e *entry) target() string {
	if !e.named {
		e.name, e.named = nameOf(e.f), true
	}
	return e.name
}

// frameRing holds the newest frames in a ring.Ring. Frames are numbered
// by an absolute index (0 for the first frame since init) that never
// changes; the frames held are those from oldest() to total()-1.
type frameRing struct{ r ring.Ring[entry] }

func newFrameRing(capacity int) frameRing { return frameRing{ring.New[entry](capacity)} }

func (r *frameRing) len() int { return r.r.Len() }

// oldest is the absolute index of the oldest frame held, which is also the
// number of frames evicted.
func (r *frameRing) oldest() uint64 { return r.r.Evicted() }

// total is the number of frames ever pushed: one past the newest index.
func (r *frameRing) total() uint64 { return r.r.Total() }

// at is the frame with absolute index abs (oldest() <= abs < total()).
func (r *frameRing) at(abs uint64) *entry { return r.r.At(int(abs - r.r.Evicted())) }

func (r *frameRing) push(seq uint64, t time.Time, f *client.FrameInfo, h *client.HTTPEvent, proc, gen int, srv string, found []lint.Finding) {
	isErr := f.Dir == client.In && f.Verdict == client.VerdictResolved && mcp.ResultIsError(f.Msg.Result)
	r.r.Push(entry{proc: proc, gen: gen, srv: srv, seq: seq, t: t, f: f, h: h, lint: found, isError: isErr})
}

// nameOf is the tool or prompt a tools/call or prompts/get request names,
// or the URI a resources/read names: shown with the method, as what the
// request is about ("" for other frames).
func nameOf(f *client.FrameInfo) string {
	switch f.Msg.Method {
	case mcp.MethodToolsCall, "prompts/get", "resources/read":
	default:
		return ""
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	params := f.Msg.Params
	if len(params) == 0 {
		// sonde's own request frames carry their bytes, not decoded params.
		var m struct {
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(f.Raw, &m) != nil {
			return ""
		}
		params = m.Params
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	if p.Name != "" {
		return textfmt.Clean(p.Name)
	}
	return textfmt.Clean(p.URI)
}

// VerdictHTTP is the verdict column of an HTTP row: an exchange (POST, GET,
// DELETE and its status) or a stream event that is not a message.
const VerdictHTTP client.Verdict = "http"

// httpFrame is the stand-in frame of an HTTP row, so that filtering, the id
// chip and the detail view treat it like a frame: its id is the request the
// exchange carried, its "method" the HTTP method and status, its raw bytes
// those of a non-message SSE event.
func httpFrame(h *client.HTTPEvent, t time.Time) *client.FrameInfo {
	f := &client.FrameInfo{Verdict: VerdictHTTP}
	f.Time, f.Raw, f.Stream, f.EventID = t, h.Raw, h.Stream, h.EventID
	f.Msg.ID = h.ReqID
	if h.Method == "" { // a stream event that is not a message
		f.Dir, f.Msg.Method, f.Detail = client.In, "sse", h.Note
		return f
	}
	f.Dir, f.Msg.Method, f.Detail = client.Out, h.Method, strings.TrimSpace(h.URL+" "+h.Note)
	if h.Status != 0 {
		f.Msg.Method += " " + strconv.Itoa(h.Status)
	}
	return f
}

// VerdictFault is the verdict column of a fault row: a note of sonde tap
// --fault saying what a rule did to the frames around it.
const VerdictFault client.Verdict = "fault"

// faultFrame is the stand-in frame of a fault row, from the note of a
// fault rule (docs/chaos.md); nil for any other note. Its direction is the
// one the rule acted in, its detail the note's words after "fault rule N".
func faultFrame(ev client.Event) *client.FrameInfo {
	if ev.Fault == nil {
		return nil
	}
	n := strconv.Itoa(ev.Fault.Rule)
	f := &client.FrameInfo{Verdict: VerdictFault, Detail: strings.TrimPrefix(ev.Note, "fault rule "+n+" ")}
	f.Dir = ev.Fault.Dir
	f.Time = ev.Time
	f.Msg.Method = "fault rule " + n
	return f
}

// httpProblem reports whether an HTTP row is a failure worth n/N: a status
// that is not 2xx, an exchange with no answer, or a stream event the
// transport marked as a problem (a dropped stream, an event cut off).
func httpProblem(h *client.HTTPEvent) bool {
	if h.Method != "" {
		return h.Status == 0 || h.Status/100 != 2
	}
	return h.Problem
}

// search returns the text the fuzzy filter matches for frame abs.
func (r *frameRing) search(abs uint64) string {
	e := r.at(abs)
	if e.search == "" {
		e.search, _ = searchText(e.f)
	}
	return e.search
}

// Apply folds a batch of client events into the pane: frames go into the
// ring, the filter is extended over the new frames only, and in follow mode
// the selection moves to the newest frame. Other events are ignored.
func (m *Model) Apply(evs []client.Event) {
	added, settled := false, false
	lt := m.linter()
	rq := m.requests(m.tag)
	for i := range evs {
		ev := &evs[i]
		// Every event teaches the request index (a response's method and
		// tool, a request's outcome): the filter judges a frame by its
		// request, as --filter does on the command line.
		rq.Learn(*ev)
		settled = settled || ev.Kind == client.EvRequest && ev.Req != nil && ev.Req.State.Final()
		var found []lint.Finding
		if fs := lt.Check(*ev); len(fs) > 0 {
			found = slices.Clone(fs)
		}
		if ev.StartsSession() {
			m.procs[m.tag]++ // a restart: ids start again, so frames remember their process
			continue
		}
		if ev.Kind == client.EvHTTP && ev.HTTP != nil {
			if m.t0.IsZero() {
				m.t0 = ev.Time
			}
			m.ring.push(ev.Seq, ev.Time, httpFrame(ev.HTTP, ev.Time), ev.HTTP, m.curProc(), rq.Gen(), m.tag, found)
			added = true
			continue
		}
		if ev.Kind == client.EvNote {
			if f := faultFrame(*ev); f != nil {
				if m.t0.IsZero() {
					m.t0 = ev.Time
				}
				m.ring.push(ev.Seq, ev.Time, f, nil, m.curProc(), rq.Gen(), m.tag, nil)
				added = true
			}
			continue
		}
		if ev.Kind != client.EvFrame || ev.Frame == nil {
			continue
		}
		t := ev.Frame.Time
		if t.IsZero() {
			t = ev.Time
		}
		if m.t0.IsZero() {
			m.t0 = t
		}
		m.ring.push(ev.Seq, t, ev.Frame, nil, m.curProc(), rq.Gen(), m.tag, found)
		added = true
	}
	if settled && m.flt.query != "" {
		// A request settled: its earlier frames may match now
		// (duration:, status:), so the whole ring is judged again.
		m.refilter(false)
		return
	}
	if !added {
		return
	}
	m.extendFilter()
	m.settle()
}

// requests is the request index of server tag's events (one per server,
// as their ids are their own), made on first use.
func (m *Model) requests(tag string) *flt.Requests {
	rq := m.reqs[tag]
	if rq == nil {
		rq = flt.NewLiveRequests(4 * m.ring.r.Cap())
		m.reqs[tag] = rq
	}
	return rq
}

// curProc is the process number of the server whose events are applied
// (1 before any start).
func (m *Model) curProc() int { return max(m.procs[m.tag], 1) }

// linter is the protocol rules' state of the server whose events are
// applied: one per server, since each has its own ids and handshake.
func (m *Model) linter() *lint.Linter {
	if m.tag == "" {
		return m.lint
	}
	l := m.lints[m.tag]
	if l == nil {
		l = lint.New()
		m.lints[m.tag] = l
	}
	return l
}

// SetTag says which server the events Apply folds next come from, when
// the pane shows the frames of several: their rows are tagged with it
// (a SERVER column) and the protocol rules follow each server apart. ""
// (the default) is one server, and no column.
func (m *Model) SetTag(server string) { m.tag = server }

// SetServer shows only the frames of server ("" shows every server's);
// the title says which.
func (m *Model) SetServer(server string) {
	if server == m.flt.srv {
		return
	}
	m.flt.srv = server
	m.refilter(false)
	m.syncKeys()
}

// segs are the byte offsets of the parts of a search text (-1 when absent).
type segs struct{ id, method, kind, verdict int }

// searchText is what the filter matches for a frame, e.g.
// "out id 3 tools/call request sent": direction, id, method, kind, verdict.
func searchText(f *client.FrameInfo) (string, segs) {
	sg := segs{-1, -1, -1, -1}
	var b strings.Builder
	b.WriteString(f.Dir.String())
	if f.Msg.ID.IsValid() {
		b.WriteString(" id ")
		sg.id = b.Len()
		b.WriteString(f.Msg.ID.String())
	}
	if f.Msg.Method != "" {
		b.WriteByte(' ')
		sg.method = b.Len()
		b.WriteString(f.Msg.Method)
	}
	if f.Msg.Kind != jsonrpc.KindInvalid {
		b.WriteByte(' ')
		sg.kind = b.Len()
		b.WriteString(f.Msg.Kind.String())
	}
	b.WriteByte(' ')
	sg.verdict = b.Len()
	b.WriteString(string(f.Verdict))
	if f.Stream != "" {
		b.WriteString(" " + f.Stream)
	}
	return b.String(), sg
}

// lintMust reports whether a frame's findings include a rule the spec
// words with MUST (an error mark) rather than only SHOULD (a warning).
func lintMust(found []lint.Finding) bool {
	for _, f := range found {
		if r, ok := lint.Lookup(f.Rule); ok && r.Level == lint.Must {
			return true
		}
	}
	return false
}

// violation reports whether the frame breaks the protocol, and whether the
// break is an error (the line itself is bad) rather than a warning (a
// response that matches no live request).
func violation(v client.Verdict) (bad, isErr bool) {
	switch v {
	case client.VerdictMalformed, client.VerdictInvalid, client.VerdictTooLong:
		return true, true
	case client.VerdictUnknown, client.VerdictLate, client.VerdictDuplicate, client.VerdictUndeclared:
		return true, false
	}
	return false, false
}

// problem reports whether n/N stops at the row: a violation (by verdict or
// by a lint rule), an error, or a failed HTTP exchange.
func problem(e *entry) bool {
	if len(e.lint) > 0 {
		return true
	}
	if e.h != nil {
		return httpProblem(e.h)
	}
	f := e.f
	if f.Verdict == VerdictFault {
		return true
	}
	bad, _ := violation(f.Verdict)
	return bad || f.Verdict == client.VerdictRemoteError || f.Msg.Error != nil || f.Err != nil
}
