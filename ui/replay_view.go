package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// speedText is "1x", "0.25x" or "instant".
func speedText(i int) string {
	if speedOf(i) == 0 {
		return "instant"
	}
	return strconv.FormatFloat(speedOf(i), 'f', -1, 64) + "x"
}

// replayStatus is the status bar of a replay: the capture (server, transport,
// the sonde that recorded it), the cursor (time, event n of N), playback,
// pending, and what the capture lacks. Parts drop from the right end of
// their priority when the line is too narrow.
func (m *Model) replayStatus() string {
	rp, st := m.rp, m.styles
	h := rp.tl.Header()
	type part = statusPart
	parts := []part{{text: st.Accent.Render("sonde replay")}}
	if rp.note != "" {
		parts = append(parts, part{text: st.Warn.Render(rp.note)})
	}
	state := "⏸ paused"
	if rp.playing {
		state = "▶ playing"
	}
	if rp.loading {
		state += "…"
	}
	parts = append(parts,
		part{text: fmt.Sprintf("%s %s", state, speedText(rp.speed))},
		part{text: fmt.Sprintf("+%s / %s", textfmt.Dur(rp.now), textfmt.Dur(rp.tl.End()))},
		part{text: fmt.Sprintf("event %s/%s", commas(rp.pos), commas(rp.tl.Len()))},
	)
	for _, w := range rp.warnings {
		parts = append(parts, part{text: st.Error.Render("⚠ " + w)})
	}
	parts = append(parts, part{text: fmt.Sprintf("pending %d", m.pending.InFlight()), drop: 1})
	if s := rp.session; s.ServerName != "" {
		parts = append(parts, part{text: strings.TrimSpace(s.ServerName + " " + s.ServerVersion), drop: 2},
			part{text: s.ProtocolVersion, drop: 4})
	}
	parts = append(parts, part{text: h.Transport, drop: 3})
	if h.Sonde != "" {
		parts = append(parts, part{text: "recorded by sonde " + h.Sonde, drop: 5})
	}
	return m.fitStatus(parts, 5)
}

// replayPrompt is the prompt line shown instead of the help line.
func (m *Model) replayPrompt() string {
	return textfmt.Fit(m.rp.prompt.View()+m.styles.Subtle.Render("  enter jumps · esc closes"), m.width)
}

// commas formats n with thousands separators.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
