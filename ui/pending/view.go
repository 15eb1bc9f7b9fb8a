package pending

import (
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/columns"
)

// Column indices of a row, in screen order.
const (
	colMark   = iota
	colServer // with several servers (SetTag): the request's
	colID
	colMethod
	colState
	colAge
	colLeft   // in the live view: the countdown; in history: the settled time
	colPolicy // with SetPolicies: the timeout policies failed (policies.go)
	colDetail
	nCols
)

// barW is the width of a progress bar.
const barW = 8

type cell struct {
	text  string
	style lipgloss.Style
	// num marks an id or a number: shown whole or not at all.
	num bool
	// method and tool are the method cell's parts (text is both).
	method, tool string
	// verdicts are the policy cell's parts, "✗ts-sdk" (text is them all).
	verdicts []string
}

// View renders the visible rows of the current view: a header line, then
// one line per request. Only the rows on screen are formatted; the columns
// are fitted to what those rows hold (see columns).
func (m *Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return textfmt.Lines("", m.w, m.h)
	}
	st := m.st
	c, n := m.cur(), m.rows()
	var rows [][]cell
	for i := c.off; i < n && len(rows) < m.page(); i++ {
		if m.history {
			rows = append(rows, m.histCells(m.at(i)))
		} else {
			rows = append(rows, m.liveCells(m.at(i)))
		}
	}
	head := m.header()
	widths := columns.Widths(m.w, m.cols(head, rows))
	lines := make([]string, 0, m.h)
	lines = append(lines, m.row(head, widths, false))
	if n == 0 {
		msg := "no requests in flight"
		switch {
		case m.filtering():
			msg = "no request matches the filter"
		case m.history:
			msg = "no settled requests yet"
		}
		lines = append(lines, textfmt.Fit(st.Subtle.Render(msg), m.w))
	}
	for j, r := range rows {
		lines = append(lines, m.row(r, widths, c.off+j == c.sel))
	}
	if m.barLines() == 0 {
		return textfmt.Lines(strings.Join(lines, "\n"), m.w, m.h)
	}
	for len(lines) < m.h-1 {
		lines = append(lines, "")
	}
	return textfmt.Lines(strings.Join(append(lines[:m.h-1], m.bar()), "\n"), m.w, m.h)
}

// bar is the filter's line.
func (m *Model) bar() string { return m.q.Bar(m.st, m.w, itoa(m.rows())+" match") }

// cols describes the columns for the rows shown. Identity comes first (id,
// method with its tool, state, the "srv" mark when a server's request is
// shown), then the numbers (latency or age, the countdown), then the
// detail; a column that does not fit is dropped whole. An id or a number
// column is as wide as its widest value on screen.
func (m *Model) cols(head []cell, rows [][]cell) []columns.Col {
	widest := func(i int) int {
		w := 0
		for _, r := range rows {
			w = max(w, columns.Width(r[i].text))
		}
		return w
	}
	method := widest(colMethod)
	cs := make([]columns.Col, nCols)
	if mark := widest(colMark); mark > 0 {
		cs[colMark] = columns.Col{Min: mark, Want: mark, Prio: 1}
	}
	id := max(widest(colID), lipgloss.Width(head[colID].text))
	cs[colID] = columns.Col{Min: id, Want: id, Prio: 0}
	cs[colMethod] = columns.Col{Min: max(min(method, 14), 6), Want: max(min(method, 30), 6), Prio: 0}
	cs[colState] = columns.Col{Min: stateW, Want: stateW, Prio: 2}
	if srv := min(widest(colServer), 16); srv > 0 {
		srv = max(srv, lipgloss.Width(head[colServer].text))
		cs[colServer] = columns.Col{Min: min(srv, 8), Want: srv, Prio: 3}
	}
	if len(m.pol.list) > 0 {
		w := max(widest(colPolicy), lipgloss.Width(head[colPolicy].text))
		cs[colPolicy] = columns.Col{Min: min(w, 10), Want: min(w, 40), Prio: 3}
	}
	for _, i := range []int{colAge, colLeft} {
		w := max(widest(i), lipgloss.Width(head[i].text))
		cs[i] = columns.Col{Min: w, Want: w, Prio: 4 + i - colAge}
	}
	detail := max(min(widest(colDetail), 40), 8)
	cs[colDetail] = columns.Col{Min: 8, Want: detail, Prio: 6, Grow: true}
	// A long method and tool is cut at 30 only when the row needs the room:
	// with every column whole and the detail's want beside it, none is.
	if whole := wantsWidth(cs) - cs[colMethod].Want + max(method, 6); whole <= m.w {
		cs[colMethod].Want = max(method, 6)
	}
	return cs
}

