package stderr

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/columns"
	"github.com/sonde-mcp/sonde/ui/list"
)

// partialNote ends the incomplete last line.
const partialNote = " (no newline yet)"

// bounds returns the absolute numbers of the first item (the "dropped"
// marker when there is one) and one past the last item (the partial line
// when there is one).
func (m *Model) bounds() (lo, hi uint64) {
	lo, hi = m.first(), m.first()+uint64(m.lines.Len())
	if m.dropped > 0 {
		lo--
	}
	if len(m.partial) > 0 {
		hi++
	}
	return lo, hi
}

// rowsOf renders item n as screen rows: one, or several when soft wrap is
// on and the line is wider than the pane. Rows are cut to the pane's width
// by View.
func (m *Model) rowsOf(n uint64) []string {
	st := m.st
	switch {
	case n < m.first():
		return []string{st.Warn.Render("… " + textfmt.Size(int(m.dropped)) + " dropped …")}
	case n-m.first() == uint64(m.lines.Len()):
		if m.only != "" && m.ptag != m.only {
			return nil
		}
		return m.tagged(m.ptag, m.partialRows)
	}
	l := m.lines.At(int(n - m.first()))
	if m.only != "" && l.srv != m.only {
		return nil // another server's: no rows while the pane shows one server
	}
	return m.tagged(l.srv, func(w int) []string {
		switch l.kind {
		case kSep, kSepErr:
			style := st.Subtle
			if l.kind == kSepErr {
				style = st.Error
			}
			return []string{style.Render(l.text + strings.Repeat("─", max(w-ansi.StringWidth(l.text), 0)))}
		}
		if !m.wrap || len(l.text) <= w {
			return []string{st.Text.Render(l.text)}
		}
		return m.wrapped(l.text, w)
	})
}

// tagged renders a line's rows at the pane's width, led by its server's
// tag (the SERVER column) when the pane shows several servers and the
// column fits (columns.Widths drops it whole when it does not): the first
// row carries the name, the rows it wraps to are indented.
func (m *Model) tagged(srv string, rows func(w int) []string) []string {
	w := max(m.w, 1)
	if m.tagW == 0 {
		return rows(w)
	}
	ws := columns.Widths(w, []columns.Col{{Min: 12, Prio: 0, Grow: true}, {Min: min(m.tagW, 8), Want: m.tagW, Prio: 1}})
	if ws[1] == 0 {
		return rows(w)
	}
	out := rows(ws[0])
	for i := range out {
		tag := strings.Repeat(" ", ws[1])
		if i == 0 {
			tag = textfmt.Fit(columns.Cut(textfmt.Escape(srv), ws[1]), ws[1])
		}
		out[i] = m.st.Accent.Render(tag) + " " + out[i]
	}
	return out
}

func (m *Model) wrapped(s string, w int) []string {
	rows := strings.Split(ansi.Hardwrap(s, w, true), "\n")
	for i, r := range rows {
		rows[i] = m.st.Text.Render(r)
	}
	return rows
}

// partialRows renders the incomplete last line, marked as such.
func (m *Model) partialRows(w int) []string {
	if m.pdirty {
		m.ptext, m.pdirty = sanitize(m.partial), false
	}
	note, noteW := m.st.Subtle.Render(partialNote), len(partialNote)
	s := m.ptext
	if !m.wrap {
		if ansi.StringWidth(s)+noteW > w {
			s = ansi.Truncate(s, max(w-noteW, 1), "…")
		}
		return []string{m.st.Text.Render(s) + note}
	}
	rows := []string{""}
	if s != "" {
		rows = m.wrapped(s, w)
	}
	if last := len(rows) - 1; ansi.StringWidth(rows[last])+noteW <= w {
		rows[last] += note
	} else {
		rows = append(rows, m.st.Subtle.Render(partialNote[1:]))
	}
	return rows
}

// View renders the visible rows: the newest when following, otherwise from
// the scroll position. Only the lines on screen are rendered.
func (m *Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return textfmt.Lines("", m.w, m.h)
	}
	lo, hi := m.bounds()
	var rows []string
	if m.follow {
		rows = m.tail(hi)
	} else {
		top := m.clamp(m.top)
		for n := top.line; n < hi && len(rows) < m.h; n++ {
			r := m.rowsOf(n)
			if n == top.line {
				r = r[top.sub:]
			}
			rows = append(rows, r...)
		}
	}
	if lo == hi {
		rows = []string{m.st.Subtle.Render("nothing on stderr yet")}
	}
	return textfmt.Lines(strings.Join(rows[:min(len(rows), m.h)], "\n"), m.w, m.h)
}

// tail returns the last h rows of the items before hi.
func (m *Model) tail(hi uint64) []string {
	lo, _ := m.bounds()
	var chunks [][]string
	total := 0
	for n := hi; n > lo && total < m.h; n-- {
		if r := m.rowsOf(n - 1); len(r) > 0 { // another server's line has none
			chunks = append(chunks, r)
			total += len(r)
		}
	}
	rows := make([]string, 0, total)
	for i := len(chunks) - 1; i >= 0; i-- {
		rows = append(rows, chunks[i]...)
	}
	return rows[max(total-m.h, 0):]
}

// bottom returns the scroll position that shows the last page.
func (m *Model) bottom() pos {
	lo, hi := m.bounds()
	total := 0
	for n := hi; n > lo; n-- {
		total += len(m.rowsOf(n - 1))
		if total >= m.h {
			return pos{n - 1, total - m.h}
		}
	}
	return pos{lo, 0}
}

// clamp keeps p on an item that still exists.
func (m *Model) clamp(p pos) pos {
	lo, hi := m.bounds()
	switch {
	case lo == hi:
		return pos{lo, 0}
	case p.line < lo:
		return pos{lo, 0}
	case p.line >= hi:
		return pos{hi - 1, 0}
	}
	p.sub = list.Clamp(p.sub, len(m.rowsOf(p.line))) // rows change with width and wrap
	return p
}

// atBottom reports whether the rows from the scroll position to the end fit
// on one page.
func (m *Model) atBottom() bool {
	_, hi := m.bounds()
	total := -m.top.sub
	for n := m.top.line; n < hi && total <= m.h; n++ {
		total += len(m.rowsOf(n))
	}
	return total <= m.h
}
