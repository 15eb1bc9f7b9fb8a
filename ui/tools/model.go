package tools

import (
	"encoding/json"
	"fmt"
	"time"

	"charm.land/bubbles/v2/textinput"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// DefaultResults is how many results are kept when Options.Results is 0.
const DefaultResults = 20

// Options configure the pane.
type Options struct {
	// Results is how many call results are kept for "[" and "]"
	// (DefaultResults when 0); older ones are evicted and counted.
	Results int
	// Keys replaces DefaultKeyMap when set.
	Keys *KeyMap
	// CallTarget are the arguments of `sonde call` that reach this
	// session's server ("--" and its command line, or --url URL …): Y
	// copies a call as a sonde call command line with them (CallLine).
	// Nil: Y says there is none.
	CallTarget []string
}

type mode uint8

const (
	modeList   mode = iota // the tool list has the keys
	modeFilter             // the filter input has the keys
	modeForm               // the argument form has the keys
	modeResult             // a result is shown
)

// entry is one listed tool with its schema read once.
type entry struct {
	tool   mcp.Tool
	schema form.Schema
	warn   string // a Row's Warn
	start  string // a Row's Start: the row stands for a server not started
}

// Row is one row of the list when the pane shows several servers' tools
// (SetRows).
type Row struct {
	// Tool is the tool, its Name namespaced ("server/tool"): a call of it
	// comes back as a CallMsg with that name.
	Tool mcp.Tool
	// Warn is shown beside the name and in the detail ("conflict: also in
	// b").
	Warn string
	// Start, when set, makes the row stand for the tools of server Start,
	// which has not started: enter asks the root to start it (StartMsg)
	// instead of opening a form.
	Start string
}

// StartMsg asks the root to start Server: the row standing for its tools
// was picked.
type StartMsg struct{ Server string }

// result is one kept call outcome.
type result struct {
	ResultMsg
	at time.Time // the root's clock when it arrived
	n  int       // 1 for the first result since the pane was made
}

// Model is the Tools pane.
type Model struct {
	st   *theme.Styles
	keys KeyMap
	// formKeys are the form's bindings as configured; keys.Form is their
	// copy with the current enabled state.
	formKeys form.KeyMap
	w, h     int
	now      time.Time
	// listedAsOf is when the current tool list was requested.
	listedAsOf time.Time
	mode       mode
	back       mode // where the form returns to

	loaded bool // SetTools was called
	// unavailable says why no tool list will come (the server did not
	// start, exited, or the handshake failed) until a restart.
	unavailable, unavailWhat string
	tools                    []entry
	changed                  bool     // notifications/tools/list_changed seen since SetTools
	diff                     toolDiff // what the last list changed against the one before

	filter  textinput.Model
	query   string
	visible []int   // indices into tools, in match order
	matched [][]int // byte offsets of matched characters per visible row
	sel     int     // index into visible
	runs    int     // how many times the filter ran (for tests)
	top     int     // first list row shown

	calling map[string]int // calls in flight per tool
	// failed holds the tools whose last call failed (an error, or a
	// result with isError); a tool leaves it when a call succeeds.
	failed   map[string]bool
	inFlight int
	form     *form.Form
	lastArgs map[string]json.RawMessage

	results ring.Ring[*result] // at most Options.Results
	cur     int                // index into results shown
	scroll  int
	raw     bool    // the result view shows the raw JSON (Raw key)
	csps    appCSPs // the CSP of each ui:// resource read (apps.go)
	cache   bodyCache

	callTarget []string // Options.CallTarget
	// note says what the last key did (Y: what was copied), until the
	// next key.
	note string
}

// New returns the pane.
func New(st *theme.Styles, opts Options) *Model {
	if opts.Results <= 0 {
		opts.Results = DefaultResults
	}
	m := &Model{st: st, keys: DefaultKeyMap(), results: ring.New[*result](opts.Results),
		calling: map[string]int{}, failed: map[string]bool{}, lastArgs: map[string]json.RawMessage{}, csps: appCSPs{},
		callTarget: opts.CallTarget}
	if opts.Keys != nil {
		m.keys = *opts.Keys
	}
	m.formKeys = m.keys.Form
	m.filter = textinput.New()
	m.filter.Prompt = "/ "
	m.filter.Placeholder = "filter tools"
	m.filter.SetStyles(form.InputStyles(st))
	return m
}

// SetSize sets the inner size of the pane in cells.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = max(w, 0), max(h, 0)
	if m.form != nil {
		m.form.SetSize(m.w, m.h)
	}
}

// SetNow sets the root's clock (used for the age of results).
func (m *Model) SetNow(t time.Time) { m.now = t }

// Nested reports whether a view below the list is open (a result, the
// form), where the root's q does nothing and esc goes back.
func (m *Model) Nested() bool { return m.mode == modeResult || m.mode == modeForm }

// ClockText is the part of the view that changes with the clock alone (the
// age of the result shown), "" when there is none: the root redraws on a
// tick only when it changed.
func (m *Model) ClockText() string {
	if r := m.current(); m.mode == modeResult && r != nil {
		return m.age(r)
	}
	return ""
}

