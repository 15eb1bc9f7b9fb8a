package frames

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/sahilm/fuzzy"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// cols are the widths of the list columns. A row is: gutter (2: selection
// and violation marks), time, arrow (2), id, method, size, status (verdict
// and detail), preview, with one space between columns after the gutter.
type cols struct{ time, id, method, size, status, preview int }

func layout(w int) cols {
	c := cols{time: 8, id: 5, method: 16, size: 7}
	if w >= 100 {
		c.id, c.method = 7, 22
	}
	rest := w - (2 + c.time + 1 + 2 + 1 + c.id + 1 + c.method + 1 + c.size + 1)
	c.status = max(14, min(rest*55/100, 56))
	c.preview = max(rest-c.status-1, 0)
	return c
}

// View draws the list (or the detail view): exactly h lines of w cells.
// It touches only the visible rows.
func (m *Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return textfmt.Lines("", m.w, m.h)
	}
	if m.mode == modeDetail {
		return m.detailView()
	}
	c := layout(m.w)
	rows := m.listRows()
	lines := make([]string, 0, m.h+1)
	lines = append(lines, m.pen(skHeader, false).render(m.headerText(c)))
	n := m.count()
	switch {
	case rows == 0:
	case n == 0 && m.flt.active():
		lines = append(lines, m.pen(skSubtle, false).render(pad("  no frame matches the filter", m.w, false)))
	case n == 0:
		lines = append(lines, m.pen(skSubtle, false).render(pad("  no frames yet", m.w, false)))
	default:
		top := max(0, min(m.indexOf(m.top), n-rows))
		sel := m.indexOf(m.sel)
		for i := top; i < min(n, top+rows); i++ {
			lines = append(lines, m.row(c, m.absAt(i), i == sel))
		}
	}
	if len(lines) < 1+rows {
		blank := strings.Repeat(" ", m.w)
		for len(lines) < 1+rows {
			lines = append(lines, blank)
		}
	}
	if m.barShown() {
		lines = append(lines, m.bar())
	}
	return strings.Join(lines[:min(len(lines), m.h)], "\n")
}

func (m *Model) headerText(c cols) string {
	h := "  " + pad("time", c.time, true) + " " + "  " + " " + pad("id", c.id, false) + " " +
		pad("method", c.method, false) + " " + pad("size", c.size, true) + " " +
		pad("verdict", c.status, false) + " " + "preview"
	return pad(h, m.w, false)
}

// blanks serves short runs of spaces without allocating.
const blanks = "                                                                "

func spaces(n int) string {
	if n <= len(blanks) {
		return blanks[:n]
	}
	return strings.Repeat(" ", n)
}

// pad fits plain text to exactly w cells, aligned right when right is set,
// cut with an ellipsis like textfmt.Fit. Text made of one-cell runes (the
// usual case) is measured without grapheme segmentation.
func pad(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	sw, narrow, cut := 0, true, 0
	for i, r := range s {
		if r < 0x20 || (r > 0x7e && r != '…' && r != 'µ') {
			narrow = false
			break
		}
		if sw == w-1 {
			cut = i
		}
		sw++
	}
	switch {
	case !narrow:
		if sw = lipgloss.Width(s); sw > w {
			return fit(s, w)
		}
	case sw > w:
		return s[:cut] + "…"
	}
	if sw < w && right {
		return spaces(w-sw) + s
	}
	if sw < w {
		return s + spaces(w-sw)
	}
	return s
}

// fit is textfmt.Fit made exact: a cut before a wide character can leave
// the text one cell short, which is padded here.
func fit(s string, w int) string {
	s = textfmt.Fit(s, w)
	if d := w - lipgloss.Width(s); d > 0 {
		s += spaces(d)
	}
	return s
}

// rowWriter writes the cells of one row, on the selection background when
// the row is selected, and counts their width.
type rowWriter struct {
	m     *Model
	sb    strings.Builder
	sel   bool
	hit   []bool // matched bytes of the search text, nil without a query
	width int
}

func (r *rowWriter) pen(k sk) paint { return r.m.pen(k, r.sel) }

// cell writes text fitted to w cells; off is where text starts in the
// search text (-1 when it is not part of it), for match highlighting.
func (r *rowWriter) cell(p paint, text string, w int, right bool, off int) {
	fitted := pad(text, w, right)
	r.width += max(w, 0)
	if off < 0 || r.hit == nil || right {
		p.write(&r.sb, fitted)
		return
	}
	match := r.pen(skMatch)
	start, inMatch := 0, false
	for i, ch := range fitted {
		h := i < len(text) && off+i < len(r.hit) && r.hit[off+i] && strings.HasPrefix(text[i:], string(ch))
		if h != inMatch && i > start {
			pick(inMatch, match, p).write(&r.sb, fitted[start:i])
			start = i
		}
		inMatch = h
	}
	pick(inMatch, match, p).write(&r.sb, fitted[start:])
}

