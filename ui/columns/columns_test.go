package columns

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
)

func TestWidths(t *testing.T) {
	cols := []Col{
		{Min: 3, Want: 3, Prio: 0},               // id
		{Min: 10, Want: 20, Prio: 1},             // method
		{Min: 8, Want: 8, Prio: 3},               // size
		{Min: 12, Want: 12, Prio: 2, Grow: true}, // detail
		{},                                       // never shown
	}
	for _, tc := range []struct {
		w    int
		want []int
	}{
		{2, []int{0, 0, 0, 0, 0}},
		{3, []int{3, 0, 0, 0, 0}},
		{13, []int{3, 0, 0, 0, 0}}, // 3+1+10 > 13: the method is dropped whole, and the size after it
		{14, []int{3, 10, 0, 0, 0}},
		{27, []int{3, 10, 0, 12, 0}},
		{36, []int{3, 10, 8, 12, 0}},
		{46, []int{3, 20, 8, 12, 0}},
		{60, []int{3, 20, 8, 26, 0}},
	} {
		got := Widths(tc.w, cols)
		if strings.Join(itoas(got), ",") != strings.Join(itoas(tc.want), ",") {
			t.Errorf("Widths(%d) = %v, want %v", tc.w, got, tc.want)
		}
	}
}

// TestWidthsProperty: at every width, the shown columns and their gaps fit,
// each shown column is at least its minimum, and a column is dropped only
// when it did not fit beside the more important ones.
func TestWidthsProperty(t *testing.T) {
	cols := []Col{{Min: 2, Want: 2, Prio: 0}, {Min: 16, Want: 40, Prio: 1}, {Min: 9, Want: 9, Prio: 2},
		{Min: 7, Want: 7, Prio: 3}, {Min: 12, Want: 12, Prio: 5, Grow: true}, {Min: 7, Want: 7, Prio: 4}}
	for w := 0; w <= 240; w++ {
		ws := Widths(w, cols)
		used, shown := 0, 0
		for i, x := range ws {
			if x == 0 {
				continue
			}
			if x < cols[i].Min {
				t.Fatalf("w %d: column %d is %d, below its minimum %d", w, i, x, cols[i].Min)
			}
			used += x
			shown++
		}
		if shown > 1 {
			used += shown - 1
		}
		if used > w {
			t.Fatalf("w %d: %v uses %d cells", w, ws, used)
		}
	}
}

// TestCuts checks Cut and CutMethod: the result, and that it fits.
func TestCuts(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(string, int) string
		s    string
		w    int
		want string
	}{
		{"Cut", Cut, "resolved id 10 after 3ms", 40, "resolved id 10 after 3ms"},
		{"Cut", Cut, "resolved id 10 after 3ms", 13, "resolved id…"},
		{"Cut", Cut, "id 10 after 3ms", 4, "id…"},
		{"Cut", Cut, "progress 1/4 for id 6", 14, "progress 1/4 …"},
		{"Cut", Cut, "progress 1/4 for id 6", 13, "progress…"},
		{"Cut", Cut, "1234567", 4, ""},
		{"Cut", Cut, "MCP_TIMEOUT: tools/call", 8, "MCP_TIM…"},
		{"Cut", Cut, "anything", 0, ""},
		{"CutMethod", CutMethod, "tools/list", 10, "tools/list"},
		{"CutMethod", CutMethod, "notifications/progress", 14, "noti…/progress"},
		{"CutMethod", CutMethod, "notifications/initialized", 14, "n…/initialized"},
		{"CutMethod", CutMethod, "notifications/initialized", 13, "…/initialized"},
		{"CutMethod", CutMethod, "notifications/initialized", 8, "notific…"},
		{"CutMethod", CutMethod, "initialize", 6, "initi…"},
	} {
		got := tc.cut(tc.s, tc.w)
		if got != tc.want || lipgloss.Width(got) > max(tc.w, 0) {
			t.Errorf("%s(%q, %d) = %q, want %q", tc.name, tc.s, tc.w, got, tc.want)
		}
	}
}

// FuzzCut: the result fits, is a prefix of the text (plus an ellipsis), and
// never ends inside a run of digits.
func FuzzCut(f *testing.F) {
	f.Add("resolved id 10 after 3ms", 12)
	f.Add("tools/call 12345", 14)
	f.Fuzz(func(t *testing.T, s string, w int) {
		w = w % 300
		got := Cut(s, w)
		if lipgloss.Width(got) > max(w, 0) {
			t.Fatalf("Cut(%q, %d) = %q is too wide", s, w, got)
		}
		if got == s || got == "" || !utf8.ValidString(s) {
			return
		}
		if strings.HasSuffix(got, " …") {
			if b := strings.TrimSuffix(got, " …"); strings.TrimSpace(b) != "" && !unicode.IsDigit(lastRune(b)) {
				t.Fatalf("Cut(%q, %d) = %q: a space before the ellipsis but no number", s, w, got)
			}
			got = strings.TrimSuffix(got, " …") + "…"
		} else if r, _ := utf8.DecodeLastRuneInString(strings.TrimSuffix(got, "…")); unicode.IsDigit(r) && strings.HasSuffix(got, "…") {
			t.Fatalf("Cut(%q, %d) = %q reads as a cut number", s, w, got)
		}
		body, ok := strings.CutSuffix(got, "…")
		if !ok || !strings.HasPrefix(s, body) {
			t.Fatalf("Cut(%q, %d) = %q is not a prefix with an ellipsis", s, w, got)
		}
		rest := []rune(s[len(body):])
		if body != "" && len(rest) > 0 {
			last := []rune(body)[len([]rune(body))-1]
			if unicode.IsDigit(last) && unicode.IsDigit(rest[0]) {
				t.Fatalf("Cut(%q, %d) = %q cuts a number", s, w, got)
			}
		}
	})
}

func itoas(xs []int) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(rune('0'+x/10)) + string(rune('0'+x%10))
	}
	return out
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}
