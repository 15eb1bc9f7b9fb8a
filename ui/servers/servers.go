// Package servers is the server list of `sonde --all` (and of several
// --server): every configured server with its state as the restart policy
// sees it (not started, starting, ready, backing off with the time left,
// quarantined with why, failed), none started until picked. It is its own
// small tea.Model, run as a program between runs of the main UI, as the
// picker is: enter starts the selected server and opens the aggregated
// inspector over all of them (ui.Options.Servers), p starts it now (prewarm), ctrl+r asks for the approval of a
// quarantined one, R shows the failure report of its last failure, t the
// tools of the running servers as server/tool (conflicts flagged; enter on
// one opens its server). It knows only rows of strings and a Source; it does not
// import the manager.
package servers

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Row is one server as the list shows it.
type Row struct {
	Name  string
	Where string // host and scope
	// State is the policy's word: "not started", "starting", "ready",
	// "backing off", "quarantined", "failed", "stopped".
	State    string
	Failures int
	// NextTry is when a server backing off may start again.
	NextTry time.Time
	// Why is the last failure (a quarantine's reason).
	Why string
	// Changed: quarantined under another configuration or binary, so
	// approval can lift it.
	Changed bool
	Pid     int
	Tools   int // tools listed (0: not listed yet)
}

// Source is what the list reads and asks: the rows now, a start, an
// approval. Each is called from a command, never from Update.
type Source interface {
	Rows() []Row
	Prewarm(name string) error
	Approve(name string) error
	// Report is the failure report of the server's last failure, as
	// text ("" when it has none).
	Report(name string) string
	// Tools are the tools of the running servers, as server/tool with
	// their conflicts; it starts no server.
	Tools() ([]ToolRow, error)
}

// Options configure the list.
type Options struct {
	Source Source
	Styles *theme.Styles
	// Note is shown first in the status line (why the list came back).
	Note string
	// Select is the server selected at first (the one just left).
	Select string
	// Now is the clock (tests pass a fixed one).
	Now func() time.Time
}

// KeyMap are the list's bindings.
type KeyMap struct {
	list.KeyMap
	Open, Prewarm, Approve, Report, Tools, Yes, No, Quit key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		KeyMap:  list.DefaultKeyMap(),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "inspect")),
		Prewarm: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "start now")),
		Approve: key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "approve")),
		Report:  key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "failure report")),
		Tools:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "tools")),
		Yes:     key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "approve")),
		No:      key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "keep quarantined")),
		Quit:    key.NewBinding(key.WithKeys("q", "esc", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// Model is the server list.
type Model struct {
	opts     Options
	st       *theme.Styles
	keys     KeyMap
	help     help.Model
	rows     []Row
	sel, top int
	w, h     int
	note     string
	confirm  string // the server whose approval is asked for
	chosen   string
	report   []string // the failure report shown instead of the list
	tools    toolsView
}

// New returns the list; its rows come with the first refresh.
func New(o Options) *Model {
	o.Styles = theme.Or(o.Styles)
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Model{opts: o, st: o.Styles, keys: DefaultKeyMap(), help: help.New(), note: o.Note}
}

// Chosen is the server picked with enter; ok is false when the user quit.
func (m *Model) Chosen() (string, bool) { return m.chosen, m.chosen != "" }

// rowsMsg carries the rows read by a refresh.
type rowsMsg []Row

// reportMsg carries a server's failure report.
type reportMsg struct{ name, text string }

// doneMsg is the outcome of a prewarm or an approval.
type doneMsg struct {
	what, name string
	err        error
}

// refreshEvery is how often the rows are read again (states change
// behind the list: a start, a backoff's countdown).
const refreshEvery = time.Second

func (m *Model) refresh() tea.Cmd {
	src := m.opts.Source
	return func() tea.Msg { return rowsMsg(src.Rows()) }
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(refreshEvery, func(time.Time) tea.Msg { return tickMsg{} })
}

type tickMsg struct{}

// Init reads the rows and starts the refresh tick.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.refresh(), m.tick()) }

// Update handles keys, the rows and the outcomes of commands.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case rowsMsg:
		first := m.rows == nil
		m.rows = msg
		if first {
			for i, r := range m.rows {
				if r.Name == m.opts.Select {
					m.sel = i
				}
			}
		}
		m.sel = list.Clamp(m.sel, len(m.rows))
	case tickMsg:
		return m, tea.Batch(m.refresh(), m.tick())
	case toolsMsg:
		m.tools.rows, m.tools.err = msg.rows, msg.err
		m.tools.sel = list.Clamp(m.tools.sel, len(m.tools.rows))
	case reportMsg:
		if msg.text == "" {
			m.note = msg.name + " has no failure in this run"
			break
		}
		m.report = strings.Split(strings.TrimRight(msg.text, "\n"), "\n")
	case doneMsg:
		switch {
		case msg.err != nil:
			m.note = msg.name + ": " + msg.err.Error()
		case msg.what == "approve":
			m.note = msg.name + " approved: it starts at its next use"
		default:
			m.note = msg.name + " started"
		}
		return m, m.refresh()
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	m.top = list.Scroll(m.top, m.sel, len(m.rows), m.listHeight())
	return m, nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if m.tools.on {
		return m.toolsKey(msg)
	}
	if m.report != nil {
		if msg.String() == "ctrl+c" {
			return tea.Quit
		}
		if key.Matches(msg, k.Report) || key.Matches(msg, k.Quit) {
			m.report = nil // closes the report, not the list
		}
		return nil
	}
	if m.confirm != "" {
		name := m.confirm
		switch {
		case key.Matches(msg, k.Yes):
			m.confirm = ""
			src := m.opts.Source
			return func() tea.Msg { return doneMsg{what: "approve", name: name, err: src.Approve(name)} }
		case key.Matches(msg, k.No):
			m.confirm = ""
			m.note = name + " stays quarantined"
		}
		return nil
	}
	if d, ok := k.Delta(msg, m.listHeight()); ok {
		m.sel = list.Clamp(m.sel+d, len(m.rows))
		m.top = list.Scroll(m.top, m.sel, len(m.rows), m.listHeight())
		return nil
	}
	if key.Matches(msg, k.Tools) {
		m.tools.on = true
		return m.loadTools()
	}
	if len(m.rows) == 0 {
		if key.Matches(msg, k.Quit) {
			return tea.Quit
		}
		return nil
	}
	r := m.rows[m.sel]
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Open):
		m.chosen = r.Name
		return tea.Quit
	case key.Matches(msg, k.Prewarm):
		src, name := m.opts.Source, r.Name
		m.note = "starting " + name + "…"
		return func() tea.Msg { return doneMsg{what: "prewarm", name: name, err: src.Prewarm(name)} }
	case key.Matches(msg, k.Report):
		src, name := m.opts.Source, r.Name
		return func() tea.Msg { return reportMsg{name: name, text: src.Report(name)} }
	case key.Matches(msg, k.Approve):
		if r.State != "quarantined" {
			m.note = r.Name + " is not quarantined"
			return nil
		}
		m.confirm = r.Name
	}
	return nil
}