func (r *rowWriter) space() {
	r.pen(skText).write(&r.sb, " ")
	r.width++
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

func (m *Model) row(c cols, abs uint64, selected bool) string {
	e := m.ring.at(abs)
	f := e.f
	r := &rowWriter{m: m, sel: selected}
	r.sb.Grow(m.w + 256)
	text, sg := searchText(f)
	if m.flt.query != "" {
		if ms := fuzzy.Find(m.flt.query, []string{text}); len(ms) == 1 {
			r.hit = make([]bool, len(text))
			for _, i := range ms[0].MatchedIndexes {
				r.hit[i] = true
			}
		}
	}
	mark, markPen := " ", r.pen(skText)
	if e.h != nil && httpProblem(e.h) {
		mark, markPen = "!", r.pen(skError)
	} else if f.Verdict == VerdictFault {
		mark, markPen = "*", r.pen(skWarn) // a change sonde tap --fault made
	} else if bad, isErr := violation(f.Verdict); bad {
		mark, markPen = "!", r.pen(pick(isErr, skError, skWarn))
	} else if len(e.lint) > 0 {
		mark, markPen = "!", r.pen(pick(lintMust(e.lint), skError, skWarn))
	} else if e.proc > 1 && (abs == m.ring.oldest() || m.ring.at(abs-1).proc != e.proc) {
		mark, markPen = "↻", r.pen(skAccent) // the first frame of a restarted server
	}
	r.cell(r.pen(skAccent), pick(selected, ">", " "), 1, false, -1)
	r.cell(markPen, mark, 1, false, -1)
	r.cell(r.pen(skSubtle), textfmt.Dur(e.t.Sub(m.t0)), c.time, true, -1)
	r.space()
	arrow := f.Dir.Arrow()
	if e.h != nil {
		arrow = pick(f.Dir == client.Out, "~>", "<~") // an HTTP exchange or stream event, not a message
	}
	r.cell(r.pen(pick(f.Dir == client.Out, skAccent, skInfo)), arrow, 2, false, -1)
	r.space()
	id, idOff := "", -1
	if f.Msg.ID.IsValid() {
		id, idOff = f.Msg.ID.String(), sg.id
	}
	r.cell(r.pen(skText), id, c.id, false, idOff)
	r.space()
	method, mOff, mPen := textfmt.Escape(f.Msg.Method), sg.method, r.pen(skText)
	switch {
	case method != "":
	case f.Msg.Kind != jsonrpc.KindInvalid:
		method, mOff, mPen = f.Msg.Kind.String(), sg.kind, r.pen(skSubtle)
	default:
		method, mOff, mPen = string(f.Verdict), sg.verdict, m.statePen(string(f.Verdict), selected)
	}
	r.cell(mPen, method, c.method, false, mOff)
	r.space()
	r.cell(r.pen(skSubtle), textfmt.Size(len(f.Raw)), c.size, true, -1)
	r.space()
	m.status(r, f, sg, c.status)
	r.space()
	if e.h != nil && len(f.Raw) == 0 && f.Stream != "" {
		r.cell(r.pen(skSubtle), "["+textfmt.Escape(f.Stream)+"]", c.preview, false, -1)
	} else {
		r.cell(r.pen(skSubtle), textfmt.Preview(f.Raw, c.preview), c.preview, false, -1)
	}
	if r.width != m.w {
		return fit(r.sb.String(), m.w)
	}
	return r.sb.String()
}

// status writes the verdict, coloured by state, and its detail.
func (m *Model) status(r *rowWriter, f *client.FrameInfo, sg segs, w int) {
	v := string(f.Verdict)
	vw := min(len(v), w)
	r.cell(m.statePen(v, r.sel), v, vw, false, sg.verdict)
	if dw := w - vw - 1; dw >= 0 {
		r.space()
		r.cell(r.pen(skText), textfmt.Escape(f.DetailAfterVerdict()), dw, false, -1)
	}
}

// bar is the bottom line while filtering: the id chip, the query (or the
// input being typed) and the match count.
func (m *Model) bar() string {
	var left strings.Builder
	if m.flt.byID {
		left.WriteString(m.pen(skSelected, false).render("[id "+m.flt.id.String()+"]") + " ")
	}
	switch {
	case m.mode == modeFilter:
		left.WriteString(m.input.View())
	case m.flt.query != "":
		left.WriteString(m.pen(skAccent, false).render("/ ") + m.pen(skText, false).render(textfmt.Escape(m.flt.query)))
	}
	right := m.pen(skSubtle, false).render(commas(uint64(m.count())) + " of " + commas(uint64(m.ring.len())) + " · esc clears")
	lw := max(m.w-lipgloss.Width(right)-1, 0)
	return fit(fit(left.String(), lw)+" "+right, m.w)
}
