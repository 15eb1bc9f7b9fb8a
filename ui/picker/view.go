package picker

import (
	"fmt"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/list"
)

// layout is how the screen's rows are shared: a title, the filter line and
// the column header above the list; the problems and the help line below.
type layout struct {
	list     int      // rows of the list
	problems []string // the problem lines shown, heading included (none: no problems)
}

// fixedRows are the rows around the list: title, filter, header, the
// selected server's source, help.
const fixedRows = 5

// layout gives the problems at most a third of the screen: each problem is
// wrapped on as many lines as it needs, and those that do not fit are
// counted on the last line.
func (m *Model) layout() layout {
	var l layout
	if n := len(m.opts.Problems); n > 0 {
		budget := max(2, m.h/3)
		lines := []string{m.st.Warn.Render(fmt.Sprintf("Problems (%d)", n))}
		for i, p := range m.opts.Problems {
			wrapped := strings.Split(ansi.Wrap(textfmt.Escape(p), max(m.w-2, 1), " /"), "\n")
			room := budget - len(lines)
			if i < n-1 {
				room-- // keep a line for the count of the others
			}
			if len(wrapped) > room {
				lines = append(lines, m.st.Subtle.Render(fmt.Sprintf("… %d more: sonde config list shows them all", n-i)))
				break
			}
			for j, w := range wrapped {
				prefix := "  "
				if j == 0 {
					prefix = m.st.Error.Render("! ")
				}
				lines = append(lines, prefix+w)
			}
		}
		l.problems = lines
	}
	l.list = max(m.h-fixedRows-len(l.problems), 1)
	return l
}

func (m *Model) listHeight() int { return m.layout().list }

// scroll keeps the selected row inside the list's window.
func (m *Model) scroll() {
	m.top = list.Scroll(m.top, m.sel, len(m.visible), m.listHeight())
}

// View draws the picker on the alternate screen.
func (m *Model) View() tea.View {
	return list.AltView(m.Render(), "sonde: pick a server")
}

// Render returns the picker's screen as text of exactly the window's size.
func (m *Model) Render() string { return list.Screen(m.w, m.h, m.lines) }

// lines are the picker's screen, line by line.
func (m *Model) lines() []string {
	st, l := m.st, m.layout()
	var rows []string

	files := "files"
	if m.opts.Files == 1 {
		files = "file"
	}
	sessions := 0
	for _, it := range m.opts.Items {
		if it.Session != "" {
			sessions++
		}
	}
	title := fmt.Sprintf("sonde · pick a server · %d found in %d %s", len(m.opts.Items)-sessions, m.opts.Files, files)
	if sessions > 0 {
		title += fmt.Sprintf(" · %d live tapped session%s above them", sessions, pluralS(sessions))
	}
	rows = append(rows, st.Accent.Render(textfmt.Fit(title, m.w)))

	switch {
	case m.filtering:
		count := fmt.Sprintf(" %d/%d", len(m.visible), len(m.opts.Items))
		input := "/ " + textfmt.Escape(m.query) + "▏"
		rows = append(rows, textfmt.Fit(input, m.w-len(count))+st.Subtle.Render(count))
	case len(m.opts.Items) == 0:
		rows = append(rows, st.Warn.Render(textfmt.Fit("No MCP servers were found in the host config files (sonde config list shows where sonde looked).", m.w)))
	default:
		rows = append(rows, st.Subtle.Render(textfmt.Fit("/ filters · enter starts the selected server in the inspector", m.w)))
	}

	nameW, whereW := m.columns()
	header := fmt.Sprintf("  %-*s  %-*s  %s", nameW, "NAME", whereW, "HOST · SCOPE", "COMMAND / URL")
	rows = append(rows, st.Header.Render(textfmt.Fit(header, m.w)))

	for i := 0; i < l.list; i++ {
		r := m.top + i
		if r >= len(m.visible) {
			switch {
			case r == 0 && len(m.opts.Items) > 0:
				rows = append(rows, st.Subtle.Render(textfmt.Fit("  no server matches "+textfmt.Escape(m.query), m.w)))
				continue
			case r == 0:
				rows = append(rows, st.Subtle.Render(textfmt.Fit("  start one with: sonde -- COMMAND [ARG...], or sonde --url URL (sonde --help)", m.w)))
				continue
			}
			rows = append(rows, "")
			continue
		}
		rows = append(rows, m.row(r, nameW, whereW))
	}

	source := ""
	if m.sel < len(m.visible) {
		it := m.opts.Items[m.visible[m.sel]]
		switch {
		case it.Session != "":
			source = "  " + textfmt.Escape(it.Source)
		case it.Source != "":
			source = "  from " + textfmt.Escape(it.Source)
		}
		if w := it.Approval.words(); w != "" {
			source += " · " + w
		}
	}
	rows = append(rows, st.Subtle.Render(textfmt.Fit(source, m.w)))
	rows = append(rows, l.problems...)

	m.help.SetWidth(m.w)
	rows = append(rows, m.help.ShortHelpView(m.Keys().ShortHelp()))
	return rows
}

