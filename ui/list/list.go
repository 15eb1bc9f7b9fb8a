// Package list holds what the panes' lists and scrolled views share: the
// six bindings that move through them (KeyMap) and the arithmetic of a
// selection kept on screen (Clamp, ClampTop, Scroll).
//
// A pane embeds or copies KeyMap into its own key map, changes the help
// text or keys where its list differs (SetHelp, SetKeys), and turns the
// bindings into a move with Delta.
package list

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Far is the move of Home and End: further than any list is long, so the
// clamped result is the first or the last row.
const Far = 1 << 30

// KeyMap holds the six movement bindings.
type KeyMap struct {
	// Up and Down move by one row.
	Up, Down key.Binding
	// PageUp and PageDown move by one page.
	PageUp, PageDown key.Binding
	// Home and End go to the first and the last row.
	Home, End key.Binding
}

// Bind is a binding of keys with its help: the key as shown and what it
// does.
func Bind(help, desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

// DefaultKeyMap returns the bindings with their usual keys and help:
// ↑/k up, ↓/j down, pgup page up, pgdn page down, g/home first, G/end last.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Home:     key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		End:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
	}
}

// WithEnds returns k with what Home and End do in its help (their keys'
// help stays "g/home" and "G/end").
func (k KeyMap) WithEnds(home, end string) KeyMap {
	k.Home.SetHelp("g/home", home)
	k.End.SetHelp("G/end", end)
	return k
}

// Bindings returns the six bindings in help order: Up, Down, PageUp,
// PageDown, Home, End.
func (k KeyMap) Bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}
}

// SetEnabled enables or disables the six bindings.
func (k *KeyMap) SetEnabled(on bool) {
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Home, &k.End} {
		b.SetEnabled(on)
	}
}

// Delta returns the move msg asks for, in rows, with pages of page rows
// (at least one): -1 or 1, -page or page, -Far or Far. ok is false when msg
// matches none of the (enabled) bindings.
func (k KeyMap) Delta(msg tea.KeyPressMsg, page int) (d int, ok bool) {
	page = max(page, 1)
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.PageUp):
		return -page, true
	case key.Matches(msg, k.PageDown):
		return page, true
	case key.Matches(msg, k.Home):
		return -Far, true
	case key.Matches(msg, k.End):
		return Far, true
	}
	return 0, false
}

// Clamp returns row i kept within a list of n rows: 0 to n-1, and 0 when
// the list is empty.
func Clamp(i, n int) int { return max(min(i, n-1), 0) }

// ClampTop returns top, the first row on a screen of page rows, kept so
// that the screen shows no row past the end of n rows when the list is long
// enough to fill it: 0 to n-page.
func ClampTop(top, n, page int) int { return max(min(top, n-page), 0) }

// Scroll returns the first row on screen that shows row sel of n rows on a
// screen of page rows: top moved as little as possible, then clamped by
// ClampTop. With page < 1 it only clamps.
func Scroll(top, sel, n, page int) int {
	if page > 0 {
		if sel < top {
			top = sel
		}
		if sel >= top+page {
			top = sel - page + 1
		}
	}
	return ClampTop(top, n, page)
}