// SetTools replaces the tool list (after tools/list, and again after a
// restart). It clears the "list changed" hint, re-runs the filter and keeps
// the selected tool when it is still listed.
func (m *Model) SetTools(tools []mcp.Tool) { m.SetToolsAsOf(tools, time.Time{}) }

// SetUnavailable says that no tool list will come: what happened (a
// sentence) and why (the error), shown instead of the wait with the key
// that restarts the server; a why of "" clears it, and so does Reset.
func (m *Model) SetUnavailable(what, why string) { m.unavailWhat, m.unavailable = what, why }

// SetToolsAsOf is SetTools for a list that was requested at asOf: a
// notifications/tools/list_changed received before then is already
// reflected in it, even when its event is applied after the list arrives
// (events and results travel separately), so it sets no hint.
func (m *Model) SetToolsAsOf(tools []mcp.Tool, asOf time.Time) {
	rows := make([]Row, len(tools))
	for i, t := range tools {
		rows[i] = Row{Tool: t}
	}
	m.setRows(rows, asOf)
}

// SetRows is SetToolsAsOf for the tools of several servers: rows with
// namespaced names, their warnings, and rows standing for servers not
// started. Their changes are not marked (servers come and go).
func (m *Model) SetRows(rows []Row, asOf time.Time) {
	m.setRows(rows, asOf)
	m.diff = toolDiff{}
}

// toolCount is the number of tools listed (not the rows that stand for a
// server's).
func (m *Model) toolCount() int {
	n := 0
	for i := range m.tools {
		if m.tools[i].start == "" {
			n++
		}
	}
	return n
}

func (m *Model) setRows(rows []Row, asOf time.Time) {
	m.listedAsOf = asOf
	prev := m.selectedName()
	old := m.tools
	m.tools = make([]entry, len(rows))
	for i, r := range rows {
		m.tools[i] = entry{tool: r.Tool, schema: form.Parse(r.Tool.InputSchema), warn: r.Warn, start: r.Start}
	}
	if m.loaded {
		m.diff = diffTools(old, m.tools)
	}
	m.loaded, m.changed = true, false
	m.refilterKeeping(prev)
}

// Apply folds client events into the pane: an incoming
// notifications/tools/list_changed sets the "list changed (r to refresh)"
// hint, and a resources/read result of a ui:// resource gives its CSP to
// the detail of the MCP Apps tools (apps.go).
func (m *Model) Apply(evs []client.Event) {
	for i := range evs {
		f := evs[i].Frame
		if evs[i].Kind == client.EvFrame {
			m.csps.fold(f)
		}
		if evs[i].Kind == client.EvFrame && f != nil && f.Dir == client.In &&
			f.Msg.Kind == jsonrpc.KindNotification && f.Msg.Method == mcp.MethodToolsChanged &&
			(m.listedAsOf.IsZero() || f.Time.After(m.listedAsOf)) {
			m.changed = true
		}
	}
}

// Reset forgets per-process state after a server restart: the in-flight
// counts and the "list changed" hint. It keeps the tool list (until the
// root's SetTools), the filter, the kept results, the arguments last sent to
// each tool, and an open form, so nothing typed is lost.
func (m *Model) Reset() {
	m.unavailable = ""
	clear(m.calling)
	m.inFlight = 0
	m.changed = false
}

// Capturing reports whether a text input has the keyboard (the filter or
// the form).
func (m *Model) Capturing() bool { return m.mode == modeFilter || m.mode == modeForm }

// Title returns "Tools N" with the filter, the calls in flight and the
// "list changed" hint.
func (m *Model) Title() string {
	t := fmt.Sprintf("Tools %d", m.toolCount())
	if m.query != "" {
		t += " · filter: " + textfmt.Clean(m.query)
	}
	if m.inFlight > 0 {
		t += fmt.Sprintf(" · %d calling", m.inFlight)
	}
	if m.changed {
		t += " · list changed"
	}
	return t + m.diff.text()
}

// selected returns the selected tool, or nil.
func (m *Model) selected() *entry {
	if m.sel < 0 || m.sel >= len(m.visible) {
		return nil
	}
	return &m.tools[m.visible[m.sel]]
}

// current returns the result shown, or nil.
func (m *Model) current() *result {
	if m.cur < 0 || m.cur >= m.results.Len() {
		return nil
	}
	return *m.results.At(m.cur)
}

// addResult keeps a result, settles its in-flight count and shows it
// (unless a form is open: the form keeps the keyboard).
func (m *Model) addResult(msg ResultMsg) {
	if n := m.calling[msg.Tool]; n > 0 {
		if n == 1 {
			delete(m.calling, msg.Tool)
		} else {
			m.calling[msg.Tool] = n - 1
		}
		m.inFlight--
	}
	if msg.Err != nil || (msg.Result != nil && msg.Result.IsError) {
		m.failed[msg.Tool] = true
	} else {
		delete(m.failed, msg.Tool)
	}
	m.results.Push(&result{ResultMsg: msg, at: m.now, n: int(m.results.Total()) + 1})
	m.cur, m.scroll = m.results.Len()-1, 0
	switch m.mode {
	case modeForm:
		m.back = modeResult
	case modeFilter:
		m.filter.Blur()
		m.mode = modeResult
	default:
		m.mode = modeResult
	}
}
