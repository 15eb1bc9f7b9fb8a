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
	m.Update(keyEnter) // keep the query, open the selected tool's form
	if m.mode != modeForm || m.query != "o" || m.selected().tool.Name != sel {
		t.Errorf("enter: mode %v query %q selected %q", m.mode, m.query, m.selected().tool.Name)
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

// Typing in the list filters at once: a letter the list does not bind
// starts the filter with it; enter then opens the form of the match.
func TestTypeToFilter(t *testing.T) {
	m := newModel(t, 78, 20)
	typeText(m, "ad")
	if m.mode != modeFilter || m.query != "ad" || m.selected().tool.Name != "add" {
		t.Fatalf("typing in the list: mode %v query %q", m.mode, m.query)
	}
	m.Update(keyEnter)
	if m.mode != modeForm || m.form == nil {
		t.Fatalf("enter on the filtered list: mode %v", m.mode)
	}
}
