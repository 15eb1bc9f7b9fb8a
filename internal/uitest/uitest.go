// Package uitest helps the UI's tests speak to a model as a person at a
// keyboard would.
package uitest

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// named are the keys Press knows by name.
var named = map[string]tea.KeyPressMsg{
	"enter":     {Code: tea.KeyEnter},
	"esc":       {Code: tea.KeyEscape},
	"tab":       {Code: tea.KeyTab},
	"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
	"space":     {Code: tea.KeySpace, Text: " "},
	"backspace": {Code: tea.KeyBackspace},
	"up":        {Code: tea.KeyUp},
	"down":      {Code: tea.KeyDown},
	"left":      {Code: tea.KeyLeft},
	"right":     {Code: tea.KeyRight},
	"pgup":      {Code: tea.KeyPgUp},
	"pgdown":    {Code: tea.KeyPgDown},
	"home":      {Code: tea.KeyHome},
	"end":       {Code: tea.KeyEnd},
}

// Press is the key press for k: a named key ("enter", "esc", "tab",
// "shift+tab", "space", "backspace", the arrows "up", "down", "left",
// "right", "pgup", "pgdown", "home", "end"), "ctrl+" and a letter, or one
// character typed. Anything else panics: a test asked for a key it cannot
// get.
func Press(k string) tea.KeyPressMsg {
	if m, ok := named[k]; ok {
		return m
	}
	if c, ok := strings.CutPrefix(k, "ctrl+"); ok && len(c) == 1 {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	if r, size := utf8.DecodeRuneInString(k); size == len(k) && size > 0 {
		return tea.KeyPressMsg{Code: r, Text: k}
	}
	panic("uitest: unknown key " + k)
}

// T0 is when the synthetic sessions of the UI's tests start.
var T0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// At is T0 plus ms milliseconds.
func At(ms int) time.Time { return T0.Add(time.Duration(ms) * time.Millisecond) }

// Run runs cmd, and each command of a batch in turn, and returns the
// messages they produced, nil ones left out: nil for a nil cmd.
func Run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, Run(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}

// ScreenSize says how s (a view, styled or not) is not exactly h lines of
// exactly w cells each: nil when it is, else the first difference (the
// line count, or the first line of another width, unstyled).
func ScreenSize(s string, w, h int) error {
	lines := strings.Split(s, "\n")
	if len(lines) != h {
		return fmt.Errorf("%dx%d: %d lines, want %d", w, h, len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			return fmt.Errorf("%dx%d: line %d is %d cells wide, want %d: %q", w, h, i, got, w, ansi.Strip(l))
		}
	}
	return nil
}

// CheckScreen fails t at once unless s is exactly h lines of exactly w
// cells (ScreenSize).
func CheckScreen(t testing.TB, s string, w, h int) {
	t.Helper()
	if err := ScreenSize(s, w, h); err != nil {
		t.Fatal(err)
	}
}

// BenchView measures drawing a view with a thousand and with a million
// items held, in sub-benchmarks named what=1k and what=1M: the cost must
// not grow with the history, since only the visible rows are drawn. setup
// builds the model holding n items and returns the draw to measure.
func BenchView(b *testing.B, what string, setup func(b *testing.B, n int) (draw func())) {
	for _, c := range []struct {
		name string
		n    int
	}{{"1k", 1_000}, {"1M", 1_000_000}} {
		b.Run(what+"="+c.name, func(b *testing.B) {
			draw := setup(b, c.n)
			b.ReportAllocs()
			for b.Loop() {
				draw()
			}
		})
	}
}
