package frames

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/sahilm/fuzzy"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/columns"
)

// previewRoom is the width the preview keeps before the method and the
// verdict are given all they want.
const previewRoom = 24

// cols are the widths of the list columns, 0 for a column not shown. A row
// is: gutter (2: selection and violation marks), then the shown columns of
// time, arrow (2), id, method, status (the verdict and its detail), size,
// preview, one space between them.
type cols struct{ time, server, arrow, id, method, status, size, preview int }

// layout fits the columns to w for the visible rows [top, end): identity
// first (the arrow, the id, the method, the verdict), then the time and the
// verdict's detail, decoration last (size, preview). A column that does not
// fit is dropped whole; an id, a time or a size column is as wide as its
// widest value on screen, so a number is never cut.
func (m *Model) layout(top, end int) cols {
	idW, timeW, sizeW, methodW, verdictW, statusW, srvW := 2, 4, 4, 6, 7, 0, 0
	for i := top; i < end; i++ {
		e := m.ring.at(m.absAt(i))
		f := e.f
		if e.srv != "" {
			srvW = max(srvW, len("server"), min(columns.Width(textfmt.Escape(e.srv)), 16))
		}
		if f.Msg.ID.IsValid() {
			idW = max(idW, columns.Width(f.Msg.ID.String()))
		}
		timeW = max(timeW, len(textfmt.Dur(e.t.Sub(m.t0))))
		sizeW = max(sizeW, len(textfmt.Size(len(f.Raw))))
		switch methodOf(f) {
		case mMethod:
			name := e.target()
			methodW = max(methodW, columns.Width(textfmt.Escape(f.Msg.Method))+pick(name != "", 1+columns.Width(name), 0))
		case mKind:
			methodW = max(methodW, len(f.Msg.Kind.String()))
		default:
			methodW = max(methodW, len(f.Verdict))
		}
		verdictW = max(verdictW, len(f.Verdict))
		statusW = max(statusW, len(f.Verdict)+1+columns.Width(textfmt.Escape(f.DetailAfterVerdict())))
	}
	methodMin := min(methodW, 14)
	statusW = max(statusW, verdictW)
	// Capped wants leave the preview room on a narrow screen; when every
	// column fits whole with room to spare, none is cut.
	methodCap, statusCap := min(methodW, 28), min(statusW, max(26, min(40, m.w/3)))
	if fixed := 2 + idW + methodW + timeW + statusW + sizeW + srvW + 8; fixed+previewRoom <= m.w-2 {
		methodCap, statusCap = methodW, statusW
	}
	ws := columns.Widths(m.w-2, []columns.Col{
		{Min: 2, Want: 2, Prio: 0},                                     // arrow
		{Min: idW, Want: idW, Prio: 0},                                 // id
		{Min: methodMin, Want: methodCap, Prio: 1, Fill: 2},            // method
		{Min: timeW, Want: timeW, Prio: 3},                             // time
		{Min: verdictW, Want: statusCap, Prio: 2, Fill: 1, Grow: true}, // status
		{Min: sizeW, Want: sizeW, Prio: 5},                             // size
		{Min: 8, Want: 14, Prio: 6, Grow: true},                        // preview: its gist before the details
		{Min: min(srvW, 8), Want: srvW, Prio: 4},                       // server (0: one server)
	})
	return cols{arrow: ws[0], id: ws[1], method: ws[2], time: ws[3], status: ws[4], size: ws[5], preview: ws[6], server: ws[7]}
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
	rows := m.listRows()
	n := m.count()
	top := max(0, min(m.indexOf(m.top), n-rows))
	c := m.layout(top, min(n, top+rows))
	lines := make([]string, 0, m.h+1)
	lines = append(lines, m.pen(skHeader, false).render(m.headerText(c)))
	switch {
	case rows == 0:
	case n == 0 && m.flt.active():
		lines = append(lines, m.pen(skSubtle, false).render(pad("  no frame matches the filter", m.w, false)))
	case n == 0:
		lines = append(lines, m.pen(skSubtle, false).render(pad("  no frames yet", m.w, false)))
	default:
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
	var b strings.Builder
	b.WriteString("  ")
	col := func(name string, w int, right bool) {
		if w <= 0 {
			return
		}
		if b.Len() > 2 {
			b.WriteByte(' ')
		}
		b.WriteString(pad(name, w, right))
	}
	col("time", c.time, true)
	col("server", c.server, false)
	col("", c.arrow, false)
	col("id", c.id, false)
	col("method", c.method, false)
	col("verdict", c.status, false)
	col("size", c.size, true)
	col("preview", c.preview, false)
	return pad(b.String(), m.w, false)
}

// What the method column shows for a frame: its method, else its kind
// (response, notification…), else (not JSON-RPC) its verdict.
const (
	mMethod = iota
	mKind
	mVerdict
)

func methodOf(f *client.FrameInfo) int {
	switch {
	case f.Msg.Method != "":
		return mMethod
	case f.Msg.Kind != jsonrpc.KindInvalid:
		return mKind
	}
	return mVerdict
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
	cols  int // columns written after the gutter
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

// col writes a column's cell after a space, unless the column is not shown
// (w is 0).
func (r *rowWriter) col(p paint, text string, w int, right bool, off int) {
	if w <= 0 {
		return
	}
	if r.cols > 0 {
		r.space()
	}
	r.cols++
	r.cell(p, text, w, right, off)
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
	if m.flt.query != "" && m.flt.lang == nil && m.flt.langErr == "" {
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
	} else if e.proc > 1 && (abs == m.ring.oldest() || m.ring.at(abs-1).srv == e.srv && m.ring.at(abs-1).proc != e.proc) {
		mark, markPen = "↻", r.pen(skAccent) // the first frame of a restarted server
	} else if client.Injected(f.Msg.ID) {
		mark, markPen = "i", r.pen(skInfo) // sonde's request (or its answer) injected into a tapped session
	}
	r.cell(r.pen(skAccent), pick(selected, ">", " "), 1, false, -1)
	r.cell(markPen, mark, 1, false, -1)
	r.col(r.pen(skSubtle), textfmt.Dur(e.t.Sub(m.t0)), c.time, true, -1)
	r.col(r.pen(skAccent), columns.Cut(textfmt.Escape(e.srv), c.server), c.server, false, -1)
	arrow := f.Dir.Arrow()
	if e.h != nil {
		arrow = pick(f.Dir == client.Out, "~>", "<~") // an HTTP exchange or stream event, not a message
	}
	r.col(r.pen(pick(f.Dir == client.Out, skAccent, skInfo)), arrow, c.arrow, false, -1)
	id, idOff := "", -1
	if f.Msg.ID.IsValid() {
		id, idOff = f.Msg.ID.String(), sg.id
	}
	r.col(r.pen(skText), id, c.id, false, idOff)
	method, mOff, mPen := textfmt.Escape(f.Msg.Method), sg.method, r.pen(skText)
	switch methodOf(f) {
	case mKind:
		method, mOff, mPen = f.Msg.Kind.String(), sg.kind, r.pen(skSubtle)
	case mVerdict:
		method, mOff, mPen = string(f.Verdict), sg.verdict, m.statePen(string(f.Verdict), selected)
	}
	if name := e.target(); name != "" {
		// The method with what it names, keeping the name: "tools/call
		// search", else "call search", else the name.
		full := method + " " + name
		verb := method[strings.LastIndexByte(method, '/')+1:] + " " + name
		switch {
		case columns.Width(full) <= c.method:
			method = full
		case columns.Width(verb) <= c.method:
			method, mOff = verb, -1
		default:
			method, mOff = textfmt.Fit(name, c.method), -1
		}
	} else if short := columns.CutMethod(method, c.method); short != method {
		method, mOff = short, -1
	}
	r.col(mPen, method, c.method, false, mOff)
	m.status(r, f, e.isError, sg, c.status)
	r.col(r.pen(skSubtle), textfmt.Size(len(f.Raw)), c.size, true, -1)
	if e.h != nil && len(f.Raw) == 0 && f.Stream != "" {
		r.col(r.pen(skSubtle), "["+textfmt.Escape(f.Stream)+"]", c.preview, false, -1)
	} else {
		r.col(r.pen(skSubtle), e.gist(), c.preview, false, -1)
	}
	if r.width != m.w {
		return fit(r.sb.String(), m.w)
	}
	return r.sb.String()
}

// status writes the verdict, coloured by state, and its detail cut at a
// word boundary (an id or a number in it is shown whole or not at all). A
// tool result with isError reads "isError" before the verdict's detail.
func (m *Model) status(r *rowWriter, f *client.FrameInfo, isErr bool, sg segs, w int) {
	if w <= 0 {
		return
	}
	if r.cols > 0 {
		r.space()
	}
	r.cols++
	v, vPen, off := string(f.Verdict), m.statePen(string(f.Verdict), r.sel), sg.verdict
	if isErr {
		v, vPen, off = "isError", r.pen(skError), -1 // the tool failed: its result says so
	}
	vw := min(len(v), w)
	r.cell(vPen, v, vw, false, off)
	if dw := w - vw - 1; dw >= 0 {
		r.space()
		r.cell(r.pen(skText), columns.Cut(textfmt.Escape(f.DetailAfterVerdict()), dw), dw, false, -1)
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
	if m.note != "" {
		if left.Len() > 0 {
			left.WriteString(" ")
		}
		left.WriteString(m.pen(skInfo, false).render(textfmt.Clean(m.note)))
	}
	if !m.flt.active() && m.mode != modeFilter {
		return fit(left.String(), m.w)
	}
	right := m.pen(skSubtle, false).render(commas(uint64(m.count())) + " of " + commas(uint64(m.ring.len())) + " · esc clears")
	if m.flt.langErr != "" {
		right = m.pen(skError, false).render(strings.TrimPrefix(m.flt.langErr, "filter: ")) + " " + right
	}
	lw := max(m.w-lipgloss.Width(right)-1, 0)
	return fit(fit(left.String(), lw)+" "+right, m.w)
}
