package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/list"
)

// sideBySide is the width from which the detail goes beside the list.
const sideBySide = 90

// listLayout is where the list and the detail go (row 0 is the status line).
type listLayout struct {
	side                   bool
	listY, listW, listH    int
	detX, detY, detW, detH int
}

// layout is a pure function of the size and the tool list.
func (m *Model) layout() listLayout {
	l := listLayout{listY: 1}
	if m.w >= sideBySide {
		longest := 0
		for _, e := range m.tools {
			longest = max(longest, utf8.RuneCountInString(e.tool.Name))
		}
		l.side = true
		l.listW = min(max(longest+16, 24), m.w*2/5)
		l.listH = max(m.h-1, 0)
		l.detX, l.detY, l.detW, l.detH = l.listW+3, 1, m.w-l.listW-3, l.listH
		return l
	}
	l.listW = m.w
	l.listH = min(max(len(m.visible), 1), max((m.h-1)/2, 1))
	l.detY = 2 + l.listH
	l.detW, l.detH = m.w, max(m.h-l.detY, 0)
	return l
}

func (m *Model) listHeight() int { return m.layout().listH }

// View draws the pane: exactly h lines of w cells.
func (m *Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return textfmt.Lines("", m.w, m.h)
	}
	switch m.mode {
	case modeForm:
		return m.form.View()
	case modeResult:
		if m.current() != nil {
			return m.resultView()
		}
	}
	if !m.loaded && m.unavailable != "" {
		return m.unavailableView()
	}
	l := m.layout()
	list := m.listLines(l)
	detail := m.detailLines(l.detW, l.detH)
	out := make([]string, 0, m.h)
	out = append(out, m.statusLine())
	if l.side {
		sep := m.st.Subtle.Render(" │ ")
		for i := 0; i < l.listH; i++ {
			out = append(out, textfmt.Fit(at(list, i), l.listW)+sep+textfmt.Fit(at(detail, i), l.detW))
		}
	} else {
		out = append(out, list...)
		out = append(out, m.st.Subtle.Render(strings.Repeat("─", m.w)))
		out = append(out, detail...)
	}
	return textfmt.Lines(strings.Join(out, "\n"), m.w, m.h)
}

