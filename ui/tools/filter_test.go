package tools

import (
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/sahilm/fuzzy"
)

func TestFilterLive(t *testing.T) {
	m := newModel(t, 78, 20)
	if m.Capturing() {
		t.Fatal("capturing before /")
	}
	m.Update(press('/'))
	if !m.Capturing() {
		t.Fatal("/ did not focus the filter")
	}
	typeText(m, "ech")
	if got := visibleNames(m); !reflect.DeepEqual(got, []string{"echo"}) {
		t.Errorf("ech leaves %v", got)
	}
	if got := m.Title(); got != "Tools 9 · filter: ech" {
		t.Errorf("title %q", got)
	}
	if v := view(t, m); !strings.Contains(v, "/ ech") || !strings.Contains(v, "› echo") {
		t.Errorf("view:\n%s", v)
	}
	m.Update(keyEsc)
	if m.Capturing() || m.query != "" || len(m.visible) != 9 {
		t.Errorf("esc: capturing %v query %q visible %d", m.Capturing(), m.query, len(m.visible))
	}
}

func TestFilterKeepsQueryAndTypesBoundLetters(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(press('/'))
	for _, r := range "rj" { // bound keys in the list, letters in the filter
		if msgs := run(m.Update(press(r))); len(msgs) != 0 {
			t.Fatalf("%q produced %v", r, msgs)
		}
	}
	if m.query != "rj" {
		t.Fatalf("query %q", m.query)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	m.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	typeText(m, "o")
	m.Update(keyDown)
	sel := m.selected().tool.Name
	m.Update(keyEnter) // keep the query, back in the list
	if m.mode != modeList || m.Capturing() || m.query != "o" || m.selected().tool.Name != sel {
		t.Errorf("enter: mode %v query %q selected %q", m.mode, m.query, m.selected().tool.Name)
	}
	m.Update(keyEnter) // in the list: the selected tool's form
	if m.mode != modeForm || m.form == nil || m.form.Tool() != sel {
		t.Fatalf("enter in the filtered list: mode %v", m.mode)
	}
	m.Update(keyEsc) // cancels the form: back to the list, the query kept
	if m.Capturing() || m.query != "o" {
		t.Errorf("esc in the form: capturing %v query %q", m.Capturing(), m.query)
	}
	m.Update(keyEsc) // esc in the list clears the kept query
	if m.query != "" {
		t.Errorf("esc in the list kept %q", m.query)
	}
}

func TestFilterRunsOnlyWhenQueryChanges(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(press('/'))
	typeText(m, "e")
	runs := m.runs
	m.Update(tea.KeyPressMsg{Code: tea.KeyLeft}) // moves the cursor, same query
	m.Update(tea.KeyPressMsg{Code: tea.KeyRight})
	m.View()
	if m.runs != runs {
		t.Errorf("filter re-ran %d times without a query change", m.runs-runs)
	}
	typeText(m, "c")
	if m.runs != runs+1 {
		t.Errorf("filter ran %d times for one change", m.runs-runs)
	}
}

func TestHighlightByCell(t *testing.T) {
	base := lipgloss.NewStyle()
	match := lipgloss.NewStyle().Transform(func(s string) string { return "[" + s + "]" })
	tests := []struct{ name, query, want string }{
		{"greet (structured)", "(st", "greet [(st]ructured)"},
		{"héllo wörld", "wö", "héllo [wö]rld"},
		{"héllo wörld", "hél", "[hél]lo wörld"},
		{"a\x1bb", "b", `a\x1b[b]`},
	}
	for _, tt := range tests {
		ms := fuzzy.Find(tt.query, []string{tt.name})
		if len(ms) != 1 {
			t.Fatalf("%q does not match %q", tt.query, tt.name)
		}
		if got := highlight(tt.name, ms[0].MatchedIndexes, base, match); got != tt.want {
			t.Errorf("highlight(%q, %q) = %q, want %q", tt.name, tt.query, got, tt.want)
		}
	}
}

// A filter starts only with /: a letter typed in the list does nothing
// (it is not the start of a filter that would lose it to a binding).
func TestTypingInTheListDoesNotFilter(t *testing.T) {
	m := newModel(t, 78, 20)
	for _, r := range "adxyz" {
		if msgs := run(m.Update(press(r))); len(msgs) != 0 {
			t.Fatalf("%q in the list produced %v", r, msgs)
		}
	}
	if m.mode != modeList || m.Capturing() || m.query != "" {
		t.Fatalf("typing in the list: mode %v query %q", m.mode, m.query)
	}
}

// While a filter is typed, every printable key is typed into it: the
// list's bindings (g, G, j, k, r, [, ]), the global keys (q, z, R, S, ?,
// the digits) and the rest. Tool names start with get_, query, kill.
func TestFilterTakesEveryPrintableKey(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(press('/'))
	var all strings.Builder
	for r := rune(0x21); r < 0x7f; r++ {
		all.WriteRune(r)
	}
	want := "get-an gzip query kill_1 " + all.String()
	for _, r := range want {
		if msgs := run(m.Update(press(r))); len(msgs) != 0 {
			t.Fatalf("%q produced %v", r, msgs)
		}
	}
	if !m.Capturing() || m.query != want {
		t.Fatalf("capturing %v, query %q, want %q", m.Capturing(), m.query, want)
	}
}
