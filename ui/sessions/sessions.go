// Package sessions is the session list of `sonde watch`: every session
// sonde tap recorded in the sessions folder, live ones first (the newest
// first), with its label, server, host (who it says it is, else its
// process), start, state and counts (calls, errors, late, unknown and
// duplicate answers), fuzzy-filtered with /, and read again every second
// while it is open (a new session appears, one that ends says so). It is its own small tea.Model, run as
// a program between runs of the main UI, as the server list is: enter
// opens the selected session, live in the usual panes or, once ended, as
// a replay. It knows only rows of strings and a Source.
package sessions

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Row is one session as the list shows it.
type Row struct {
	// ID is the recording's name without .jsonl: what enter hands back.
	ID     string
	Label  string
	Server string // the server's command line or URL
	// Client is who the host says it is, with the protocol the session
	// speaks ("claude-code 2.1.197 · 2025-11-25"); "" before its first
	// request.
	Client string
	// Host is the process that launched the tap, when it can be known
	// ("claude (pid 4242)", "pid 4242"); "" otherwise.
	Host    string
	Started time.Time
	Live    bool
	// Ended is when a session that is not live last changed; Cut says its
	// recording has no clean end (the tap was killed).
	Ended time.Time
	Cut   bool
	// Calls are the host's requests, Errors those answered with an error;
	// Late, Unknown and Duplicate count the answers of those verdicts.
	Calls, Errors, Late, Unknown, Duplicate int
	// Problem says why the file cannot be read as a capture.
	Problem string
}

// Source reads the rows; it is called from a command, never from Update.
type Source interface {
	Rows() ([]Row, error)
}

// Options configure the list.
type Options struct {
	Source Source
	Styles *theme.Styles
	// Note is shown first in the status line (why the list came back).
	Note string
	// Select is the session selected at first (the one just left).
	Select string
	// Now is the clock (tests pass a fixed one).
	Now func() time.Time
	// Where names the sessions folder in the empty list's message.
	Where string
}

// KeyMap are the list's bindings; those of the other mode (list or
// filter) are disabled, so the help line shows what applies now.
type KeyMap struct {
	list.KeyMap
	Open, Filter, ClearFilter, QuitList, Quit key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	nav := list.DefaultKeyMap()
	nav.Typing(false)
	return KeyMap{
		KeyMap:      nav,
		Open:        key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		QuitList:    key.NewBinding(key.WithKeys("q", "esc"), key.WithHelp("q", "quit")),
		Quit:        key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

// Model is the session list.
type Model struct {
	opts      Options
	st        *theme.Styles
	keys      KeyMap
	help      help.Model
	rows      []Row
	loaded    bool
	err       error
	query     string
	filtering bool
	visible   []int // indexes into rows, in order
	sel, top  int
	hostW     int // the HOST column's width (hostWidth)
	w, h      int
	note      string
	chosen    string
}

// New returns the list; its rows come with the first read.
func New(o Options) *Model {
	o.Styles = theme.Or(o.Styles)
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Model{opts: o, st: o.Styles, keys: DefaultKeyMap(), help: help.New(), note: o.Note}
}

// Chosen is the id of the session opened with enter; ok is false when the
// user quit.
func (m *Model) Chosen() (string, bool) { return m.chosen, m.chosen != "" }

// Query is the filter's text.
func (m *Model) Query() string { return m.query }

// Visible returns the ids of the sessions shown, in order, and the
// position of the selected one.
func (m *Model) Visible() ([]string, int) {
	ids := make([]string, len(m.visible))
	for i, j := range m.visible {
		ids[i] = m.rows[j].ID
	}
	return ids, m.sel
}

// rowsMsg carries the rows of a read.
type rowsMsg struct {
	rows []Row
	err  error
}

type tickMsg struct{}

// RefreshEvery is how often the rows are read again.
const RefreshEvery = time.Second

func (m *Model) refresh() tea.Cmd {
	src := m.opts.Source
	return func() tea.Msg {
		rows, err := src.Rows()
		return rowsMsg{rows, err}
	}
}

func tick() tea.Cmd {
	return tea.Tick(RefreshEvery, func(time.Time) tea.Msg { return tickMsg{} })
}

// Init reads the rows and starts the refresh tick.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.refresh(), tick()) }

// Update handles keys, the rows and the tick.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case rowsMsg:
		m.setRows(msg.rows, msg.err)
	case tickMsg:
		cmd = tea.Batch(m.refresh(), tick())
	case tea.KeyPressMsg:
		cmd = m.key(msg)
	case tea.PasteMsg:
		if m.filtering {
			m.setQuery(m.query + list.SingleLine(msg.Content))
		}
	}
	m.top = list.Scroll(m.top, m.sel, len(m.visible), m.listHeight())
	return m, cmd
}

