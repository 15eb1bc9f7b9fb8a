package timeline

import (
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/timeouts"
)

// policies are the client timeout policies whose deadlines the pane marks
// on the bars of sonde's requests (SetPolicies, docs/timeouts.md).
type policies struct {
	list []timeouts.Policy
	live *timeouts.Live // each request's record, kept up to date
}

// SetPolicies makes the pane mark on each bar of sonde's requests the
// deadline of each of the client timeout policies ps, as its events tell
// it (a progress notification moves a reset-on-progress deadline): the
// policy's number (1 for the first), in the error colour where the request
// outlived it, subtle where its answer came first. The title names the
// numbers. Call it before the first events; nil or empty marks none.
func (m *Model) SetPolicies(ps []timeouts.Policy) {
	m.pol = policies{list: ps}
	if len(ps) > 0 {
		m.pol.live = timeouts.NewLive()
	}
}

// follow gives s, when it is one of sonde's requests, its record once
// it is known.
func (p *policies) follow(s *span) {
	if p.live != nil && s.tr == nil && s.key.dir == client.Out {
		s.tr = p.live.Request(s.key.id)
	}
}

// legend is the title's key to the marks: " · deadlines 1 ts-sdk 2
// inspector".
func (p *policies) legend() string {
	if len(p.list) == 0 {
		return ""
	}
	s := " · deadlines"
	for i, pol := range p.list {
		s += " " + mark(i) + " " + textfmt.Clean(pol.Name)
	}
	if len(p.list) > 1 {
		s += " (* several)"
	}
	return s
}

// mark is policy i's mark on a bar.
func mark(i int) string {
	if i < 9 {
		return strconv.Itoa(i + 1)
	}
	return "+"
}

// deadlines marks on cells (a bar's, x placing a time) each policy's
// deadline for s, as s's events up to its end (or to, while in flight)
// tell it; "*" where several fall in one cell (in the error colour if
// the request outlived any of them).
func (m *Model) deadlines(s *span, cells []string, x func(time.Time) int, to time.Time) {
	r := s.tr
	if r == nil {
		return
	}
	stop := to
	switch {
	case !r.Answered.IsZero():
		stop = r.Answered
	case !r.Ended.IsZero():
		stop = r.Ended
	}
	type hit struct {
		policy   int
		several  bool
		outlived bool
	}
	hits := map[int]*hit{}
	var order []int
	for i, p := range m.pol.list {
		d, _ := timeouts.DeadlineAt(p, r, stop)
		c := x(d)
		if d.IsZero() || c < 0 || c >= len(cells) {
			continue
		}
		h := hits[c]
		if h == nil {
			h = &hit{policy: i}
			hits[c] = h
			order = append(order, c)
		} else {
			h.several = true
		}
		h.outlived = h.outlived || !d.After(stop) // the client gave up there
	}
	for _, c := range order {
		h := hits[c]
		text, style := mark(h.policy), m.st.Subtle // the answer (or the end) came first
		if h.several {
			text = "*"
		}
		if h.outlived {
			style = m.st.Error
		}
		cells[c] = style.Render(text)
	}
}
