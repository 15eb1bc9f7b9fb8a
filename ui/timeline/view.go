package timeline

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// scanRows bounds how many spans before the window's right edge View looks
// at beyond the rows it shows: a request that started earlier than that
// and is still in the window is not drawn.
const scanRows = 512

// statLines is the most lines the latency summary takes.
const statLines = 5

// rows is how many span rows fit.
func (m *Model) rows() int { return max(m.h-3-m.statsHeight()-m.barLines(), 0) }

// barLines is 1 while the filter's bar shows.
func (m *Model) barLines() int {
	if m.q.Typing || m.q.Active() {
		return 1
	}
	return 0
}

func (m *Model) statsHeight() int { return min(statLines, max(m.h/4, 1)) }

// View draws the axis, the span rows, the two lanes and the latency
// summary: exactly h lines of w cells.
func (m *Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return textfmt.Lines("", m.w, m.h)
	}
	from, to := m.window()
	labelW := min(30, max(m.w/3, 8))
	axisW := max(m.w-labelW-1, 1)
	x := func(t time.Time) int {
		return int(float64(t.Sub(from)) / float64(m.width) * float64(axisW))
	}
	spans := m.visible(from, to)
	n := m.rows()
	shown := spans[max(len(spans)-n-m.row, 0) : len(spans)-min(m.row, len(spans))]
	lines := make([]string, 0, m.h)
	lines = append(lines, m.st.Header.Render(textfmt.Fit("request", labelW))+" "+m.axis(axisW))
	if len(shown) == 0 {
		lines = append(lines, m.st.Subtle.Render("no request in this window"))
	}
	for i := range shown {
		lines = append(lines, m.row1(&shown[i], labelW, axisW, x, to))
	}
	for len(lines) < 1+n {
		lines = append(lines, "")
	}
	lines = append(lines, m.lane("notifications", &m.notes, from, to, labelW, axisW, x, "•", m.st.Info),
		m.lane("stderr", &m.errs, from, to, labelW, axisW, x, "▪", m.st.Warn))
	lines = append(lines, m.stats(spans, m.statsHeight())...)
	if m.barLines() > 0 {
		lines = append(lines, m.q.Bar(m.st, m.w, fmt.Sprintf("%d shown", len(shown))))
	}
	return textfmt.Lines(strings.Join(lines, "\n"), m.w, m.h)
}

// visible returns the spans that overlap [from, to] and pass the filter,
// oldest first, looking at no more than the rows shown plus scanRows
// spans.
func (m *Model) visible(from, to time.Time) []span {
	end := m.firstAfter(to)
	limit := m.rows() + m.row + scanRows
	var out []span
	for i := end - 1; i >= 0 && end-i <= limit; i-- {
		s := m.spans.At(i)
		if !s.end.IsZero() && s.end.Before(from) {
			continue
		}
		if it := s.item(); m.q.Match(&it) {
			out = append(out, *s)
		}
	}
	slices.Reverse(out)
	return out
}

// axis draws the time marks of the window: its start, its middle and its
// end (now while following).
func (m *Model) axis(w int) string {
	left := "-" + fmtDur(m.width)
	mid := "-" + fmtDur(m.width/2)
	right := "now"
	if !m.follow {
		right = "paused"
	}
	b := []rune(strings.Repeat("─", w))
	put := func(at int, s string) {
		r := []rune(s)
		at = max(min(at, w-len(r)), 0)
		for i, c := range r {
			if at+i < w {
				b[at+i] = c
			}
		}
	}
	put(0, left)
	put(w/2-len(mid)/2, mid)
	put(w-len(right), right)
	return m.st.Subtle.Render(string(b))
}

