package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// View draws the panes in their rectangles, then the help line and the
// status bar.
func (m *Model) View() tea.View {
	v := tea.NewView(m.content())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "sonde " + m.opts.Command
	if m.rp != nil {
		v.WindowTitle = "sonde replay " + m.rp.tl.Path()
	}
	return v
}

func (m *Model) render() string {
	if m.width == 0 || m.height == 0 {
		return "starting…"
	}
	if len(m.rects) == 0 {
		return textfmt.Lines("sonde needs a larger terminal (at least 20×8)", m.width, m.height)
	}
	if m.showHelp {
		return m.renderHelp()
	}
	var layers []*lipgloss.Layer
	for i, r := range m.rects {
		if m.panes[i] == nil {
			continue
		}
		box := m.frame(i, r)
		layers = append(layers, lipgloss.NewLayer(box).X(r.X).Y(r.Y))
	}
	if d := m.dialogLayer(); d != nil {
		layers = append(layers, d)
	}
	body := lipgloss.NewCanvas(m.width, m.height-2)
	body.Compose(lipgloss.NewCompositor(layers...))
	return body.Render() + "\n" + m.helpLine() + "\n" + m.statusBar()
}

// frame draws pane i inside a rounded border with its title in the top edge.
func (m *Model) frame(i int, r rect) string {
	p := m.panes[i]
	st := m.styles
	edge, titleStyle := st.Border, st.Title
	if i == m.focus {
		edge, titleStyle = st.FocusBorder, st.FocusedTitle
	}
	b := lipgloss.RoundedBorder()
	innerW := max(r.W-2, 0)
	title := fmt.Sprintf(" %d %s ", i+1, p.Title())
	title = textfmt.Fit(titleStyle.Render(title), min(lipgloss.Width(title), max(innerW-2, 0)))
	fill := max(innerW-1-lipgloss.Width(title), 0)
	top := edge.Render(b.TopLeft+b.Top) + title + edge.Render(strings.Repeat(b.Top, fill)+b.TopRight)
	body := strings.Split(textfmt.Lines(p.View(), innerW, max(r.H-2, 0)), "\n")
	lines := make([]string, 0, r.H)
	lines = append(lines, top)
	for _, l := range body {
		lines = append(lines, edge.Render(b.Left)+l+edge.Render(b.Right))
	}
	lines = append(lines, edge.Render(b.BottomLeft+strings.Repeat(b.Bottom, innerW)+b.BottomRight))
	return strings.Join(lines, "\n")
}

func (m *Model) helpLine() string {
	if m.rp != nil && m.rp.asking != promptNone {
		return m.rp.replayPrompt()
	}
	if banner, ok := m.instr.banner(m.styles, m.width, m.lesson != nil); ok && m.dlg == nil {
		return banner
	}
	if n := m.pending.InFlight(); m.confirmQuit && n > 0 {
		q := fmt.Sprintf("%d request%s in flight: q again quits (sonde stops waiting for %s); any other key stays", n, plural(n), pick(n == 1, "it", "them"))
		return textfmt.Fit(m.styles.Warn.Render(q), m.width)
	}
	var bindings []key.Binding
	if m.dlg != nil {
		bindings = m.dlg.Keys().ShortHelp()
		if !m.dlg.Capturing() {
			bindings = append(bindings, m.keys.Help)
		}
		return textfmt.Fit(m.help.ShortHelpView(bindings), m.width)
	}
	p := m.panes[m.focus]
	if m.rp != nil && (p == nil || !p.Capturing()) {
		bindings = append(bindings, m.rp.keys.ShortHelp()...)
	}
	if p != nil {
		bindings = append(bindings, p.Keys().ShortHelp()...)
	}
	// While a pane captures the keyboard, the global keys do not apply.
	switch {
	case p != nil && p.Capturing():
	case m.rp != nil:
		bindings = append(bindings, m.keys.Next, m.keys.Help, m.keys.Quit)
	default:
		bindings = append(bindings, m.keys.ShortHelp()...)
	}
	return textfmt.Fit(m.help.ShortHelpView(bindings), m.width)
}

// renderHelp is the full help screen: the open dialog's keys, or the
// focused pane's, then the global ones.
func (m *Model) renderHelp() string {
	var groups [][]key.Binding
	name := "sonde"
	switch p := m.panes[m.focus]; {
	case m.dlg != nil:
		groups = append(groups, m.dlg.Keys().FullHelp()...)
		name = "the dialog: " + m.dlg.Title()
	case p != nil:
		groups = append(groups, p.Keys().FullHelp()...)
		name = p.Title()
	}
	hm := help.New()
	hm.Styles = m.help.Styles
	hm.SetWidth(m.width)
	var b strings.Builder
	b.WriteString(m.instr.help(m.styles, m.width, m.height))
	b.WriteString(m.styles.Accent.Render("Keys of "+name) + "\n\n")
	b.WriteString(hm.FullHelpView(groups) + "\n\n")
	if m.dlg != nil {
		b.WriteString(m.styles.Subtle.Render("While a dialog is open it has the keyboard: only ctrl+c (quit) is global.") + "\n\n")
		b.WriteString(m.styles.Subtle.Render("? or esc closes this help"))
		return textfmt.Lines(b.String(), m.width, m.height-1) + "\n" + m.statusBar()
	}
	b.WriteString(m.styles.Accent.Render("Everywhere") + "\n\n")
	b.WriteString(hm.FullHelpView(m.keys.FullHelp()) + "\n\n")
	if off := disabledHelp(&m.keys, m.mode); len(off) > 0 {
		b.WriteString(m.styles.Accent.Render("Not here") + "\n\n")
		for _, line := range off {
			b.WriteString(m.styles.Subtle.Render(line) + "\n")
		}
		b.WriteString("\n")
	}
	if m.rp != nil {
		b.WriteString(m.styles.Accent.Render("Replay") + "\n\n")
		b.WriteString(hm.FullHelpView(m.rp.keys.FullHelp()) + "\n\n")
	}
	b.WriteString(m.styles.Subtle.Render("? or esc closes this help"))
	return textfmt.Lines(b.String(), m.width, m.height-1) + "\n" + m.statusBar()
}

