// Package textfmt renders durations, sizes, raw bytes and fixed-width cells
// for the panes: small pure functions, shared so every pane shows the same
// thing the same way. It is also the one door to the terminal for text from
// outside sonde: Sanitize (and Escape, Clean, CleanBlock, Preview) apply one
// policy to control characters and invalid UTF-8.
package textfmt

import (
	"fmt"
	"math"
	"strings"
	"time"

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

// Plural is one when n is 1 and many otherwise ("1 call", "3 calls").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
