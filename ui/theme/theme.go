// Package theme builds every style of the TUI from a small semantic palette.
// It is a leaf: panes receive a *Styles and never define colours of their
// own, and nothing here is package-level mutable state.
package theme

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Palette is the handful of semantic colours everything is drawn with. A
// nil colour means "the terminal's default".
type Palette struct {
	Text, Subtle, Accent, OK, Warn, Error, Info color.Color
	Border, FocusBorder, SelectionBg            color.Color
}

// Dark is the palette for dark terminals.
func Dark() Palette {
	return Palette{
		Text: lipgloss.Color("#E4E4E7"), Subtle: lipgloss.Color("#8B8B96"), Accent: lipgloss.Color("#7AA2F7"),
		OK: lipgloss.Color("#9ECE6A"), Warn: lipgloss.Color("#E0AF68"), Error: lipgloss.Color("#F7768E"), Info: lipgloss.Color("#7DCFFF"),
		Border: lipgloss.Color("#3B3B46"), FocusBorder: lipgloss.Color("#7AA2F7"), SelectionBg: lipgloss.Color("#2A3350"),
	}
}

// Light is the palette for light terminals.
func Light() Palette {
	return Palette{
		Text: lipgloss.Color("#1F2328"), Subtle: lipgloss.Color("#6E7781"), Accent: lipgloss.Color("#0550AE"),
		OK: lipgloss.Color("#1A7F37"), Warn: lipgloss.Color("#9A6700"), Error: lipgloss.Color("#CF222E"), Info: lipgloss.Color("#0969DA"),
		Border: lipgloss.Color("#D0D7DE"), FocusBorder: lipgloss.Color("#0550AE"), SelectionBg: lipgloss.Color("#DDF4FF"),
	}
}

// NoColor is the palette used when NO_COLOR is set (and in golden tests):
// no colours at all; emphasis comes from bold, faint and reverse only.
func NoColor() Palette { return Palette{} }

// Styles are the styles of every pane, derived once from a Palette.
type Styles struct {
	Palette Palette
	// Plain text, de-emphasised text, and the accent.
	Text, Subtle, Accent lipgloss.Style
	// OK, Warn, Error and Info colour outcomes and notices.
	OK, Warn, Error, Info lipgloss.Style
	// Title is a pane title; FocusedTitle the title of the focused pane.
	Title, FocusedTitle lipgloss.Style
	// Border and FocusBorder draw the pane frames (the focused pane's is
	// bold in NoColor).
	Border, FocusBorder lipgloss.Style
	// Selected marks the selected row; Match a fuzzy-matched character.
	Selected, Match lipgloss.Style
	// Header is a table header row; Key and KeyHelp draw help entries.
	Header, Key, KeyHelp lipgloss.Style
	// JSON syntax colours.
	JSONKey, JSONString, JSONNumber, JSONBool, JSONNull, JSONPunct lipgloss.Style
	// StatusBar is the bottom line.
	StatusBar lipgloss.Style
}

// Or is st, or, when it is nil, the styles of no colour (what a list
// program draws with when its caller gives none).
func Or(st *Styles) *Styles {
	if st == nil {
		return New(NoColor())
	}
	return st
}

// New derives the styles from p.
func New(p Palette) *Styles {
	fg := func(c color.Color) lipgloss.Style {
		s := lipgloss.NewStyle()
		if c != nil {
			s = s.Foreground(c)
		}
		return s
	}
	noColor := p.Text == nil
	selected := lipgloss.NewStyle().Reverse(true)
	match := lipgloss.NewStyle().Underline(true).Bold(true)
	if !noColor {
		selected = lipgloss.NewStyle().Background(p.SelectionBg).Bold(true)
		match = fg(p.Accent).Bold(true).Underline(true)
	}
	return &Styles{
		Palette: p,
		Text:    fg(p.Text), Subtle: fg(p.Subtle).Faint(noColor), Accent: fg(p.Accent).Bold(true),
		OK: fg(p.OK), Warn: fg(p.Warn).Bold(noColor), Error: fg(p.Error).Bold(true), Info: fg(p.Info),
		Title: fg(p.Subtle).Bold(true), FocusedTitle: fg(p.Accent).Bold(true).Underline(noColor),
		Border: fg(p.Border), FocusBorder: fg(p.FocusBorder).Bold(noColor),
		Selected: selected, Match: match,
		Header: fg(p.Subtle).Bold(true), Key: fg(p.Accent).Bold(true), KeyHelp: fg(p.Subtle),
		JSONKey: fg(p.Accent), JSONString: fg(p.OK), JSONNumber: fg(p.Warn), JSONBool: fg(p.Info),
		JSONNull: fg(p.Subtle), JSONPunct: fg(p.Subtle),
		StatusBar: fg(p.Text),
	}
}

// State returns the style of a request state or frame verdict (the strings
// of client.State and client.Verdict): green for success, red for failure,
// yellow for what needs attention, accent for in-flight.
func (s *Styles) State(name string) lipgloss.Style {
	switch name {
	case "resolved", "answered", "sent", "ok":
		return s.OK
	case "error", "timeout", "exited", "protocol", "malformed", "invalid", "too-long", "rejected", "failed":
		return s.Error
	case "late", "duplicate", "unknown", "cancelled", "closed", "busy":
		return s.Warn
	case "queued", "progress", "received", "server-request", "retried", "held":
		return s.Accent
	case "notification":
		return s.Info
	}
	return s.Subtle
}
