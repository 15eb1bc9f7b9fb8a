package features

import (
	"encoding/json"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// View is one of the pane's three views.
type View uint8

// The views, in the order ←/→ cycles them.
const (
	ViewResources View = iota
	ViewPrompts
	ViewLog
	viewCount
)

// change marks an entry of a list that list_changed refreshed.
type change uint8

const (
	unchanged change = iota
	added
	changed
)

// item is one row of the Resources or Prompts view.
type item struct {
	resource *mcp.Resource
	template *mcp.ResourceTemplate
	prompt   *mcp.Prompt
	change   change
}

// key names an item across refreshes.
func (it item) key() string {
	switch {
	case it.resource != nil:
		return "r " + it.resource.URI
	case it.template != nil:
		return "t " + it.template.URITemplate
	}
	return "p " + it.prompt.Name
}

// sig is what must stay the same for an item not to count as changed.
func (it item) sig() string {
	var v any = it.resource
	if it.template != nil {
		v = it.template
	} else if it.prompt != nil {
		v = it.prompt
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// logEntry is one notifications/message.
type logEntry struct {
	at     time.Time
	level  string
	logger string
	data   string
}

// maxLog bounds the log kept.
const maxLog = 5000

// Model is the pane.
type Model struct {
	st       *theme.Styles
	keys     KeyMap
	formKeys form.KeyMap
	w, h     int
	now      time.Time
	view     View

	loaded                   bool
	hasResources, hasPrompts bool
	hasCompletions           bool
	// compl is the last completion shown in the form.
	compl              *CompletionMsg
	listErr            string
	resources, prompts []item
	sel                [viewCount]int
	diff               [2]struct{ added, removed, changed int } // resources, prompts
	stale              bool                                     // a list_changed arrived since the lists were asked for
	refreshing         bool

	subscribed map[string]bool
	updated    map[string]int // notifications/resources/updated per URI

	// The detail under the list: the last read or prompt, and a status line.
	detailTitle string
	detail      []string
	blob        *SaveMsg // contents that w saves
	status      string
	scroll      int

	form       *form.Form
	formTarget item
	busy       bool // a read or get is in flight

	log       ring.Ring[logEntry]
	minLevel  int    // index into mcp.LogLevels
	logger    string // "" for all
	serverLvl string // the level last set on the server
}

// New returns the pane.
func New(st *theme.Styles) *Model {
	return &Model{st: st, keys: DefaultKeyMap(), formKeys: form.DefaultKeyMap(),
		subscribed: map[string]bool{}, updated: map[string]int{}, log: ring.New[logEntry](maxLog)}
}

// SetSize sets the inner size in cells.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	if m.form != nil {
		m.form.SetSize(w, max(h-1, 1))
	}
}

// SetNow sets the clock.
func (m *Model) SetNow(t time.Time) { m.now = t }

// CurrentView returns the view shown.
func (m *Model) CurrentView() View { return m.view }

// Capturing reports whether a form has the keyboard.
func (m *Model) Capturing() bool { return m.form != nil }

// Reset forgets what belongs to the server process (on restart): the
// lists, subscriptions and the level set; the log stays.
func (m *Model) Reset() {
	m.loaded, m.hasResources, m.hasPrompts, m.hasCompletions, m.listErr = false, false, false, false, ""
	m.resources, m.prompts = nil, nil
	m.subscribed, m.updated = map[string]bool{}, map[string]int{}
	m.stale, m.refreshing, m.busy, m.serverLvl = false, false, false, ""
	m.form = nil
	m.syncKeys()
}

// WantsRefresh reports, once, that a list_changed arrived and the lists
// should be asked for again; the root then sends RefreshMsg's work.
func (m *Model) WantsRefresh() bool {
	if !m.stale || m.refreshing || !m.loaded {
		return false
	}
	m.stale, m.refreshing = false, true
	return true
}

// Apply folds client events into the pane: log messages, resource
// updates, and list_changed notifications.
func (m *Model) Apply(evs []client.Event) {
	for i := range evs {
		ev := &evs[i]
		if ev.Kind != client.EvFrame || ev.Frame == nil || ev.Frame.Dir != client.In {
			continue
		}
		msg := ev.Frame.Msg
		switch msg.Method {
		case mcp.MethodLogMessage:
			m.addLog(ev.Time, msg.Params)
		case mcp.MethodResourceUpdated:
			var p mcp.URIParams
			if json.Unmarshal(msg.Params, &p) == nil && p.URI != "" {
				m.updated[p.URI]++
			}
		case mcp.MethodResourcesChanged, mcp.MethodPromptsChanged:
			m.stale = true
		}
	}
}

func (m *Model) addLog(t time.Time, params json.RawMessage) {
	var p mcp.LogMessageParams
	if err := json.Unmarshal(params, &p); err != nil {
		p = mcp.LogMessageParams{Level: "?", Data: params}
	}
	data := string(p.Data)
	var s string
	if json.Unmarshal(p.Data, &s) == nil {
		data = s
	}
	m.log.Push(logEntry{at: t, level: p.Level, logger: p.Logger, data: data})
}

// SetLists replaces the lists, marking what changed since the previous
// ones (nothing is marked on the first lists).
func (m *Model) SetLists(msg ListedMsg) {
	m.refreshing = false
	m.hasResources, m.hasPrompts, m.hasCompletions = msg.HasResources, msg.HasPrompts, msg.HasCompletions
	m.listErr = ""
	if msg.Err != nil {
		m.listErr = msg.Err.Error()
	}
	var res, prm []item
	for i := range msg.Resources {
		res = append(res, item{resource: &msg.Resources[i]})
	}
	for i := range msg.Templates {
		res = append(res, item{template: &msg.Templates[i]})
	}
	for i := range msg.Prompts {
		prm = append(prm, item{prompt: &msg.Prompts[i]})
	}
	if m.loaded {
		m.diff[0].added, m.diff[0].removed, m.diff[0].changed = mark(m.resources, res)
		m.diff[1].added, m.diff[1].removed, m.diff[1].changed = mark(m.prompts, prm)
	}
	m.resources, m.prompts, m.loaded = res, prm, true
	for v := range m.sel[:ViewLog] {
		m.sel[v] = list.Clamp(m.sel[v], len(m.items(View(v))))
	}
	m.syncKeys()
}

// mark sets the change of each new item against old, and counts added,
// removed and changed items.
func mark(old, cur []item) (a, r, c int) {
	before := map[string]string{}
	for _, it := range old {
		before[it.key()] = it.sig()
	}
	for i := range cur {
		sig, ok := before[cur[i].key()]
		switch {
		case !ok:
			cur[i].change = added
			a++
		case sig != cur[i].sig():
			cur[i].change = changed
			c++
		}
		delete(before, cur[i].key())
	}
	return a, len(before), c
}

// items returns the rows of view v.
func (m *Model) items(v View) []item {
	switch v {
	case ViewResources:
		return m.resources
	case ViewPrompts:
		return m.prompts
	}
	return nil
}

// selected returns the selected row of the current view.
func (m *Model) selected() *item {
	its := m.items(m.view)
	if s := m.sel[m.view]; s >= 0 && s < len(its) {
		return &its[s]
	}
	return nil
}

// visibleLog returns the log entries that pass the filters.
func (m *Model) visibleLog() []logEntry {
	var out []logEntry
	for _, e := range m.log.All() {
		if r := mcp.LogLevelRank(e.level); r >= 0 && r < m.minLevel {
			continue
		}
		if m.logger != "" && e.logger != m.logger {
			continue
		}
		out = append(out, e)
	}
	return out
}

// loggers returns the loggers seen, in the order they first appeared.
func (m *Model) loggers() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range m.log.All() {
		if e.logger != "" && !seen[e.logger] {
			seen[e.logger] = true
			out = append(out, e.logger)
		}
	}
	return out
}
