package tools

import (
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/list"
)

// toolSource adapts the tool list to fuzzy.Source (matching on names).
type toolSource []entry

// String returns the name of tool i.
func (s toolSource) String(i int) string { return s[i].tool.Name }

// Len returns the number of tools.
func (s toolSource) Len() int { return len(s) }

// refilter recomputes the visible rows for the query (called only when the
// query or the tool list changes) and keeps the selected tool if it is still
// shown.
func (m *Model) refilter() { m.refilterKeeping(m.selectedName()) }

// selectedName is the name of the selected tool, or "".
func (m *Model) selectedName() string {
	if e := m.selected(); e != nil {
		return e.tool.Name
	}
	return ""
}

// refilterKeeping re-runs the filter and selects the tool named prev when it
// is still shown.
func (m *Model) refilterKeeping(prev string) {
	m.runs++
	m.visible, m.matched = list.Fuzzy(m.query, toolSource(m.tools), m.visible, m.matched)
	m.sel, m.top = 0, 0
	for i, idx := range m.visible {
		if m.tools[idx].tool.Name == prev {
			m.sel = i
			break
		}
	}
}

// setQuery changes the filter query and re-runs the filter if it changed.
func (m *Model) setQuery(q string) {
	if q == m.query {
		return
	}
	m.query = q
	m.refilter()
}

// highlight draws a name with its fuzzy-matched characters in match style.
// matched holds byte offsets into name (as sahilm/fuzzy reports them); the
// name is walked rune by rune, so multi-byte characters are highlighted
// whole and their cells stay where they are. Control characters are escaped
// (textfmt.Clean) so a name cannot drive the terminal.
func highlight(name string, matched []int, base, match lipgloss.Style) string {
	if len(matched) == 0 {
		return base.Render(textfmt.Clean(name))
	}
	var out, run strings.Builder
	runMatched, mi := false, 0
	flush := func() {
		if run.Len() == 0 {
			return
		}
		if runMatched {
			out.WriteString(match.Render(run.String()))
		} else {
			out.WriteString(base.Render(run.String()))
		}
		run.Reset()
	}
	for off := 0; off < len(name); {
		r, size := utf8.DecodeRuneInString(name[off:])
		for mi < len(matched) && matched[mi] < off {
			mi++
		}
		hit := mi < len(matched) && matched[mi] == off
		if hit != runMatched {
			flush()
			runMatched = hit
		}
		run.WriteString(textfmt.Clean(string(r)))
		off += size
	}
	flush()
	return out.String()
}