// wantsWidth is the width of the shown columns at their wants, with one
// cell between them.
func wantsWidth(cs []columns.Col) int {
	w, n := 0, 0
	for _, c := range cs {
		if c.Min > 0 {
			w += c.Want
			n++
		}
	}
	return w + max(n-1, 0)
}

// stateW fits the longest state word ("cancelled").
const stateW = 9

func (m *Model) header() []cell {
	h := m.st.Header
	if m.history {
		return []cell{{text: "", style: h}, {text: "SERVER", style: h}, {text: "ID", style: h}, {text: "METHOD", style: h}, {text: "OUTCOME", style: h},
			{text: "LATENCY", style: h}, {text: "SETTLED AT", style: h}, {text: "POLICY", style: h}, {text: "ERROR", style: h}}
	}
	return []cell{{text: "", style: h}, {text: "SERVER", style: h}, {text: "ID", style: h}, {text: "METHOD", style: h}, {text: "STATE", style: h},
		{text: "AGE", style: h}, {text: "LEFT", style: h}, {text: "POLICY", style: h}, {text: "PROGRESS / RESULT", style: h}}
}

// common returns the mark, id, method (with the tool) and state cells of e.
// A tool result with isError reads "isError" in the state column.
func (m *Model) common(e *entry) []cell {
	st := m.st
	mark := ""
	if e.key.dir == client.In {
		mark = "srv"
	} else if client.Injected(e.key.id) {
		mark = "inj" // a request sonde injected into a tapped host's session
	}
	id := "—"
	if e.key.id.IsValid() {
		id = e.key.id.String()
	}
	method := e.method
	if e.tool != "" {
		method += " " + e.tool
	}
	text := st.Text
	if e.state.Final() {
		text = st.Subtle
	}
	state, stStyle := string(e.state), st.State(string(e.state))
	if e.isError {
		state, stStyle = "isError", st.Error
	}
	return []cell{{text: mark, style: st.Info}, {text: clean(e.server, 60), style: st.Accent}, {text: id, style: text, num: true},
		{text: method, style: text, method: e.method, tool: e.tool}, {text: state, style: stStyle}}
}

func (m *Model) liveCells(e *entry) []cell {
	st := m.st
	cells := m.common(e)
	if e.state.Final() {
		lat := textfmt.Dur(e.latency)
		if e.state == client.StateRejected {
			lat = "" // never registered: no latency to speak of
		}
		detail, style := "", st.Subtle
		if e.state == client.StateRetried {
			detail = "input required"
		}
		if e.retryOf.IsValid() {
			detail = strings.TrimSpace("retry of id " + e.retryOf.String() + "  " + detail)
		}
		if e.isError {
			detail, style = strings.TrimSpace("the tool failed  "+detail), st.Error
		}
		if e.err != "" {
			detail, style = strings.TrimLeft(detail+"  "+e.err, " "), st.State(string(e.state))
		}
		return append(cells, cell{text: lat, style: st.Subtle, num: true}, cell{text: "", style: st.Subtle, num: true}, m.policyCell(e),
			cell{text: detail, style: style})
	}
	left, leftStyle := "", st.Text
	if !e.deadline.IsZero() && e.state != client.StateHeld {
		rem := e.deadline.Sub(m.now)
		left = clock(rem)
		if rem <= 0 || rem*5 < e.deadline.Sub(e.queued) {
			leftStyle = st.Error
		}
	}
	detail := progressText(e.progress)
	if e.task != "" {
		detail = e.task
	}
	if e.state == client.StateHeld {
		// The clock stands still (client.HoldDeadlines).
		detail = strings.TrimSpace("held while you answer the server  " + detail)
	}
	if e.key.dir == client.In && detail == "" {
		// sonde sets no deadline on the server's requests: the server does.
		detail = "awaits an answer (a) · the deadline is the server's"
	}
	if e.stream != "" {
		detail = strings.TrimSpace("on " + e.stream + "  " + detail)
	}
	if e.fault != "" {
		detail = strings.TrimSpace(e.fault + "  " + detail)
	}
	if e.retryOf.IsValid() {
		detail = strings.TrimSpace("retry of id " + e.retryOf.String() + "  " + detail)
	}
	if b := e.budget.text(m.now); b != "" && e.state != client.StateHeld {
		detail = strings.TrimSpace(detail + "  " + b) // last: the first cut when narrow
	}
	return append(cells, cell{text: clock(m.now.Sub(e.queued)), style: st.Text, num: true}, cell{text: left, style: leftStyle, num: true},
		m.policyCell(e), cell{text: detail, style: st.Text})
}

