// Package format renders durations, sizes, raw bytes and fixed-width cells
// for the panes: small pure functions, shared so every pane shows the same
// thing the same way.
package textfmt

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Dur renders a duration compactly: 740µs, 12.3ms, 1.204s, 12.5s, 3m4s.
func Dur(d time.Duration) string {
	if d < 0 {
		if d == math.MinInt64 { // -d overflows to itself
			d++
		}
		return "-" + Dur(-d)
	}
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}

// Size renders a byte count: 183B, 2.0KiB, 8.0MiB.
func Size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// Preview renders raw bytes on one line, at most max runes, escaped as by
// Escape; an ellipsis marks a cut.
func Preview(b []byte, max int) string {
	return escape(b, max)
}

// Escape makes text from the wire safe to draw on one line: control
// characters (C0, DEL, C1) and invalid UTF-8 are escaped (\r, \n, \t, \xNN,
// \u00NN), so no byte can act on the terminal and the screen shows exactly
// what was there.
func Escape(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return escape([]byte(s), -1)
		}
	}
	return s
}

// escape is Preview; max < 0 means no limit.
func escape(b []byte, max int) string {
	var sb strings.Builder
	n := 0
	for len(b) > 0 && (max < 0 || n < max) {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&sb, `\x%02x`, b[0])
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
		b = b[size:]
		n++
	}
	if len(b) > 0 {
		sb.WriteString("…")
	}
	return sb.String()
}

// Fit cuts or pads s (which may hold ANSI styling) to exactly width cells.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := lipgloss.Width(s)
	switch {
	case w > width:
		// A cut before a wide character can leave the line a cell short.
		t := ansi.Truncate(s, width, "…")
		return t + strings.Repeat(" ", max(width-lipgloss.Width(t), 0))
	case w < width:
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

// Lines cuts or pads a block to exactly h lines of exactly w cells.
func Lines(s string, w, h int) string {
	if h <= 0 {
		return ""
	}
	in := strings.Split(s, "\n")
	out := make([]string, h)
	for i := range out {
		line := ""
		if i < len(in) {
			line = in[i]
		}
		out[i] = Fit(line, w)
	}
	return strings.Join(out, "\n")
}
