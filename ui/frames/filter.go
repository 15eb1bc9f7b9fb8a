package frames

import (
	"encoding/json"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/sahilm/fuzzy"

	"github.com/sonde-mcp/sonde/client"
	flt "github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// filter is the query (fuzzy, or the filter language when it has a
// field: term) and the id chip, with the cached matches.
type filter struct {
	query string
	lang  *flt.Filter // the query in the filter language, or nil
	// words is a query of plain words alone in the filter language (nil
	// when it does not parse): a frame it matches is shown beside the
	// fuzzy matches, so a word also finds a tool name or the payload.
	words   *flt.Filter
	langErr string // why the query is not a valid one (nothing matches)
	id      jsonrpc.ID
	byID    bool
	noHTTP  bool     // hide HTTP rows (x)
	proc    int      // with byID: only frames of this server process
	srv     string   // only frames of this server (SetServer)
	idSrv   string   // with byID: the server of the id
	matches []uint64 // absolute indices of matching frames, ascending
	scanned uint64   // frames below this absolute index have been matched
}

func (f *filter) active() bool { return f.query != "" || f.byID || f.noHTTP || f.srv != "" }

// label is the filter as shown in the title: "id 3", "tools", "id 3 tools".
func (f *filter) label() string {
	var parts []string
	if f.srv != "" {
		parts = append(parts, "server "+textfmt.Clean(f.srv))
	}
	if f.byID && f.idSrv != "" && f.idSrv != f.srv {
		parts = append(parts, textfmt.Clean(f.idSrv)+" id "+f.id.String())
	} else if f.byID {
		parts = append(parts, "id "+f.id.String())
	}
	if f.query != "" {
		parts = append(parts, f.query)
	}
	if f.noHTTP {
		parts = append(parts, "no http")
	}
	return strings.Join(parts, " ")
}

// source adapts a list of frames of the ring to fuzzy.Source.
type source struct {
	r   *frameRing
	abs []uint64
}

func (s source) String(i int) string { return s.r.search(s.abs[i]) }
func (s source) Len() int            { return len(s.abs) }

// match returns, in order, the frames that pass the filter: those of
// subset when narrow is set, else those in [from, to).
func (m *Model) match(from, to uint64, subset []uint64, narrow bool) []uint64 {
	var cands []uint64
	add := func(abs uint64) {
		e := m.ring.at(abs)
		if m.flt.noHTTP && e.h != nil || m.flt.srv != "" && e.srv != m.flt.srv {
			return
		}
		if !m.flt.byID || e.proc == m.flt.proc && e.srv == m.flt.idSrv && related(e.f, m.flt.id) {
			cands = append(cands, abs)
		}
	}
	if narrow {
		for _, abs := range subset {
			if abs >= m.ring.oldest() {
				add(abs)
			}
		}
	} else {
		for abs := from; abs < to; abs++ {
			add(abs)
		}
	}
	switch {
	case m.flt.query == "" || len(cands) == 0:
		return cands
	case m.flt.langErr != "":
		return nil
	case m.flt.lang != nil:
		out := cands[:0]
		for _, abs := range cands {
			it := m.frameItem(m.ring.at(abs))
			if m.flt.lang.Match(&it) {
				out = append(out, abs)
			}
		}
		return out
	}
	// FindFromNoSort keeps the wire order; its indices only grow, so the
	// result can be merged with the word matches over cands in place.
	ms := fuzzy.FindFromNoSort(m.flt.query, source{&m.ring, cands})
	out := cands[:0]
	j := 0
	for i, abs := range cands {
		hit := j < len(ms) && ms[j].Index == i
		if hit {
			j++
		} else if m.flt.words != nil {
			it := m.frameItem(m.ring.at(abs))
			hit = m.flt.words.Match(&it)
		}
		if hit {
			out = append(out, abs)
		}
	}
	return out
}

// refilter recomputes the matches after the query or the id changed. A
// query that extends the previous one only narrows its matches.
func (m *Model) refilter(narrow bool) {
	switch {
	case !m.flt.active():
		m.flt.matches = nil
	case narrow:
		m.flt.matches = m.match(0, 0, m.flt.matches, true)
	default:
		m.flt.matches = m.match(m.ring.oldest(), m.ring.total(), nil, false)
	}
	m.flt.scanned = m.ring.total()
	m.settle()
}

// extendFilter drops evicted matches and matches only the frames that
// arrived since the last call.
func (m *Model) extendFilter() {
	if !m.flt.active() {
		return
	}
	old := m.ring.oldest()
	i := 0
	for i < len(m.flt.matches) && m.flt.matches[i] < old {
		i++
	}
	m.flt.matches = m.flt.matches[i:]
	from := max(m.flt.scanned, old)
	m.flt.matches = append(m.flt.matches, m.match(from, m.ring.total(), nil, false)...)
	m.flt.scanned = m.ring.total()
}

// setQuery applies a new fuzzy query; nothing is re-run when it is unchanged.
//
// A query with a field: term (method:, status:…) is the filter language
// (docs/filter.md); plain words alone stay a fuzzy match.
func (m *Model) setQuery(q string) {
	if q == m.flt.query {
		return
	}
	narrow := m.flt.query != "" && strings.HasPrefix(q, m.flt.query)
	m.flt.query, m.flt.lang, m.flt.words, m.flt.langErr = q, nil, nil, ""
	f, err := flt.Parse(q)
	switch {
	case !isLang(q):
		if err == nil && strings.TrimSpace(q) != "" {
			m.flt.words = f
		}
	case err != nil:
		narrow = false // status:err does not narrow status:e
		m.flt.langErr = err.Error()
	default:
		narrow = false
		m.flt.lang = f
	}
	m.refilter(narrow)
}

// isLang reports whether q has a field: term.
func isLang(q string) bool {
	for _, w := range strings.Fields(q) {
		w = strings.TrimPrefix(w, "-")
		if i := strings.IndexByte(w, ':'); i > 0 && strings.Trim(w[:i], "abcdefghijklmnopqrstuvwxyz") == "" {
			return true
		}
	}
	return false
}

// frameItem is what the filter language sees of a frame: what
// filter.Requests makes of it, as on the command line (a frame is judged
// by its request: a response has its request's method and tool, every
// frame of a request its outcome and latency once settled), and what
// this pane knows of the frame itself: the protocol rules it breaks, and
// the tool named in its own params.
func (m *Model) frameItem(e *entry) flt.Item {
	f := e.f
	it, _ := m.requests(e.srv).ItemAt(client.Event{Kind: client.EvFrame, Frame: f}, e.gen)
	if bad, _ := violation(f.Verdict); bad || len(e.lint) > 0 || f.Msg.Error != nil {
		it.Failed = true
	}
	if e.isError && !it.IsError {
		it.IsError = true
		it.Status = append(it.Status, "isError")
	}
	if it.Tool == "" {
		it.Tool = e.target()
	}
	return it
}

// FilterID shows only the frames of one request id (its request, response,
// progress and cancellation) of the current server process (ids start again
// after a restart), with an "id N" chip; esc clears it. It drops
// any fuzzy query, closes the detail view, leaves follow mode and selects
// the first such frame. An unset id (jsonrpc.ID{}) just clears the filter.
func (m *Model) FilterID(id jsonrpc.ID) { m.FilterRequest("", id) }

// FilterRequest is FilterID for a request of server, when the pane shows
// several (SetTag): the frames of that server's id.
func (m *Model) FilterRequest(server string, id jsonrpc.ID) {
	m.flt.query, m.flt.id, m.flt.byID, m.flt.proc = "", id, id.IsValid(), max(m.procs[server], 1)
	m.flt.idSrv = server
	m.flt.noHTTP = false
	m.input.SetValue("")
	m.input.Blur()
	m.mode = modeList
	m.follow = false
	m.refilter(false)
	if m.count() > 0 {
		m.moveTo(0)
	}
	m.syncKeys()
}

// clearFilter removes the query and the id chip, keeping the selected frame
// (and whether HTTP rows are hidden).
func (m *Model) clearFilter() {
	m.flt = filter{noHTTP: m.flt.noHTTP, srv: m.flt.srv}
	m.input.SetValue("")
	m.refilter(false)
}

// openFilter starts typing a query.
func (m *Model) openFilter() tea.Cmd {
	m.mode = modeFilter
	m.input.SetValue(m.flt.query)
	m.input.CursorEnd()
	return m.input.Focus()
}

// related reports whether frame f belongs to request id: it carries the id,
// or it is a progress or cancellation notification that names it.
func related(f *client.FrameInfo, id jsonrpc.ID) bool {
	if f.Msg.ID.IsValid() {
		return f.Msg.ID == id
	}
	switch f.Msg.Method {
	case "notifications/progress", "notifications/cancelled":
	default:
		return false
	}
	var p struct {
		RequestID     *jsonrpc.ID `json:"requestId"`
		ProgressToken *jsonrpc.ID `json:"progressToken"`
	}
	if json.Unmarshal(f.Msg.Params, &p) != nil {
		return false
	}
	return (p.RequestID != nil && *p.RequestID == id) || (p.ProgressToken != nil && *p.ProgressToken == id)
}
