package features

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/list"
)

// Title counts what each view holds, with what the last list_changed
// refresh added (+), removed (−) and changed (~).
func (m *Model) Title() string {
	parts := []string{
		"Resources " + strconv.Itoa(len(m.resources)) + diffText(m.diff[0].added, m.diff[0].removed, m.diff[0].changed),
		"Prompts " + strconv.Itoa(len(m.prompts)) + diffText(m.diff[1].added, m.diff[1].removed, m.diff[1].changed),
		"Log " + strconv.Itoa(m.log.Len()),
	}
	return strings.Join(parts, " · ")
}

func diffText(a, r, c int) string {
	if a+r+c == 0 {
		return ""
	}
	return fmt.Sprintf(" (+%d −%d ~%d)", a, r, c)
}

// View draws the current view.
func (m *Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	if m.form != nil {
		head := m.st.Header.Render("values for " + textfmt.Escape(m.formTarget.key()[2:]))
		if m.status != "" {
			head += "  " + m.st.Info.Render(textfmt.Escape(m.status))
		}
		return textfmt.Fit(head, m.w) + "\n" + m.form.View()
	}
	lines := []string{m.tabs()}
	switch m.view {
	case ViewLog:
		lines = append(lines, m.logLines(m.h-1)...)
	default:
		lines = append(lines, m.listLines(m.h-1)...)
	}
	return textfmt.Lines(strings.Join(lines, "\n"), m.w, m.h)
}

// tabs is the first line: the views, the current one marked, then the
// status.
func (m *Model) tabs() string {
	names := []string{"Resources", "Prompts", "Log"}
	var b strings.Builder
	for i, n := range names {
		if View(i) == m.view {
			b.WriteString(m.st.Accent.Render("[" + n + "]"))
		} else {
			b.WriteString(m.st.Subtle.Render(" " + n + " "))
		}
		b.WriteByte(' ')
	}
	if m.status != "" {
		b.WriteString(m.st.Info.Render(textfmt.Escape(m.status)))
	}
	return b.String()
}

// listLines draws the list of the Resources or Prompts view, and the
// detail below it.
func (m *Model) listLines(h int) []string {
	its := m.items(m.view)
	var out []string
	switch {
	case !m.loaded:
		return []string{m.st.Subtle.Render("waiting for the lists…")}
	case m.listErr != "":
		out = append(out, m.st.Error.Render(textfmt.Escape(m.listErr)))
	}
	if len(its) == 0 {
		what := "the server declared no resources capability"
		if m.view == ViewPrompts {
			what = "the server declared no prompts capability"
			if m.hasPrompts {
				what = "no prompts"
			}
		} else if m.hasResources {
			what = "no resources and no templates"
		}
		return append(out, m.st.Subtle.Render(what))
	}
	listH := min(len(its), max((h-len(out))/2, 1))
	if len(m.detail) == 0 {
		listH = min(len(its), max(h-len(out), 1))
	}
	sel := m.sel[m.view]
	top := list.Scroll(0, sel, len(its), listH)
	for i := top; i < top+listH && i < len(its); i++ {
		out = append(out, m.row(its[i], i == sel))
	}
	if len(m.detail) > 0 && len(out) < h {
		out = append(out, m.st.Header.Render("── "+textfmt.Escape(m.detailTitle)+" "+strings.Repeat("─", max(m.w-len(m.detailTitle)-4, 0))))
		rest := h - len(out)
		end := min(m.scroll+rest, len(m.detail))
		out = append(out, m.detail[min(m.scroll, end):end]...)
	}
	return out
}

// row draws one item.
func (m *Model) row(it item, selected bool) string {
	mark := "  "
	if selected {
		mark = "› "
	}
	var text, tag string
	switch {
	case it.resource != nil:
		r := it.resource
		text = textfmt.Escape(r.URI) + "  " + m.st.Subtle.Render(textfmt.Escape(r.Name)+" "+textfmt.Escape(r.MimeType))
		if m.subscribed[r.URI] {
			tag += " subscribed"
		}
		if n := m.updated[r.URI]; n > 0 {
			tag += " updated " + strconv.Itoa(n) + "×"
		}
	case it.template != nil:
		t := it.template
		text = textfmt.Escape(t.URITemplate) + "  " + m.st.Subtle.Render("template "+textfmt.Escape(t.Name))
	case it.prompt != nil:
		p := it.prompt
		var args []string
		for _, a := range p.Arguments {
			n := textfmt.Escape(a.Name)
			if a.Required {
				n += "*"
			}
			args = append(args, n)
		}
		text = textfmt.Escape(p.Name) + "  " + m.st.Subtle.Render(strings.Join(args, " "))
	}
	switch it.change {
	case added:
		tag += " new"
	case changed:
		tag += " changed"
	}
	line := mark + text + m.st.Warn.Render(tag)
	if selected {
		return m.st.Selected.Render(textfmt.Fit(line, m.w))
	}
	return line
}

// logLines draws the filter line and the newest log entries that pass it.
func (m *Model) logLines(h int) []string {
	logger := "all"
	if m.logger != "" {
		logger = textfmt.Escape(m.logger)
	}
	server := "not set"
	if m.serverLvl != "" {
		server = m.serverLvl
	}
	vis := m.visibleLog()
	head := fmt.Sprintf("level ≥ %s · logger %s · server level %s · %d of %d", mcp.LogLevels[m.minLevel], logger, server, len(vis), m.log.Len())
	if m.log.Evicted() > 0 {
		head += fmt.Sprintf(" · %d evicted", m.log.Evicted())
	}
	out := []string{m.st.Header.Render(head)}
	if len(vis) == 0 {
		return append(out, m.st.Subtle.Render("no log messages (the server sends notifications/message)"))
	}
	n := min(len(vis), max(h-1, 0))
	for _, e := range vis[len(vis)-n:] {
		style := m.st.Text
		switch r := mcp.LogLevelRank(e.level); {
		case r >= mcp.LogLevelRank("error"):
			style = m.st.Error
		case r == mcp.LogLevelRank("warning"):
			style = m.st.Warn
		case r >= 0 && r <= mcp.LogLevelRank("info"):
			style = m.st.Subtle
		}
		lg := ""
		if e.logger != "" {
			lg = "[" + textfmt.Escape(e.logger) + "] "
		}
		out = append(out, m.st.Subtle.Render(e.at.Format("15:04:05.000"))+" "+style.Render(textfmt.Fit(textfmt.Escape(e.level), 9))+" "+lg+textfmt.Escape(e.data))
	}
	return out
}
