// Package picker is the server picker sonde shows when it is started with
// no server: a fuzzy-filtered list of the servers found in the MCP hosts'
// config files, with the problems found below it. It is its own small
// tea.Model, run as a program before the main UI; the caller reads the
// choice with Chosen once the program has ended.
package picker

import (
	"slices"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Item is one server of the list.
type Item struct {
	Name     string // the server's name in its file
	Where    string // host and scope, e.g. "VS Code · project"
	What     string // its command line or URL
	Source   string // where it is written: its file (shown for the selected row)
	Disabled bool   // turned off in its host
	// Approval is, for a Claude Code project server, whether Claude Code
	// uses it; it is shown before the command line, and in words after
	// the source of the selected row.
	Approval Approval
	// Session, when set, makes the row a live session of sonde tap (its
	// id), listed above the servers: Name is its label, Where says it is
	// live, What is its server; enter opens it in the watch inspector. It
	// cannot be marked with the servers.
	Session string
}

// Approval is whether Claude Code uses a project server (.mcp.json).
type Approval int

// The approvals of an item.
const (
	// NoApproval: not a Claude Code project server.
	NoApproval Approval = iota
	// Approved: enabled in Claude Code's settings.
	Approved
	// Rejected: disabled in Claude Code's settings; the row is dimmed, as
	// a disabled one.
	Rejected
	// Pending: in none of Claude Code's lists: not yet approved.
	Pending
)

// marker is the approval's mark before the command line.
func (a Approval) marker() string {
	switch a {
	case Approved:
		return "(enabled)"
	case Rejected:
		return "(disabled)"
	case Pending:
		return "(not approved)"
	}
	return ""
}

// words is the approval in words, after the selected row's source.
func (a Approval) words() string {
	switch a {
	case Approved:
		return "enabled in Claude Code"
	case Rejected:
		return "disabled in Claude Code (sonde starts it anyway)"
	case Pending:
		return "not yet approved in Claude Code (sonde starts it anyway)"
	}
	return ""
}

// Options configure a picker.
type Options struct {
	Items []Item
	// Problems are shown below the list, one line each.
	Problems []string
	// Files is how many config files were read (for the title).
	Files  int
	Styles *theme.Styles
	// Selected is the index in Items the cursor starts on (the server
	// whose start just failed, when the picker comes back); 0 is the first.
	Selected int
}

// Model is the picker.
type Model struct {
	opts Options
	st   *theme.Styles
	keys KeyMap
	help help.Model

	filtering bool
	query     string
	visible   []int   // indexes into opts.Items, in display order
	matched   [][]int // per visible row, the matched byte offsets of its name
	sel, top  int

	w, h   int
	chosen int          // index into opts.Items, or -1
	marked map[int]bool // items marked with space, by index into opts.Items
	many   []int        // the marked items, when enter opened them together
}

// New returns a picker over o.Items with nothing chosen.
func New(o Options) *Model {
	o.Styles = theme.Or(o.Styles)
	m := &Model{opts: o, st: o.Styles, keys: DefaultKeyMap(), help: help.New(), chosen: -1}
	m.refilter()
	for i, item := range m.visible {
		if item == o.Selected {
			m.sel = i
		}
	}
	return m
}

// Chosen returns the index in Options.Items of the server picked with
// enter; ok is false when the user quit, or chose several (ChosenMany).
func (m *Model) Chosen() (int, bool) { return m.chosen, m.chosen >= 0 }

// ChosenMany returns the indexes in Options.Items of the servers marked
// with space when enter opened them together (in the list's order); nil
// when one server was picked or the user quit.
func (m *Model) ChosenMany() []int { return m.many }

// Query returns the filter's text.
func (m *Model) Query() string { return m.query }

// Visible returns the indexes of the items shown, in order, and the
// position of the selected one among them.
func (m *Model) Visible() ([]int, int) { return m.visible, m.sel }

// Init asks for nothing.
func (m *Model) Init() tea.Cmd { return nil }

// source adapts the items to fuzzy.Source: a server matches on its name,
// then its host and scope (a command line is too long to filter on: most
// short queries would match it).
type source []Item

func (s source) String(i int) string { return s[i].Name + " " + s[i].Where }

func (s source) Len() int { return len(s) }

// refilter recomputes the visible rows for the query; it is called only
// when the query changes. The selection goes back to the first row.
func (m *Model) refilter() {
	m.visible, m.matched = list.Fuzzy(m.query, source(m.opts.Items), m.visible, m.matched)
	for r, offs := range m.matched {
		// Only the name is highlighted: offsets past it are in the rest
		// of what source matches on.
		name := m.opts.Items[m.visible[r]].Name
		m.matched[r] = slices.DeleteFunc(offs, func(off int) bool { return off >= len(name) })
	}
	m.sel, m.top = 0, 0
}

// Update handles keys and the window size.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case tea.KeyPressMsg:
		cmd = m.key(msg)
	case tea.PasteMsg:
		if m.filtering {
			m.setQuery(m.query + list.SingleLine(msg.Content))
		}
	}
	m.scroll()
	return m, cmd
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	m.syncKeys()
	k := &m.keys
	switch {
	case key.Matches(msg, k.Quit), key.Matches(msg, k.QuitList):
		return tea.Quit
	case key.Matches(msg, k.Start):
		if len(m.marked) > 0 {
			for i := range m.opts.Items {
				if m.marked[i] {
					m.many = append(m.many, i)
				}
			}
			return tea.Quit
		}
		if len(m.visible) > 0 {
			m.chosen = m.visible[m.sel]
			return tea.Quit
		}
	case key.Matches(msg, k.Mark):
		if len(m.visible) > 0 && m.opts.Items[m.visible[m.sel]].Session == "" {
			i := m.visible[m.sel]
			if m.marked == nil {
				m.marked = map[int]bool{}
			}
			if m.marked[i] {
				delete(m.marked, i)
			} else {
				m.marked[i] = true
			}
		}
	case key.Matches(msg, k.Filter):
		m.filtering = true
	case key.Matches(msg, k.ClearFilter):
		m.filtering = false
		m.setQuery("")
	case m.moveKey(msg):
	case m.filtering:
		if q, ok := list.TypeKey(m.query, msg); ok {
			m.setQuery(q)
		}
	}
	return nil
}

// setQuery changes the query and re-runs the filter if it changed.
func (m *Model) setQuery(q string) {
	if q == m.query {
		return
	}
	m.query = q
	m.refilter()
}

// moveKey moves the selection for a movement key; it reports whether msg
// was one.
func (m *Model) moveKey(msg tea.KeyPressMsg) bool {
	d, ok := m.keys.Delta(msg, m.listHeight()-1)
	if ok && len(m.visible) > 0 {
		m.sel = list.Clamp(m.sel+d, len(m.visible))
	}
	return ok
}