// row1 draws one span: its label, then the bar from its start to its end
// (or now), ticks for progress, ! for a late or duplicate answer.
func (m *Model) row1(s *span, labelW, axisW int, x func(time.Time) int, to time.Time) string {
	label := s.key.id.String() + " " + s.method
	if s.key.dir == client.In {
		label = "srv " + label
	}
	if s.tool != "" {
		label += " " + s.tool
	}
	cells := make([]string, axisW)
	for i := range cells {
		cells[i] = " "
	}
	style := m.st.State(string(s.state))
	if s.isError {
		style = m.st.Error
	}
	end := s.end
	ch := "━"
	if end.IsZero() {
		end, ch = to, "─"
	}
	a, b := max(x(s.start), 0), min(x(end), axisW-1)
	if b < a && a < axisW {
		b = a
	}
	for i := a; i <= b && i < axisW; i++ {
		cells[i] = style.Render(ch)
	}
	for _, t := range s.ticks {
		if i := x(t); i >= 0 && i < axisW {
			cells[i] = m.st.Accent.Render("┿")
		}
	}
	m.deadlines(s, cells, x, to)
	for _, t := range s.marks {
		if i := x(t); i >= 0 && i < axisW {
			cells[i] = m.st.Error.Render("!")
		}
	}
	return textfmt.Fit(textfmt.Clean(label), labelW) + " " + strings.Join(cells, "")
}

// lane draws the marks of r in the window.
func (m *Model) lane(name string, r interface {
	Len() int
	At(int) *time.Time
}, from, to time.Time, labelW, axisW int, x func(time.Time) int, mark string, style lipgloss.Style) string {
	cells := []rune(strings.Repeat(" ", axisW))
	hit := make([]bool, axisW)
	n := r.Len()
	i := searchTimes(r, from)
	for ; i < n; i++ {
		t := *r.At(i)
		if t.After(to) {
			break
		}
		if c := x(t); c >= 0 && c < axisW {
			hit[c] = true
		}
	}
	var b strings.Builder
	for c := range cells {
		if hit[c] {
			b.WriteString(style.Render(mark))
		} else {
			b.WriteRune(' ')
		}
	}
	return m.st.Subtle.Render(textfmt.Fit(name, labelW)) + " " + b.String()
}

// searchTimes returns the index of the first time at or after t (the lane
// rings are in time order).
func searchTimes(r interface {
	Len() int
	At(int) *time.Time
}, t time.Time) int {
	lo, hi := 0, r.Len()
	for lo < hi {
		mid := (lo + hi) / 2
		if r.At(mid).Before(t) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// stats is the latency per method of the spans that ended in the window:
// count, p50, p95, p99, the busiest methods first.
func (m *Model) stats(spans []span, h int) []string {
	lat := map[string][]time.Duration{}
	for i := range spans {
		s := &spans[i]
		if s.end.IsZero() {
			continue
		}
		k := s.method
		if s.tool != "" {
			k += " " + s.tool
		}
		lat[k] = append(lat[k], s.end.Sub(s.start))
	}
	names := make([]string, 0, len(lat))
	for k := range lat {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := len(lat[b]) - len(lat[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	nameW := max(min(30, m.w-37), 8) // the numbers keep their 37 cells
	out := []string{m.st.Header.Render(fmt.Sprintf("%s %6s %9s %9s %9s", textfmt.Fit("latency in this window", nameW), "n", "p50", "p95", "p99"))}
	for _, k := range names {
		if len(out) >= h {
			break
		}
		ds := lat[k]
		slices.Sort(ds)
		out = append(out, fmt.Sprintf("%s %6d %9s %9s %9s", textfmt.Fit(textfmt.Clean(k), nameW), len(ds),
			textfmt.Dur(pct(ds, 50)), textfmt.Dur(pct(ds, 95)), textfmt.Dur(pct(ds, 99))))
	}
	return out
}

// pct is the p-th percentile of sorted ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	i := (len(ds)*p + 99) / 100
	return ds[max(min(i-1, len(ds)-1), 0)]
}

// fmtDur shows a window width: 500ms, 10s, 5m, 1h.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%gs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%gm", d.Minutes())
	}
	return fmt.Sprintf("%gh", d.Hours())
}
