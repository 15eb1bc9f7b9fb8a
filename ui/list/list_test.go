package list

import (
	"slices"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/ui/theme"
)

var press = uitest.Press

func TestDelta(t *testing.T) {
	k := DefaultKeyMap()
	for _, tc := range []struct {
		key string
		d   int
	}{
		{"up", -1}, {"k", -1}, {"down", 1}, {"j", 1}, {"pgup", -7}, {"pgdown", 7},
		{"home", -Far}, {"g", -Far}, {"end", Far}, {"G", Far},
	} {
		if d, ok := k.Delta(press(tc.key), 7); !ok || d != tc.d {
			t.Errorf("%s: Delta = %d, %v; want %d", tc.key, d, ok, tc.d)
		}
	}
	if _, ok := k.Delta(press("x"), 7); ok {
		t.Error("x moved")
	}
	if d, _ := k.Delta(press("pgdown"), 0); d != 1 {
		t.Errorf("a page of 0 rows moved %d", d)
	}
	k.SetEnabled(false)
	if _, ok := k.Delta(press("j"), 7); ok {
		t.Error("a disabled binding moved")
	}
	if n := len(k.Bindings()); n != 6 {
		t.Errorf("%d bindings", n)
	}
}

func TestDefaultHelp(t *testing.T) {
	k := DefaultKeyMap()
	var got []string
	for _, b := range k.Bindings() {
		got = append(got, b.Help().Key+" "+b.Help().Desc)
	}
	want := []string{"↑/k up", "↓/j down", "pgup page up", "pgdn page down", "g/home first", "G/end last"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("binding %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestClamp(t *testing.T) {
	for _, tc := range []struct{ i, n, want int }{
		{-3, 5, 0}, {2, 5, 2}, {9, 5, 4}, {0, 0, 0}, {4, 0, 0}, {-Far, 10, 0}, {Far, 10, 9},
	} {
		if got := Clamp(tc.i, tc.n); got != tc.want {
			t.Errorf("Clamp(%d, %d) = %d, want %d", tc.i, tc.n, got, tc.want)
		}
	}
}

func TestScroll(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		top, sel, n, page, want int
	}{
		{"on screen", 2, 4, 20, 5, 2},
		{"above", 6, 3, 20, 5, 3},
		{"below", 0, 9, 20, 5, 5},
		{"screen kept full", 18, 19, 20, 5, 15},
		{"short list", 3, 1, 3, 5, 0},
		{"no page", 7, 2, 20, 0, 7},
		{"no page past end", 30, 2, 20, 0, 20},
		{"empty", 4, 0, 0, 5, 0},
	} {
		if got := Scroll(tc.top, tc.sel, tc.n, tc.page); got != tc.want {
			t.Errorf("%s: Scroll(%d, %d, %d, %d) = %d, want %d", tc.name, tc.top, tc.sel, tc.n, tc.page, got, tc.want)
		}
	}
}

// TestScrollShowsSel checks the property every pane relies on: after
// Scroll, a clamped selection is on screen and the screen is full when the
// list is long enough.
func TestScrollShowsSel(t *testing.T) {
	for n := range 12 {
		for page := 1; page < 8; page++ {
			for top := -2; top < 14; top++ {
				for sel := -2; sel < 14; sel++ {
					s := Clamp(sel, n)
					got := Scroll(top, s, n, page)
					if n > 0 && (s < got || s >= got+page) {
						t.Fatalf("Scroll(%d, %d, %d, %d) = %d hides the selection", top, s, n, page, got)
					}
					if got < 0 || (n >= page && got+page > n) {
						t.Fatalf("Scroll(%d, %d, %d, %d) = %d leaves the screen part empty", top, s, n, page, got)
					}
				}
			}
		}
	}
}

type names []string

func (n names) String(i int) string { return n[i] }
func (n names) Len() int            { return len(n) }

func TestFuzzy(t *testing.T) {
	src := names{"echo", "fail", "slow-echo"}
	vis, matched := Fuzzy("", src, []int{7, 7, 7, 7}, nil)
	if !slices.Equal(vis, []int{0, 1, 2}) || len(matched) != 3 || matched[0] != nil {
		t.Errorf("empty query: %v %v, want every item in order, no offsets", vis, matched)
	}
	vis, matched = Fuzzy("eho", src, vis, matched)
	if !slices.Equal(vis, []int{0, 2}) || !slices.Equal(matched[0], []int{0, 2, 3}) || !slices.Equal(matched[1], []int{5, 7, 8}) {
		t.Errorf("eho: %v %v, want echo then slow-echo with their offsets", vis, matched)
	}
	if vis, matched = Fuzzy("zzz", src, vis, matched); len(vis) != 0 || len(matched) != 0 {
		t.Errorf("zzz: %v %v", vis, matched)
	}
}

func TestRow(t *testing.T) {
	st := theme.New(theme.NoColor())
	if got := ansi.Strip(Row(st, "echo  says it back", true, 10)); got != "› echo  s…" {
		t.Errorf("selected row %q", got)
	}
	if got := Row(st, "fail", false, 8); got != "  fail  " {
		t.Errorf("row %q", got)
	}
}