// fixedRows: title, header, the selected row's detail, the note, help.
const fixedRows = 5

func (m *Model) listHeight() int { return max(m.h-fixedRows, 1) }

// View draws the list on the alternate screen.
func (m *Model) View() tea.View {
	return list.AltView(m.Render(), "sonde: servers")
}

// Render is the list's screen as text of exactly the window's size.
func (m *Model) Render() string {
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	st := m.st
	if m.tools.on {
		return m.renderTools()
	}
	if m.report != nil {
		out := []string{st.Accent.Render(textfmt.Fit("sonde · failure report · R or esc: back to the list", m.w))}
		for _, l := range m.report {
			out = append(out, textfmt.Fit(textfmt.Escape(l), m.w))
		}
		return textfmt.Lines(strings.Join(out, "\n"), m.w, m.h)
	}
	// Running is what the state says: a server that failed or stopped
	// keeps the pid of the process that ended (#33: "1 running" with
	// nothing running).
	started := 0
	for _, r := range m.rows {
		if r.State == "ready" || r.State == "starting" {
			started++
		}
	}
	var out []string
	title := fmt.Sprintf("sonde · %d servers · %d running · each starts when you open it", len(m.rows), started)
	out = append(out, st.Accent.Render(textfmt.Fit(title, m.w)))
	nameW := len("NAME")
	for _, r := range m.rows {
		nameW = max(nameW, len([]rune(textfmt.Escape(r.Name))))
	}
	nameW = min(nameW, max(m.w/4, 8))
	out = append(out, st.Header.Render(textfmt.Fit(fmt.Sprintf("  %-*s  %-26s  %s", nameW, "NAME", "STATE", "FAILURES · HOST"), m.w)))
	page := m.listHeight()
	for i := 0; i < page; i++ {
		j := m.top + i
		if j >= len(m.rows) {
			out = append(out, "")
			continue
		}
		out = append(out, m.row(j, nameW))
	}
	detail := ""
	if m.sel < len(m.rows) {
		r := m.rows[m.sel]
		switch {
		case r.State == "quarantined" && r.Changed:
			detail = "  changed since its quarantine: ctrl+r approves it · " + textfmt.Escape(r.Why)
		case r.Why != "":
			detail = "  last failure: " + textfmt.Escape(r.Why)
		}
	}
	out = append(out, st.Subtle.Render(textfmt.Fit(detail, m.w)))
	note := textfmt.Escape(m.note)
	if m.confirm != "" {
		note = "approve " + textfmt.Escape(m.confirm) + " (its configuration or binary changed)? y/n"
	}
	out = append(out, st.Warn.Render(textfmt.Fit(note, m.w)))
	m.help.SetWidth(m.w)
	k := m.keys
	out = append(out, m.help.ShortHelpView([]key.Binding{k.Open, k.Up, k.Down, k.Prewarm, k.Approve, k.Report, k.Tools, k.Quit}))
	return textfmt.Lines(strings.Join(out, "\n"), m.w, m.h)
}

// row draws row j.
func (m *Model) row(j, nameW int) string {
	st := m.st
	r := m.rows[j]
	state := r.State
	style := st.Subtle
	switch r.State {
	case "ready":
		style = st.OK
		if r.Pid != 0 {
			state += fmt.Sprintf(" (pid %d)", r.Pid)
		}
	case "starting":
		style = st.Info
	case "backing off":
		style = st.Warn
		if left := r.NextTry.Sub(m.opts.Now()); left > 0 {
			state += " " + textfmt.Dur(left.Round(time.Second))
		}
	case "quarantined", "failed":
		style = st.Error
	}
	line := textfmt.Fit(textfmt.Escape(r.Name), nameW) + "  " + style.Render(textfmt.Fit(state, 26)) + "  " +
		st.Subtle.Render(fmt.Sprintf("%d · %s", r.Failures, r.Where))
	return list.Row(st, line, j == m.sel, m.w)
}
