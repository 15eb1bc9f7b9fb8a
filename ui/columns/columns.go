// Package columns decides which columns of a pane's table are shown at a
// given width, and how wide each is. Columns have a priority and a minimum
// width: the most important columns are placed first, each at its minimum,
// while they fit; a column that does not fit at its minimum is dropped
// whole, never cut to a misleading prefix, and so is every column after it
// (a less important column never shows where a more important one could
// not). What room is left goes to the
// shown columns up to what they want, most important first, then to the
// least important shown column that grows.
//
// Cut cuts text that must be shortened at a word boundary, so a cell never
// ends in part of a number or an id.
package columns

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
)

// Col describes one column.
type Col struct {
	// Min is the fewest cells the column is shown in (0: never shown).
	Min int
	// Want is what the column takes when there is room (at least Min).
	Want int
	// Prio orders the columns: lower is placed first and dropped last.
	Prio int
	// Fill orders the columns for the room beyond their minimums: lower
	// first, ties by Prio (so a column can be dropped late but widened
	// late too).
	Fill int
	// Grow marks a column that takes what is left once every shown column
	// has what it wants: the least important shown one that grows.
	Grow bool
}

// Widths returns each column's width at a total width of w, with one cell
// between shown columns: 0 for a column that is dropped. The shown widths
// plus their gaps never exceed w.
func Widths(w int, cols []Col) []int {
	out := make([]int, len(cols))
	order := byPrio(cols)
	used, shown := 0, 0
	for _, i := range order {
		c := cols[i]
		if c.Min <= 0 {
			continue
		}
		gap := 0
		if shown > 0 {
			gap = 1
		}
		if used+gap+c.Min > w {
			break // dropped whole, and every less important column with it
		}
		out[i] = c.Min
		used += gap + c.Min
		shown++
	}
	fill := slices.Clone(order)
	slices.SortStableFunc(fill, func(a, b int) int { return cols[a].Fill - cols[b].Fill })
	for _, i := range fill {
		if out[i] == 0 {
			continue
		}
		add := min(max(cols[i].Want-out[i], 0), w-used)
		out[i] += add
		used += add
	}
	for j := len(order) - 1; j >= 0; j-- {
		if i := order[j]; out[i] > 0 && cols[i].Grow {
			out[i] += w - used
			break
		}
	}
	return out
}

// Width is the width of plain text s in cells: its length when it is
// ASCII (the usual case, measured without grapheme segmentation).
func Width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return lipgloss.Width(s)
		}
	}
	return len(s)
}

// byPrio returns the column indices by priority, stable.
func byPrio(cols []Col) []int {
	order := make([]int, len(cols))
	for i := range order {
		order[i] = i
	}
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && cols[order[j]].Prio < cols[order[j-1]].Prio; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	return order
}

// Cut shortens plain text s (sanitized: textfmt.Escape) to at most w cells. Text that fits is returned
// as it is; otherwise it is cut after the last whole word that fits with an
// ellipsis, so that a number or an id is shown whole or not at all (a whole
// number before the ellipsis is followed by a space: "1/4 …", never "1/4…"). A first
// word longer than w is cut inside only when it holds no digit; otherwise
// the result is empty.
func Cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD") // measured as it is drawn
	cells, lastSpace := 0, -1
	for i, r := range s {
		rw := lipgloss.Width(string(r))
		if cells+rw > w-1 {
			if r == ' ' {
				lastSpace = i
			}
			break
		}
		if r == ' ' {
			lastSpace = i
		}
		cells += rw
	}
	for lastSpace > 0 {
		body := strings.TrimRight(s[:lastSpace], " ")
		r, _ := utf8.DecodeLastRuneInString(body)
		if !unicode.IsDigit(r) {
			return body + "…"
		}
		// A whole number before the ellipsis keeps a space, so that it
		// does not read as cut.
		if lipgloss.Width(body)+2 <= w {
			return body + " …"
		}
		lastSpace = strings.LastIndexByte(body, ' ')
	}
	first := s[lastSpace+1:] // the word cut (lastSpace is 0 or -1 here)
	if sp := strings.IndexByte(first, ' '); sp >= 0 {
		first = first[:sp]
	}
	if strings.IndexFunc(first, unicode.IsDigit) >= 0 {
		return ""
	}
	cells, end := 0, 0
	for i, r := range s {
		rw := lipgloss.Width(string(r))
		if cells+rw > w-1 {
			break
		}
		cells += rw
		end = i + utf8.RuneLen(r)
	}
	return s[:end] + "…"
}

// CutMethod shortens a method name to at most w cells keeping its last
// segment, which tells methods apart: "notifications/progress" becomes
// "…/progress" rather than "notifications…". A name without a slash, or
// whose last segment does not fit either, is cut like Cut.
func CutMethod(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 && lipgloss.Width(s[i:])+1 <= w {
		tail := s[i:]
		head := s[:i]
		for head != "" && lipgloss.Width(head)+lipgloss.Width(tail)+1 > w {
			_, size := utf8.DecodeLastRuneInString(head)
			head = head[:len(head)-size]
		}
		return head + "…" + tail
	}
	return Cut(s, w)
}
