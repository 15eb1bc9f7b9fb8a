package tools

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/list"
)

// Update handles keys, paste and mouse messages while the pane is focused,
// and ResultMsg whatever the focus.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	m.syncKeys()
	defer m.syncKeys()
	switch msg := msg.(type) {
	case ResultMsg:
		m.addResult(msg)
	case tea.KeyPressMsg:
		m.note = ""
		if key.Matches(msg, m.keys.CopyCall) {
			return m.copyCall()
		}
		switch m.mode {
		case modeForm:
			return m.formUpdate(msg)
		case modeFilter:
			return m.filterKey(msg)
		case modeResult:
			return m.resultKey(msg)
		}
		return m.listKey(msg)
	case tea.PasteMsg:
		switch m.mode {
		case modeForm:
			return m.formUpdate(msg)
		case modeFilter:
			return m.filterInput(msg)
		}
	case tea.MouseWheelMsg:
		return m.wheel(msg)
	case tea.MouseClickMsg:
		return m.click(msg)
	}
	return nil
}

// move moves the list selection (list and filter modes) or scrolls the
// result view, for the movement bindings; it reports whether msg was one.
func (m *Model) move(msg tea.KeyPressMsg) bool {
	page := max(m.listHeight()-1, 1)
	if m.mode == modeResult {
		page = max(m.bodyHeight()-1, 1)
	}
	d, ok := m.keys.Delta(msg, page)
	if !ok {
		return false
	}
	if m.mode == modeResult {
		m.scrollBy(d)
	} else {
		m.sel = list.Clamp(m.sel+d, len(m.visible))
	}
	return true
}

func (m *Model) listKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case m.move(msg):
	case key.Matches(msg, k.Filter):
		m.mode = modeFilter
		return m.filter.Focus()
	case key.Matches(msg, k.ClearFilter):
		m.filter.SetValue("")
		m.setQuery("")
	case key.Matches(msg, k.Call):
		if e := m.selected(); e != nil {
			return m.pick(e)
		}
	case key.Matches(msg, k.Refresh):
		return refresh
	case key.Matches(msg, k.Older), key.Matches(msg, k.Newer):
		m.mode, m.cur, m.scroll = modeResult, m.results.Len()-1, 0
	}
	// Any other key does nothing here: a filter starts with / only, so
	// the first letter of a name is never taken by a key of the list (g)
	// or a global one (q, z, the digits).
	return nil
}

func refresh() tea.Msg { return RefreshMsg{} }

// filterKey: every printable key edits the query (so "g", "j", "q" and the
// digits are typed, not bound); enter keeps the query and returns to the
// list, esc clears it, arrows move the selection.
func (m *Model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if msg.Text == "" {
		switch {
		case key.Matches(msg, k.AcceptFilter):
			m.filter.Blur()
			m.mode = modeList
			return nil
		case key.Matches(msg, k.ClearFilter):
			m.filter.Blur()
			m.filter.SetValue("")
			m.setQuery("")
			m.mode = modeList
			return nil
		case m.move(msg):
			return nil
		}
	}
	return m.filterInput(msg)
}

func (m *Model) filterInput(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	m.setQuery(m.filter.Value())
	return cmd
}

func (m *Model) resultKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case m.move(msg):
	case key.Matches(msg, k.Back):
		m.mode = modeList
	case key.Matches(msg, k.Raw):
		m.raw, m.scroll = !m.raw, 0
	case key.Matches(msg, k.Older):
		m.cur, m.scroll = max(m.cur-1, 0), 0
	case key.Matches(msg, k.Newer):
		m.cur, m.scroll = min(m.cur+1, m.results.Len()-1), 0
	case key.Matches(msg, k.Call):
		if r := m.current(); r != nil {
			m.openForm(r.Tool)
		}
	case key.Matches(msg, k.Refresh):
		return refresh
	}
	return nil
}

// pick is enter on a row: the tool's form, or the start of the server a
// row stands for.
func (m *Model) pick(e *entry) tea.Cmd {
	if srv := e.start; srv != "" {
		return func() tea.Msg { return StartMsg{Server: srv} }
	}
	m.openForm(e.tool.Name)
	return nil
}

// openForm opens the argument form of the named tool, pre-filled with the
// arguments last sent to it.
func (m *Model) openForm(name string) {
	var t *entry
	for i := range m.tools {
		if m.tools[i].tool.Name == name {
			t = &m.tools[i]
			break
		}
	}
	if t == nil {
		return
	}
	m.form = form.New(m.st, m.formKeys, t.tool, m.lastArgs[name])
	m.form.SetSize(m.w, m.h)
	m.back, m.mode = m.mode, modeForm
}

func (m *Model) formUpdate(msg tea.Msg) tea.Cmd {
	act, cmd := m.form.Update(msg)
	switch act {
	case form.Cancel:
		m.form, m.mode = nil, m.back
	case form.Submit:
		name, args := m.form.Tool(), m.form.Args()
		m.form, m.mode = nil, m.back
		m.lastArgs[name] = args
		m.calling[name]++
		m.inFlight++
		return tea.Batch(cmd, func() tea.Msg { return CallMsg{Tool: name, Args: args} })
	}
	return cmd
}

func (m *Model) wheel(msg tea.MouseWheelMsg) tea.Cmd {
	d := 0
	switch msg.Button {
	case tea.MouseWheelUp:
		d = -3
	case tea.MouseWheelDown:
		d = 3
	}
	switch m.mode {
	case modeForm:
		_, cmd := m.form.Update(msg)
		return cmd
	case modeResult:
		m.scrollBy(d)
	default:
		m.sel = list.Clamp(m.sel+d/3, len(m.visible))
	}
	return nil
}

// click selects the list row under the pointer (or the form field).
func (m *Model) click(msg tea.MouseClickMsg) tea.Cmd {
	if m.mode == modeForm {
		_, cmd := m.form.Update(msg)
		return cmd
	}
	if m.mode == modeResult || msg.Button != tea.MouseLeft {
		return nil
	}
	l := m.layout()
	row := msg.Y - l.listY
	if msg.X >= l.listW || row < 0 || row >= l.listH {
		return nil
	}
	if i := m.top + row; i < len(m.visible) {
		m.sel = i
	}
	return nil
}