// statusBar: server, protocol, transport, pid, pending, calls/s, errors,
// events missed by the UI. When the line is too narrow, the least useful
// parts go first (the protocol version, then the transport word).
func (m *Model) statusBar() string {
	if m.rp != nil {
		return m.rp.replayStatus()
	}
	st := m.styles
	type part = statusPart
	parts := []part{{text: st.Accent.Render("sonde")}}
	switch {
	case m.fl != nil:
		for _, t := range m.fl.status(m.width) {
			parts = append(parts, part{text: t})
		}
	case m.conn.err != nil:
		parts = append(parts, part{text: st.Error.Render(textfmt.Clean(m.conn.err.Error()))}) // it may hold a server's error message
	case m.conn.restarting:
		parts = append(parts, part{text: st.Warn.Render("restarting…")})
	case m.conn.starting:
		parts = append(parts, part{text: st.Subtle.Render("starting…")})
	case m.conn.server.Name != "":
		parts = append(parts, part{text: textfmt.Clean(m.conn.server.Name + " " + m.conn.server.Version)}, part{text: textfmt.Clean(m.conn.protocol), drop: 3})
	}
	if m.fl == nil {
		proc := part{text: m.opts.Transport, drop: 2}
		if m.conn.pid != 0 {
			proc.alt = fmt.Sprintf("pid %d", m.conn.pid)
			proc.text += " " + proc.alt
		}
		parts = append(parts, proc)
	}
	if m.wt != nil {
		parts = append(parts, part{text: m.wt.watchPart()})
	}
	parts = append(parts, m.exp.part(m.styles)...)
	if m.brk != nil {
		parts = append(parts, m.brk.part(m.styles)...)
	}
	if m.lv != nil && m.lv.note != "" {
		parts = append(parts, part{text: st.Warn.Render(textfmt.Clean(m.lv.note))})
	}
	if m.conn.exited != "" {
		parts = append(parts, part{text: st.Error.Render("exited: " + m.conn.exited)})
	}
	if m.answerErr != nil {
		parts = append(parts, part{text: st.Error.Render("not sent: " + m.answerErr.Error())})
	}
	if m.conn.expired {
		parts = append(parts, part{text: st.Error.Render("session expired: ctrl+r starts a new one")})
	}
	parts = append(parts, part{text: fmt.Sprintf("pending %d", m.pending.InFlight())},
		part{text: fmt.Sprintf("%.1f calls/s", m.stats.rate(m.now))})
	errs := fmt.Sprintf("errors %d", m.stats.errors)
	if m.stats.errors > 0 {
		errs = st.Warn.Render(errs)
	}
	parts = append(parts, part{text: errs})
	if m.stats.missed > 0 {
		parts = append(parts, part{text: st.Error.Render(fmt.Sprintf("UI missed %d events", m.stats.missed))})
	}
	// Recording shows second, where it cannot be cut off, and is never
	// dropped: the file's name while recording, the saved file after.
	if text, on := m.rec.part(); on {
		parts = append(parts[:1], append([]part{{text: st.Error.Render(text)}}, parts[1:]...)...)
	} else if text != "" {
		parts = append(parts[:1], append([]part{{text: st.Info.Render(text)}}, parts[1:]...)...)
	}
	return m.fitStatus(parts, 3)
}

// statusPart is one part of a status bar.
type statusPart struct {
	text string
	drop int    // 0: always kept; higher goes first
	alt  string // shown instead of text once dropped, if set
}

// fitStatus joins parts into a status bar of the model's width: all of
// them when they fit, else without those of drop top, then top-1, ... down
// to 1 (a dropped part's alt, if any, stays in its place) until the line
// fits; what is still too wide is cut.
func (m *Model) fitStatus(parts []statusPart, top int) string {
	sep := m.styles.Subtle.Render(" │ ")
	join := func(level int) string {
		var keep []string
		for _, p := range parts {
			switch {
			case p.drop == 0 || p.drop < level:
				keep = append(keep, p.text)
			case p.alt != "":
				keep = append(keep, p.alt)
			}
		}
		return strings.Join(keep, sep)
	}
	line := join(top + 1)
	for level := top; level >= 1 && lipgloss.Width(line) > m.width; level-- {
		line = join(level)
	}
	return textfmt.Fit(line, m.width)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}