// unavailableView says why no tool list came and how to try again (first,
// so a short pane shows it), then the error.
func (m *Model) unavailableView() string {
	st := m.st
	out := []string{m.statusLine(), st.Error.Render(m.unavailWhat),
		st.Accent.Render("ctrl+r") + st.Text.Render(" restarts the server"), ""}
	for _, l := range wrapText(textfmt.Clean(m.unavailable), m.w) {
		out = append(out, st.Error.Render(l))
	}
	return textfmt.Lines(strings.Join(out, "\n"), m.w, m.h)
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// statusLine is the filter (or the tool count) with the list-changed hint
// on the right.
func (m *Model) statusLine() string {
	st := m.st
	var left string
	switch {
	case m.mode == modeFilter || m.query != "":
		left = m.filter.View() + st.Subtle.Render(fmt.Sprintf("  %d/%d", len(m.visible), len(m.tools)))
	case !m.loaded:
		left = st.Subtle.Render("tools")
	default:
		left = st.Subtle.Render(fmt.Sprintf("%d tools", m.toolCount()))
		if m.inFlight > 0 {
			left += st.Accent.Render(fmt.Sprintf(" · %d calling…", m.inFlight))
		}
	}
	right := ""
	switch {
	case m.note != "":
		right = st.Accent.Render(m.note)
	case m.changed:
		right = st.Warn.Render("list changed (ctrl+l to refresh)")
	}
	rw := lipgloss.Width(right)
	if rw == 0 {
		return textfmt.Fit(left, m.w)
	}
	if rw >= m.w {
		return textfmt.Fit(right, m.w)
	}
	return textfmt.Fit(left, m.w-rw-1) + " " + right
}

// listLines draws the visible rows of the list (only those).
func (m *Model) listLines(l listLayout) []string {
	st := m.st
	switch {
	case !m.loaded:
		return []string{st.Subtle.Render("waiting for tools/list…")}
	case len(m.tools) == 0:
		return []string{st.Subtle.Render("the server lists no tools")}
	case len(m.visible) == 0:
		return []string{st.Subtle.Render("no tool matches “" + textfmt.Clean(m.query) + "”")}
	}
	m.top = list.Scroll(m.top, m.sel, len(m.visible), l.listH)
	out := make([]string, 0, l.listH)
	for i := m.top; i < len(m.visible) && len(out) < l.listH; i++ {
		out = append(out, m.row(i, l.listW))
	}
	return out
}

// row draws list row i: marker, highlighted name, calls in flight, and
// "✗ failed" (in the error colour) when the tool's last call failed.
func (m *Model) row(i, w int) string {
	st := m.st
	e := &m.tools[m.visible[i]]
	base, match, marker := st.Text, st.Match, "  "
	if i == m.sel {
		base, match, marker = st.Selected, st.Selected.Inherit(st.Match), "› "
	}
	badge := ""
	if n := m.calling[e.tool.Name]; n > 0 {
		badge = st.Accent.Render(fmt.Sprintf(" %d calling…", n))
	}
	if mark := m.diff.marks[e.tool.Name]; mark != "" {
		badge += st.Warn.Render(" " + mark)
	}
	if m.failed[e.tool.Name] && m.calling[e.tool.Name] == 0 {
		badge += st.Error.Render(" ✗ failed")
	}
	if e.warn != "" {
		badge += st.Warn.Render(" ⚠")
	}
	if e.start != "" {
		base = st.Subtle
		if i == m.sel {
			base = st.Selected
		}
	}
	var hl []int
	if m.query != "" && i < len(m.matched) {
		hl = m.matched[i]
	}
	avail := max(w-2-lipgloss.Width(badge), 1)
	name := highlight(e.tool.Name, hl, base, match)
	if lipgloss.Width(name) > avail {
		name = ansi.Truncate(name, avail, "…")
	}
	name += base.Render(strings.Repeat(" ", avail-lipgloss.Width(name)))
	return base.Render(marker) + name + badge
}

// detailLines describes the selected tool: name and title, description,
// one line per input property, annotations.
func (m *Model) detailLines(w, h int) []string {
	st, e := m.st, m.selected()
	if e == nil || w <= 0 || h <= 0 {
		return nil
	}
	head := st.Accent.Render(textfmt.Clean(e.tool.Name))
	if e.tool.Title != "" {
		head += st.Subtle.Render(" · ") + st.Text.Render(textfmt.Clean(e.tool.Title))
	}
	if e.start != "" {
		out := []string{head}
		for _, d := range wrapText(e.tool.Description, w) {
			out = append(out, st.Subtle.Render(d))
		}
		return out
	}
	props := append(m.appLines(e, w), m.propLines(e)...)
	out := []string{head}
	if e.warn != "" {
		out = append(out, st.Warn.Render(textfmt.Clean(e.warn)))
	}
	if e.tool.Description != "" {
		desc := wrapText(e.tool.Description, w)
		room := max(h-2-len(props), 2)
		if len(desc) > room {
			desc = append(desc[:room-1:room-1], "…")
		}
		for _, d := range desc {
			out = append(out, st.Text.Render(d))
		}
	}
	out = append(out, "")
	return append(out, props...)
}

func (m *Model) propLines(e *entry) []string {
	st := m.st
	s := e.schema
	var out []string
	switch {
	case s.Err != nil:
		out = append(out, st.Warn.Render(textfmt.Clean(s.Err.Error())))
	case len(s.Props) == 0:
		out = append(out, st.Subtle.Render("no arguments"))
	default:
		out = append(out, st.Header.Render("arguments"))
	}
	for _, p := range s.Props {
		parts := []string{st.Accent.Render(textfmt.Clean(p.Name)), st.Subtle.Render(p.Type)}
		if len(p.Enum) > 0 {
			labels := make([]string, len(p.Enum))
			for i, v := range p.Enum {
				labels[i] = textfmt.Clean(form.Label(v))
			}
			parts = append(parts, st.Text.Render("{"+strings.Join(labels, "|")+"}"))
		}
		if p.Default != nil {
			parts = append(parts, st.Subtle.Render("default "+textfmt.Clean(string(p.Default))))
		}
		if p.Required {
			parts = append(parts, st.Warn.Render("required"))
		}
		if p.Description != "" {
			parts = append(parts, st.Text.Render("— "+textfmt.Clean(p.Description)))
		}
		out = append(out, "  "+strings.Join(parts, "  "))
	}
	if len(e.tool.OutputSchema) > 0 {
		out = append(out, st.Subtle.Render("has an outputSchema (structured result)"))
	}
	if a := e.tool.Annotations; len(a) > 0 && string(a) != "null" {
		out = append(out, st.Subtle.Render("annotations "+textfmt.Preview(a, 200)))
	}
	return out
}