func (m *Model) histCells(e *entry) []cell {
	st := m.st
	latency := textfmt.Dur(e.latency)
	if e.state == client.StateRejected {
		latency = ""
	}
	errText, errStyle := e.err, st.State(string(e.state))
	if e.isError && errText == "" {
		errText, errStyle = "the tool failed", st.Error
	}
	return append(m.common(e), cell{text: latency, style: st.Subtle, num: true},
		cell{text: e.settled.Format("15:04:05.000"), style: st.Subtle, num: true}, m.policyCell(e), cell{text: errText, style: errStyle})
}

// row joins the shown cells (width above 0) into one line of the pane's
// width; the selected row keeps its colours on the Selected style's
// background. A number is never cut (its column is as wide as the widest);
// text is cut at a word boundary.
func (m *Model) row(cells []cell, widths []int, selected bool) string {
	var b strings.Builder
	sel := m.st.Selected
	first := true
	for i, c := range cells {
		w := widths[i]
		if w <= 0 {
			continue
		}
		style := c.style
		if selected {
			style = style.Inherit(sel)
		}
		if !first {
			if selected {
				b.WriteString(sel.Render(" "))
			} else {
				b.WriteByte(' ')
			}
		}
		first = false
		text := c.text
		switch {
		case i == colMethod && c.method != "":
			text = methodCell(c.method, c.tool, w)
		case i == colPolicy && len(c.verdicts) > 0:
			text = fitVerdicts(c.verdicts, w)
		case i == colDetail && strings.ContainsRune(text, '█') && lipgloss.Width(text) > w:
			text = strings.TrimLeft(strings.TrimLeft(text, "█░"), " ") // the bar is decoration
			text = columns.Cut(text, w)
		case !c.num:
			text = columns.Cut(text, w)
		}
		b.WriteString(style.Render(textfmt.Fit(text, w)))
	}
	line := textfmt.Fit(b.String(), m.w)
	if pad := m.w - lipgloss.Width(b.String()); selected && pad > 0 {
		line = b.String() + sel.Render(strings.Repeat(" ", pad))
	}
	return line
}

// methodCell fits a method and its tool (or prompt, or resource) name to
// w cells, keeping the start of the name: "tools/call search_docs", else
// the method with the name cut at its end, else "call search_docs" (the
// method's last segment) whole or cut, else the name alone, cut.
func methodCell(method, tool string, w int) string {
	full := strings.TrimSpace(method + " " + tool)
	if tool == "" || lipgloss.Width(full) <= w {
		return columns.Cut(full, w)
	}
	const minName = 12 // cells of the name worth showing beside the method
	if rest := w - lipgloss.Width(method) - 1; rest >= minName {
		return method + " " + textfmt.Fit(tool, rest)
	}
	verb := method[strings.LastIndexByte(method, '/')+1:]
	if rest := w - lipgloss.Width(verb) - 1; rest >= minName || rest >= lipgloss.Width(tool) {
		return verb + " " + textfmt.Fit(tool, rest)
	}
	return textfmt.Fit(tool, w)
}

// progressText renders a progress report: a bar and n/total with a total,
// n alone without, then the message.
func progressText(p *client.Progress) string {
	if p == nil {
		return ""
	}
	s := num(p.Progress)
	if p.Total != nil && *p.Total > 0 {
		frac := max(min(p.Progress / *p.Total, 1), 0)
		full := int(frac*barW + 0.5)
		s = strings.Repeat("█", full) + strings.Repeat("░", barW-full) + " " + s + "/" + num(*p.Total)
	}
	if p.Message != "" {
		s += " " + clean(p.Message, 200)
	}
	return s
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// clock renders an age or countdown, to 100ms above a second so the column
// does not flicker at every tick.
func clock(d time.Duration) string {
	if d >= time.Second || d <= -time.Second {
		return textfmt.Dur(d.Truncate(100 * time.Millisecond))
	}
	return textfmt.Dur(d.Truncate(time.Millisecond))
}

// itoa formats a count with thousands separators: 1,234.
func itoa(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + itoa(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// clean returns s on one line: control characters escaped, at most max
// runes (what a server sends is never interpreted by the terminal).
func clean(s string, max int) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			return textfmt.Preview([]byte(s), max)
		}
	}
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
