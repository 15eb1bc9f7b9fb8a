package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// reportMsg is the failure report of a server, read in a command ("" when
// it has none).
type reportMsg struct{ server, text string }

// reportCmd reads the failure report of the server the panes show (R in
// the fleet inspector).
func (m *Model) reportCmd() tea.Cmd {
	name := m.fl.only
	if name == "" {
		m.fl.note = "R shows one server's failure report: choose it with S first"
		return nil
	}
	src := m.fl.src
	return func() tea.Msg { return reportMsg{server: name, text: src.Report(name)} }
}

// showReport opens the report's dialog, or says there is none.
func (m *Model) showReport(msg reportMsg) {
	if msg.text == "" {
		m.fl.note = msg.server + " has not failed in this run: no failure report"
		return
	}
	if m.dlg == nil {
		m.openDialog(newReportDialog(m.styles, msg.server, msg.text))
	}
}

// reportDialog shows a failure report: text that scrolls; esc closes.
type reportDialog struct {
	st     *theme.Styles
	server string
	lines  []string
	w, h   int
	top    int
	keys   reportKeys
}

type reportKeys struct {
	list.KeyMap
	Close key.Binding
}

func (k reportKeys) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.Close} }
func (k reportKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}, {k.Close}}
}

func newReportDialog(st *theme.Styles, server, text string) *reportDialog {
	return &reportDialog{st: st, server: server, lines: strings.Split(textfmt.CleanBlock(strings.TrimRight(text, "\n")), "\n"),
		keys: reportKeys{KeyMap: list.DefaultKeyMap(), Close: key.NewBinding(key.WithKeys("esc", "R"), key.WithHelp("esc", "close"))}}
}

func (d *reportDialog) Title() string     { return "failure report · " + textfmt.Clean(d.server) }
func (d *reportDialog) Keys() help.KeyMap { return d.keys }
func (d *reportDialog) Capturing() bool   { return false }
func (d *reportDialog) SetSize(w, h int) {
	d.w, d.h = w, h
	d.top = list.ClampTop(d.top, len(d.lines), d.h)
}

func (d *reportDialog) Update(msg tea.Msg) (answer.Action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return answer.None, nil
	}
	if key.Matches(k, d.keys.Close) {
		return answer.Later, nil
	}
	if n, ok := d.keys.Delta(k, max(d.h-1, 1)); ok {
		d.top = list.ClampTop(d.top+n, len(d.lines), d.h)
	}
	return answer.None, nil
}

func (d *reportDialog) View() string {
	end := min(d.top+d.h, len(d.lines))
	out := make([]string, 0, d.h)
	for _, l := range d.lines[d.top:end] {
		out = append(out, d.st.Text.Render(textfmt.Fit(l, d.w)))
	}
	return textfmt.Lines(strings.Join(out, "\n"), d.w, d.h)
}
