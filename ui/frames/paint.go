package frames

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// paint is a style reduced to the escape sequences around its text. The
// list and the detail view draw single-line cells without padding or
// borders, so wrapping text in these is what Style.Render does, at a
// fraction of the cost; View stays cheap however often it runs.
type paint struct{ pre, suf string }

func newPaint(s lipgloss.Style) paint {
	r := s.Render("x")
	i := strings.IndexByte(r, 'x')
	if i < 0 {
		return paint{}
	}
	return paint{r[:i], r[i+1:]}
}

func (p paint) write(sb *strings.Builder, text string) {
	if text == "" {
		return
	}
	sb.WriteString(p.pre)
	sb.WriteString(text)
	sb.WriteString(p.suf)
}

func (p paint) render(text string) string {
	if p.pre == "" && p.suf == "" {
		return text
	}
	return p.pre + text + p.suf
}

// pens are the paints of the pane, built once from its styles: one per
// span kind, plain and on the selection background, and one per verdict
// or state name, built on first use.
type pens struct {
	kinds  [skCount][2]paint
	states map[string][2]paint
}

// pen returns the paint of kind k, on the selection background when sel.
func (m *Model) pen(k sk, sel bool) paint {
	if k == skVerdict {
		return m.statePen(string(m.det.e.f.Verdict), sel)
	}
	return m.pens.kinds[k][b2i(sel)]
}

// statePen returns the paint of a verdict or state name.
func (m *Model) statePen(name string, sel bool) paint {
	p, ok := m.pens.states[name]
	if !ok {
		s := m.st.State(name)
		p = [2]paint{newPaint(s), newPaint(s.Inherit(m.st.Selected))}
		m.pens.states[name] = p
	}
	return p[b2i(sel)]
}

func (m *Model) initPens() {
	st := m.st
	styles := [skCount]lipgloss.Style{
		skText: st.Text, skSubtle: st.Subtle, skAccent: st.Accent, skInfo: st.Info,
		skWarn: st.Warn, skError: st.Error, skHeader: st.Header, skVerdict: st.Text,
		skKey: st.JSONKey, skString: st.JSONString, skNumber: st.JSONNumber,
		skBool: st.JSONBool, skNull: st.JSONNull, skPunct: st.JSONPunct,
		skMatch: st.Match, skSelected: st.Selected,
	}
	for k, s := range styles {
		m.pens.kinds[k] = [2]paint{newPaint(s), newPaint(s.Inherit(st.Selected))}
	}
	m.pens.states = make(map[string][2]paint)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Restyle rebuilds the pane's cached paints after the shared styles changed
// (the root switches palette once it knows the terminal's background).
func (m *Model) Restyle() {
	m.initPens()
	if m.mode == modeDetail {
		m.buildDetail()
	}
}