// columns returns the widths of the name and where columns.
func (m *Model) columns() (int, int) {
	nameW, whereW := len("NAME"), len("HOST · SCOPE")
	for _, it := range m.opts.Items {
		nameW = max(nameW, lipgloss.Width(textfmt.Escape(it.Name)))
		whereW = max(whereW, lipgloss.Width(it.Where))
	}
	return min(nameW, max(m.w/4, 8)), min(whereW, max(m.w/4, 8))
}

// row draws visible row r.
func (m *Model) row(r, nameW, whereW int) string {
	st := m.st
	it := m.opts.Items[m.visible[r]]
	selected := r == m.sel
	marker := "  "
	switch {
	case selected && m.marked[m.visible[r]]:
		marker = "›●"
	case selected:
		marker = "› "
	case m.marked[m.visible[r]]:
		marker = " ●"
	}
	base := st.Text
	if it.Disabled || it.Approval == Rejected {
		base = st.Subtle
	}
	name := textfmt.Fit(highlight(it.Name, m.matched[r], base, st.Match), nameW)
	what := base.Render(textfmt.Escape(it.What))
	switch {
	case it.Disabled:
		what = base.Render("(disabled) ") + what
	case it.Approval == Approved:
		what = st.OK.Render(it.Approval.marker()) + " " + what
	case it.Approval == Pending:
		what = st.Warn.Render(it.Approval.marker()) + " " + what
	case it.Approval == Rejected:
		what = base.Render(it.Approval.marker()+" ") + what
	}
	where := st.Subtle.Render(textfmt.Fit(it.Where, whereW))
	if it.Session != "" {
		where = st.OK.Render(textfmt.Fit(it.Where, whereW))
	}
	line := marker + name + "  " + where + "  " + what
	line = textfmt.Fit(line, m.w)
	if selected {
		return st.Selected.Render(line)
	}
	return line
}

// highlight draws a name with its matched characters (byte offsets, as
// sahilm/fuzzy reports them) in match style, rune by rune. A name with
// control characters is drawn escaped, without highlights.
func highlight(name string, matched []int, base, match lipgloss.Style) string {
	if len(matched) == 0 || textfmt.Escape(name) != name {
		return base.Render(textfmt.Escape(name))
	}
	var b strings.Builder
	mi := 0
	for off := 0; off < len(name); {
		_, size := utf8.DecodeRuneInString(name[off:])
		for mi < len(matched) && matched[mi] < off {
			mi++
		}
		s := name[off : off+size]
		if mi < len(matched) && matched[mi] == off {
			b.WriteString(match.Render(s))
		} else {
			b.WriteString(base.Render(s))
		}
		off += size
	}
	return b.String()
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