// setRows takes a read, keeping the selected session selected.
func (m *Model) setRows(rows []Row, err error) {
	keep := m.opts.Select
	if m.loaded && m.sel < len(m.visible) {
		keep = m.rows[m.visible[m.sel]].ID
	}
	m.rows, m.err, m.loaded = rows, err, true
	m.hostW = hostWidth(rows)
	m.refilter()
	for i, j := range m.visible {
		if m.rows[j].ID == keep {
			m.sel = i
		}
	}
}

// source adapts the rows to fuzzy.Source: a session matches on its label,
// server, host and id.
type source []Row

func (s source) String(i int) string {
	return s[i].Label + " " + s[i].Server + " " + s[i].Client + " " + s[i].Host + " " + s[i].ID
}

func (s source) Len() int { return len(s) }

// refilter recomputes the visible rows; the selection goes to the first.
func (m *Model) refilter() {
	m.visible, _ = list.Fuzzy(m.query, source(m.rows), m.visible, nil)
	m.sel, m.top = 0, 0
}

func (m *Model) setQuery(q string) {
	if q != m.query {
		m.query = q
		m.refilter()
	}
}

func (m *Model) syncKeys() {
	k := &m.keys
	k.Typing(m.filtering)
	for _, b := range []*key.Binding{&k.Filter, &k.QuitList} {
		b.SetEnabled(!m.filtering)
	}
	k.ClearFilter.SetEnabled(m.filtering)
	k.Open.SetEnabled(len(m.visible) > 0)
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	m.syncKeys()
	k := &m.keys
	switch {
	case key.Matches(msg, k.Quit), key.Matches(msg, k.QuitList):
		return tea.Quit
	case key.Matches(msg, k.Open):
		m.chosen = m.rows[m.visible[m.sel]].ID
		return tea.Quit
	case key.Matches(msg, k.Filter):
		m.filtering = true
	case key.Matches(msg, k.ClearFilter):
		m.filtering = false
		m.setQuery("")
	default:
		if d, ok := k.Delta(msg, m.listHeight()); ok {
			m.sel = list.Clamp(m.sel+d, len(m.visible))
			return nil
		}
		if q, ok := list.TypeKey(m.query, msg); ok && m.filtering {
			m.setQuery(q)
		}
	}
	return nil
}

// listHeight is the rows left for the sessions around five others: title,
// header, the selected row's detail, the filter or note, help.
func (m *Model) listHeight() int { return max(m.h-5, 1) }

// View draws the list on the alternate screen.
func (m *Model) View() tea.View {
	return list.AltView(m.Render(), "sonde: watch")
}

// Render is the list's screen, exactly the window's size.
func (m *Model) Render() string { return list.Screen(m.w, m.h, m.lines) }

