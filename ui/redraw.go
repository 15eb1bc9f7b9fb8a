package ui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/hold"
)

// The clock ticks four times a second, but the screen is drawn again only
// when something on it changed: any message other than a tick marks it
// stale; a tick does only when what it shows depends on the clock and
// changed (ages and countdowns of live requests, the calls/s figure, the
// age of the tool result shown). An idle UI draws nothing.

// ticked moves the clock to t and re-arms the tick.
func (m *Model) ticked(t time.Time) tea.Cmd {
	before := m.clockText()
	m.now = t
	for _, p := range m.panes {
		if p != nil {
			p.SetNow(m.now)
		}
	}
	if m.pending.Ticking() || m.clockText() != before || (m.focus == paneTimeline && m.timeline.Ticking()) {
		m.stale = true
	}
	if m.brk != nil && len(m.brk.st.Held) > 0 {
		m.stale = true // the countdowns
	}
	if b := m.brk; b != nil && b.src.Changed() == nil && t.Sub(b.polled) >= breaksPoll {
		b.polled = t
		return tea.Batch(tick(), breaksCmd(b.src, hold.MethodList, nil, "", ""))
	}
	return tick()
}

// clockText is what the screen shows that changes with the clock alone,
// besides the Pending pane's live rows.
func (m *Model) clockText() string {
	return fmt.Sprintf("%.1f|%s", m.stats.rate(m.now), m.tools.ClockText())
}

// content returns the screen, drawn again only when it is stale.
func (m *Model) content() string {
	if m.stale || m.renders == 0 {
		m.drawn = m.render()
		m.stale = false
		m.renders++
	}
	return m.drawn
}
