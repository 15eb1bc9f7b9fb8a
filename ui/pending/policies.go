package pending

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/timeouts"
)

// policies are the client timeout policies the pane evaluates sonde's
// requests under (SetPolicies, docs/timeouts.md): timeouts.Live folds
// the events of each server (SetTag) into each request's record, which
// its row keeps, and timeouts.Standing says at each draw what a policy
// makes of it.
type policies struct {
	list []timeouts.Policy
	live map[string]*timeouts.Live // by server tag
}

// SetPolicies makes the pane show, in a POLICY column, what each of the
// client timeout policies ps makes of each of sonde's requests: for one in
// flight, those it has already outlived (✗ts-sdk: that client would have
// given up by now; with reset-on-progress, its progress notifications
// restart the deadline); for a settled one, each policy's verdict (✓
// passed, ✗ failed, ? cannot tell). Call it before the first events; nil
// or empty shows no column.
func (m *Model) SetPolicies(ps []timeouts.Policy) {
	m.pol = policies{list: ps}
	if len(ps) > 0 {
		m.pol.live = map[string]*timeouts.Live{}
	}
}

// add folds ev into the records of server tag's requests.
func (p *policies) add(tag string, ev *client.Event) {
	if p.live == nil {
		return
	}
	l := p.live[tag]
	if l == nil {
		l = timeouts.NewLive()
		p.live[tag] = l
	}
	l.Add(*ev)
}

// follow gives e, one of sonde's requests, its record once it is known.
func (p *policies) follow(tag string, e *entry) {
	if p.live == nil || e.tr != nil || e.key.dir != client.Out || !e.key.id.IsValid() {
		return
	}
	if l := p.live[tag]; l != nil {
		e.tr = l.Request(e.key.id)
	}
}

// verdicts is each policy's standing on e at the pane's clock; nil
// without policies or without e's record (a server's request, or one
// whose start the pane missed).
func (m *Model) verdicts(e *entry) []timeouts.Verdict {
	if e.tr == nil || len(m.pol.list) == 0 {
		return nil
	}
	if e.state.Final() && e.tr.Ended.IsZero() && e.tr.Answered.IsZero() {
		return nil // never sent (rejected): no client's timer ran
	}
	vs := make([]timeouts.Verdict, len(m.pol.list))
	for i, p := range m.pol.list {
		vs[i] = timeouts.Standing(p, e.tr, m.now)
	}
	return vs
}

// policyCell is e's POLICY cell: the policies failed first (what a cut
// keeps), then those that cannot tell, then those passed ("✓ all" when
// every one of several passed); while e is in flight, only the failed
// ones.
func (m *Model) policyCell(e *entry) cell {
	st := m.st
	vs := m.verdicts(e)
	var fail, unknown, pass []string
	for i, v := range vs {
		name := clean(m.pol.list[i].Name, 40)
		switch v.Result {
		case timeouts.ResultFail:
			fail = append(fail, "✗"+name)
		case timeouts.ResultUnknown:
			unknown = append(unknown, "?"+name)
		case timeouts.ResultPass:
			pass = append(pass, "✓"+name)
		}
	}
	if len(pass) > 1 && len(pass) == len(vs) {
		pass = []string{"✓ all"}
	}
	var style lipgloss.Style
	switch {
	case len(fail) > 0:
		style = st.Error
	case len(pass) > 0:
		style = st.OK
	default:
		style = st.Subtle
	}
	parts := append(append(fail, unknown...), pass...)
	return cell{text: strings.Join(parts, " "), style: style, verdicts: parts}
}

// fitVerdicts fits a policy cell's parts to w cells, whole names only:
// all of them, else the first ones and how many more ("✗ts-sdk +2"), else
// the count of each mark ("✗2 ✓1"), else the failures' count alone.
func fitVerdicts(parts []string, w int) string {
	if s := strings.Join(parts, " "); lipgloss.Width(s) <= w {
		return s
	}
	for k := len(parts) - 1; k >= 1; k-- {
		if s := strings.Join(parts[:k], " ") + " +" + strconv.Itoa(len(parts)-k); lipgloss.Width(s) <= w {
			return s
		}
	}
	var counts []string
	for _, mark := range []string{"✗", "?", "✓"} {
		n := 0
		for _, p := range parts {
			if strings.HasPrefix(p, mark) {
				n++
			}
		}
		if n > 0 {
			counts = append(counts, mark+strconv.Itoa(n))
		}
	}
	if s := strings.Join(counts, " "); lipgloss.Width(s) <= w {
		return s
	}
	return textfmt.Fit(counts[0], w)
}