// lines are the list's screen, line by line.
func (m *Model) lines() []string {
	st := m.st
	live := 0
	for _, r := range m.rows {
		if r.Live {
			live++
		}
	}
	title := fmt.Sprintf("sonde watch · %d %s · %d live", len(m.rows), textfmt.Plural(len(m.rows), "session", "sessions"), live)
	out := []string{st.Accent.Render(textfmt.Fit(title, m.w))}
	out = append(out, st.Header.Render(textfmt.Fit(fmt.Sprintf("  %-16s  %-22s  %-*s  %-14s  %s", "LABEL", "STATE", m.hostW, "HOST", "STARTED", "CALLS ERR LATE UNK DUP  SERVER"), m.w)))
	page := m.listHeight()
	var body []string
	switch {
	case m.err != nil:
		body = append(body, st.Error.Render(textfmt.Fit("  the sessions folder: "+textfmt.Escape(m.err.Error()), m.w)))
	case m.loaded && len(m.rows) == 0:
		body = append(body, st.Subtle.Render(textfmt.Fit("  no sessions yet in "+textfmt.Escape(m.opts.Where)+": a host records one when it runs sonde tap (sonde wrap sets that up); this list follows", m.w)))
	case m.loaded && len(m.visible) == 0:
		body = append(body, st.Subtle.Render(textfmt.Fit("  no session matches the filter", m.w)))
	}
	for j := m.top; j < len(m.visible) && len(body) < page; j++ {
		body = append(body, m.row(j))
	}
	for len(body) < page {
		body = append(body, "")
	}
	out = append(out, body...)
	detail := ""
	if m.sel < len(m.visible) {
		r := m.rows[m.visible[m.sel]]
		detail = "  " + textfmt.Escape(r.ID)
		for _, s := range []string{r.Client, r.Host, r.Server} {
			if s != "" {
				detail += " · " + textfmt.Escape(s)
			}
		}
		if r.Problem != "" {
			detail += " · " + textfmt.Escape(r.Problem)
		}
	}
	out = append(out, st.Subtle.Render(textfmt.Fit(detail, m.w)))
	switch {
	case m.filtering || m.query != "":
		out = append(out, textfmt.Fit("/ "+textfmt.Escape(m.query)+pick(m.filtering, "▏", ""), m.w))
	default:
		out = append(out, st.Warn.Render(textfmt.Fit(textfmt.Escape(m.note), m.w)))
	}
	m.syncKeys()
	m.help.SetWidth(m.w)
	k := m.keys
	out = append(out, m.help.ShortHelpView([]key.Binding{k.Open, k.Up, k.Down, k.Filter, k.ClearFilter, k.QuitList}))
	return out
}

// maxHostWidth bounds the HOST column: a client's name, version and
// protocol ("claude-code 2.1.197 · 2025-11-25").
const maxHostWidth = 32

// hostWidth is the HOST column's width for rows: its longest text, within
// 4 and maxHostWidth.
func hostWidth(rows []Row) int {
	w := len("HOST")
	for _, r := range rows {
		w = max(w, lipgloss.Width(textfmt.Escape(hostText(r))))
	}
	return min(w, maxHostWidth)
}

// hostText is who the host is once it said so; until then, its process.
func hostText(r Row) string {
	if r.Client != "" {
		return r.Client
	}
	return r.Host
}

// row draws visible row j.
func (m *Model) row(j int) string {
	st := m.st
	r := m.rows[m.visible[j]]
	state, style := "live", st.OK
	if !r.Live {
		state, style = "ended", st.Subtle
		if !r.Ended.IsZero() {
			state += " " + textfmt.Dur(m.opts.Now().Sub(r.Ended).Round(time.Second)) + " ago"
		}
		if r.Cut {
			state += " (cut)"
		}
	}
	started := "?"
	if !r.Started.IsZero() {
		started = r.Started.Local().Format("01-02 15:04:05")
	}
	server := r.Server
	if r.Problem != "" {
		server = "(" + r.Problem + ")"
	}
	counts := fmt.Sprintf("%5d %3d %4d %3d %3d", r.Calls, r.Errors, r.Late, r.Unknown, r.Duplicate)
	if r.Errors+r.Late+r.Unknown+r.Duplicate > 0 {
		counts = st.Warn.Render(counts)
	}
	line := textfmt.Fit(textfmt.Escape(r.Label), 16) + "  " + style.Render(textfmt.Fit(state, 22)) + "  " +
		textfmt.Fit(textfmt.Escape(hostText(r)), m.hostW) + "  " + textfmt.Fit(started, 14) + "  " + counts + "  " +
		st.Subtle.Render(textfmt.Escape(server))
	return list.Row(st, line, j == m.sel, m.w)
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}
