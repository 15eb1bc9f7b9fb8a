package pending

import (
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// Fixed column widths; the method and detail columns share the rest.
const (
	markW  = 3 // "srv" for the server's requests
	idW    = 6
	stateW = 9
	timeW  = 7  // age, countdown, latency
	atW    = 12 // 15:04:05.000
	barW   = 8
)

type cell struct {
	text  string
	style lipgloss.Style
	width int
}

// View renders the visible rows of the current view: a header line, then
// one line per request. Only the rows on screen are formatted.
func (m *Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return textfmt.Lines("", m.w, m.h)
	}
	st := m.st
	lines := make([]string, 0, m.h)
	lines = append(lines, m.row(m.header(), false))
	c, n := m.cur(), m.rows()
	if n == 0 {
		msg := "no requests in flight"
		if m.history {
			msg = "no settled requests yet"
		}
		lines = append(lines, textfmt.Fit(st.Subtle.Render(msg), m.w))
	}
	for i := c.off; i < n && len(lines) < m.h; i++ {
		if m.history {
			lines = append(lines, m.row(m.histCells(m.hist.At(i)), i == c.sel))
		} else {
			lines = append(lines, m.row(m.liveCells(m.live[i]), i == c.sel))
		}
	}
	return textfmt.Lines(strings.Join(lines, "\n"), m.w, m.h)
}

// widths returns the widths of the method and detail columns.
func (m *Model) widths() (method, detail int) {
	fixed := markW + idW + stateW + timeW + 6
	if m.history {
		fixed += atW
	} else {
		fixed += timeW
	}
	rest := m.w - fixed
	method = max(min(rest*2/5, 32), 10)
	return method, max(rest-method, 0)
}

func (m *Model) header() []cell {
	mw, dw := m.widths()
	h := m.st.Header
	if m.history {
		return []cell{{"", h, markW}, {"ID", h, idW}, {"METHOD", h, mw}, {"OUTCOME", h, stateW},
			{"LATENCY", h, timeW}, {"SETTLED AT", h, atW}, {"ERROR", h, dw}}
	}
	return []cell{{"", h, markW}, {"ID", h, idW}, {"METHOD", h, mw}, {"STATE", h, stateW},
		{"AGE", h, timeW}, {"LEFT", h, timeW}, {"PROGRESS / RESULT", h, dw}}
}

// common returns the mark, id and method cells of e.
func (m *Model) common(e *entry, mw int) []cell {
	st := m.st
	mark := ""
	if e.key.dir == client.In {
		mark = "srv"
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
	return []cell{{mark, st.Info, markW}, {id, text, idW}, {method, text, mw},
		{string(e.state), st.State(string(e.state)), stateW}}
}

func (m *Model) liveCells(e *entry) []cell {
	st := m.st
	mw, dw := m.widths()
	cells := m.common(e, mw)
	if e.state.Final() {
		detail, style := textfmt.Dur(e.latency), st.Subtle
		if e.state == client.StateRejected {
			detail = "" // never registered: no latency to speak of
		}
		if e.state == client.StateRetried {
			detail += "  input required"
		}
		if e.retryOf.IsValid() {
			detail = "retry of id " + e.retryOf.String() + "  " + detail
		}
		if e.err != "" {
			detail, style = strings.TrimLeft(detail+"  "+e.err, " "), st.State(string(e.state))
		}
		return append(cells, cell{"", st.Subtle, timeW}, cell{"", st.Subtle, timeW}, cell{detail, style, dw})
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
	return append(cells, cell{clock(m.now.Sub(e.queued)), st.Text, timeW}, cell{left, leftStyle, timeW},
		cell{detail, st.Text, dw})
}

func (m *Model) histCells(e *entry) []cell {
	st := m.st
	mw, dw := m.widths()
	latency := textfmt.Dur(e.latency)
	if e.state == client.StateRejected {
		latency = ""
	}
	return append(m.common(e, mw), cell{latency, st.Subtle, timeW},
		cell{e.settled.Format("15:04:05.000"), st.Subtle, atW}, cell{e.err, st.State(string(e.state)), dw})
}

// row joins cells into one line of the pane's width; the selected row keeps
// its colours on the Selected style's background.
func (m *Model) row(cells []cell, selected bool) string {
	var b strings.Builder
	sel := m.st.Selected
	for i, c := range cells {
		style := c.style
		if selected {
			style = style.Inherit(sel)
		}
		if i > 0 {
			if selected {
				b.WriteString(sel.Render(" "))
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(style.Render(textfmt.Fit(c.text, c.width)))
	}
	line := textfmt.Fit(b.String(), m.w)
	if pad := m.w - lipgloss.Width(b.String()); selected && pad > 0 {
		line = b.String() + sel.Render(strings.Repeat(" ", pad))
	}
	return line
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
