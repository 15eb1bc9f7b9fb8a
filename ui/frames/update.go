package frames

import (
	"sort"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/ui/list"
)

// wheelStep is how many rows one mouse wheel notch scrolls.
const wheelStep = 3

// Update handles key presses, paste, mouse wheel and clicks (coordinates
// relative to the pane's inner top-left). It returns the text input's
// commands while the filter is being typed, and nil otherwise.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	m.syncKeys()
	defer m.syncKeys()
	switch msg := msg.(type) {
	case savedMsg:
		if msg.owner == m {
			m.saved(msg)
		}
	case tea.KeyPressMsg:
		m.note = ""
		if m.mode != modeFilter {
			switch {
			case key.Matches(msg, m.keys.Copy):
				return m.copyCmd()
			case key.Matches(msg, m.keys.Save):
				return m.saveCmd()
			}
		}
		switch m.mode {
		case modeFilter:
			return m.updateFilter(msg)
		case modeDetail:
			m.updateDetail(msg)
			return nil
		}
		return m.updateList(msg)
	case tea.PasteMsg:
		if m.mode == modeFilter {
			var cmd tea.Cmd
			m.input, cmd = m.input.Update(msg)
			m.setQuery(m.input.Value())
			return cmd
		}
	case tea.MouseWheelMsg:
		delta := 0
		switch msg.Button {
		case tea.MouseWheelUp:
			delta = -wheelStep
		case tea.MouseWheelDown:
			delta = wheelStep
		}
		if m.mode == modeDetail {
			m.scrollDetail(delta)
		} else {
			m.scroll(delta)
		}
	case tea.MouseClickMsg:
		if m.mode == modeList && msg.Button == tea.MouseLeft {
			m.click(msg.Y)
		}
	}
	return nil
}

func (m *Model) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	cur := m.indexOf(m.sel)
	if key.Matches(msg, k.End) {
		m.follow = true
		m.settle()
		return nil
	}
	if d, ok := k.Delta(msg, m.listRows()); ok {
		m.moveTo(cur + d)
		return nil
	}
	switch {
	case key.Matches(msg, k.Follow):
		m.follow = !m.follow
		m.settle()
	case key.Matches(msg, k.Filter):
		return m.openFilter()
	case key.Matches(msg, k.Next):
		m.jump(cur, 1)
	case key.Matches(msg, k.Prev):
		m.jump(cur, -1)
	case key.Matches(msg, k.Open):
		m.openDetail()
	case key.Matches(msg, k.Break):
		return m.breakCmd()
	case key.Matches(msg, k.HTTP):
		m.flt.noHTTP = !m.flt.noHTTP
		m.refilter(false)
	case key.Matches(msg, k.Clear):
		m.clearFilter()
	}
	return nil
}

func (m *Model) updateFilter(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Clear):
		m.mode = modeList
		m.input.Blur()
		m.input.SetValue("")
		m.setQuery("")
	case key.Matches(msg, m.keys.Accept):
		m.mode = modeList
		m.input.Blur()
	default:
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		m.setQuery(m.input.Value())
		return cmd
	}
	return nil
}

// count is the number of rows in the list (the matches when filtered).
func (m *Model) count() int {
	if m.flt.active() {
		return len(m.flt.matches)
	}
	return m.ring.len()
}

// absAt is the absolute index of list row i (0 <= i < count()).
func (m *Model) absAt(i int) uint64 {
	if m.flt.active() {
		return m.flt.matches[i]
	}
	return m.ring.oldest() + uint64(i)
}

// indexOf is the list row of frame abs or, when it is not listed, of the
// next listed frame, clamped to the list.
func (m *Model) indexOf(abs uint64) int {
	n := m.count()
	if n == 0 {
		return 0
	}
	var i int
	if m.flt.active() {
		i = sort.Search(n, func(j int) bool { return m.flt.matches[j] >= abs })
	} else if old := m.ring.oldest(); abs > old {
		i = int(min(abs-old, uint64(n)))
	}
	return min(i, n-1)
}

// listRows is the number of frame rows on screen.
func (m *Model) listRows() int {
	rows := m.h - 1
	if m.barShown() {
		rows--
	}
	return max(rows, 0)
}

func (m *Model) barShown() bool { return m.mode == modeFilter || m.flt.active() || m.note != "" }

// moveTo selects row i (clamped). Selecting any row but the newest leaves
// follow mode.
func (m *Model) moveTo(i int) {
	n := m.count()
	if n == 0 {
		return
	}
	i = list.Clamp(i, n)
	if i < n-1 {
		m.follow = false
	}
	m.sel = m.absAt(i)
	m.ensureVisible()
}

// settle selects the newest frame in follow mode and keeps the selection
// on screen.
func (m *Model) settle() {
	if n := m.count(); n > 0 && m.follow {
		m.sel = m.absAt(n - 1)
	}
	m.ensureVisible()
}

// ensureVisible snaps the selection to a listed frame and scrolls so that
// it is on screen, keeping the screen full when the list allows.
func (m *Model) ensureVisible() {
	n, rows := m.count(), m.listRows()
	if n == 0 {
		return
	}
	si := m.indexOf(m.sel)
	m.sel = m.absAt(si)
	m.top = m.absAt(list.Scroll(m.indexOf(m.top), si, n, rows))
}

// scroll moves the view by delta rows, dragging the selection along when
// it would leave the screen. Scrolling up leaves follow mode.
func (m *Model) scroll(delta int) {
	n, rows := m.count(), m.listRows()
	if n == 0 || rows == 0 || delta == 0 {
		return
	}
	ti := list.ClampTop(m.indexOf(m.top)+delta, n, rows)
	m.top = m.absAt(ti)
	si := m.indexOf(m.sel)
	si = max(ti, min(si, ti+rows-1, n-1))
	if si < n-1 {
		m.follow = false
	}
	m.sel = m.absAt(si)
}

// click selects the row at y (row 0 is the header).
func (m *Model) click(y int) {
	row := y - 1
	if row < 0 || row >= m.listRows() {
		return
	}
	if i := m.indexOf(m.top) + row; i < m.count() {
		m.moveTo(i)
	}
}

// jump selects the next (dir 1) or previous (dir -1) problem frame after
// row cur. It does not wrap around.
func (m *Model) jump(cur, dir int) {
	for i := cur + dir; i >= 0 && i < m.count(); i += dir {
		if problem(m.ring.at(m.absAt(i))) {
			m.moveTo(i)
			return
		}
	}
}
