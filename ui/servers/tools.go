package servers

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/list"
)

// ToolRow is one tool of a running server, under its namespaced name.
type ToolRow struct {
	// Name is "server/tool".
	Name        string
	Server      string
	Description string
	// Conflicts are the other running servers with a tool of that name.
	Conflicts []string
}

// toolsMsg carries the tools of the running servers.
type toolsMsg struct {
	rows []ToolRow
	err  error
}

// toolsView is the list's second view (t): the tools of the running
// servers as server/tool, conflicts flagged; enter opens the server of the
// selected tool.
type toolsView struct {
	on       bool
	rows     []ToolRow
	err      error
	sel, top int
}

func (m *Model) loadTools() tea.Cmd {
	src := m.opts.Source
	return func() tea.Msg {
		rows, err := src.Tools()
		return toolsMsg{rows: rows, err: err}
	}
}

// toolsKey handles a key in the tools view.
func (m *Model) toolsKey(msg tea.KeyPressMsg) tea.Cmd {
	k, tv := m.keys, &m.tools
	if msg.String() == "ctrl+c" {
		return tea.Quit
	}
	if d, ok := k.Delta(msg, m.listHeight()); ok {
		tv.sel = list.Clamp(tv.sel+d, len(tv.rows))
		tv.top = list.Scroll(tv.top, tv.sel, len(tv.rows), m.listHeight())
		return nil
	}
	switch {
	case key.Matches(msg, k.Tools), key.Matches(msg, k.Quit):
		tv.on = false
	case key.Matches(msg, k.Open) && len(tv.rows) > 0:
		m.chosen = tv.rows[tv.sel].Server
		return tea.Quit
	}
	return nil
}

// renderTools draws the tools view.
func (m *Model) renderTools() string {
	st, tv := m.st, &m.tools
	conflicts := 0
	for _, r := range tv.rows {
		if len(r.Conflicts) > 0 {
			conflicts++
		}
	}
	title := fmt.Sprintf("sonde · tools of the running servers · %d tools, %d in conflict · t: back to the servers", len(tv.rows), conflicts)
	out := []string{st.Accent.Render(textfmt.Fit(title, m.w))}
	nameW := len("NAME")
	for _, r := range tv.rows {
		nameW = max(nameW, len([]rune(textfmt.Escape(r.Name))))
	}
	nameW = min(nameW, max(m.w/3, 8))
	out = append(out, st.Header.Render(textfmt.Fit(fmt.Sprintf("  %-*s  %s", nameW, "NAME", "DESCRIPTION"), m.w)))
	page := m.listHeight()
	for i := 0; i < page; i++ {
		j := tv.top + i
		switch {
		case j < len(tv.rows):
			r := tv.rows[j]
			desc, _, _ := strings.Cut(strings.TrimSpace(r.Description), "\n")
			mark := ""
			if len(r.Conflicts) > 0 {
				mark = st.Warn.Render("conflict: also in "+textfmt.Escape(strings.Join(r.Conflicts, ", "))) + "  "
			}
			out = append(out, list.Row(st, textfmt.Fit(textfmt.Escape(r.Name), nameW)+"  "+mark+st.Subtle.Render(textfmt.Escape(desc)), j == tv.sel, m.w))
		case j == 0 && tv.err == nil:
			out = append(out, st.Subtle.Render(textfmt.Fit("  no server runs yet: a server starts when you open it (enter) or start it (p)", m.w)))
		default:
			out = append(out, "")
		}
	}
	var idle []string
	for _, r := range m.rows {
		if r.State != "ready" {
			idle = append(idle, textfmt.Escape(r.Name))
		}
	}
	foot := ""
	if len(idle) > 0 {
		foot = "not running: " + strings.Join(idle, ", ") + " (their tools show once they run)"
	}
	out = append(out, st.Subtle.Render(textfmt.Fit(foot, m.w)))
	note := ""
	if tv.err != nil {
		note = textfmt.Escape(tv.err.Error())
	}
	out = append(out, st.Warn.Render(textfmt.Fit(note, m.w)))
	m.help.SetWidth(m.w)
	k := m.keys
	out = append(out, m.help.ShortHelpView([]key.Binding{k.Open, k.Up, k.Down, k.Tools}))
	return textfmt.Lines(strings.Join(out, "\n"), m.w, m.h)
}
