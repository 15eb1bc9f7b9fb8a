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
func (r *replayState) replayStatus() string {
	st := r.m.styles
	h := r.tl.Header()
	type part = statusPart
	parts := []part{{text: st.Accent.Render("sonde replay")}}
	if r.note != "" {
		parts = append(parts, part{text: st.Warn.Render(r.note)})
	}
	parts = append(parts, r.m.exp.part(st)...)
	state := "⏸ paused"
	if r.playing {
		state = "▶ playing"
	}
	if r.loading {
		state += "…"
	}
	parts = append(parts,
		part{text: fmt.Sprintf("%s %s", state, speedText(r.speed))},
		part{text: fmt.Sprintf("+%s / %s", textfmt.Dur(r.now), textfmt.Dur(r.tl.End()))},
		part{text: fmt.Sprintf("event %s/%s", commas(r.pos), commas(r.tl.Len()))},
	)
	for _, w := range r.warnings {
		parts = append(parts, part{text: st.Error.Render("⚠ " + w)})
	}
	parts = append(parts, part{text: fmt.Sprintf("pending %d", r.m.pending.InFlight()), drop: 1})
	if s := r.session; s.ServerName != "" {
		parts = append(parts, part{text: strings.TrimSpace(s.ServerName + " " + s.ServerVersion), drop: 2},
			part{text: s.ProtocolVersion, drop: 4})
	}
	parts = append(parts, part{text: h.Transport, drop: 3})
	if h.Sonde != "" {
		parts = append(parts, part{text: "recorded by sonde " + h.Sonde, drop: 5})
	}
	return r.m.fitStatus(parts, 5)
}

// replayPrompt is the prompt line shown instead of the help line.
func (r *replayState) replayPrompt() string {
	return textfmt.Fit(r.prompt.View()+r.m.styles.Subtle.Render("  enter jumps · esc closes"), r.m.width)
}

// commas formats n with thousands separators.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
