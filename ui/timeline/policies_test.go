package timeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/timeouts"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func policyModel(t *testing.T, w, h int) *Model {
	t.Helper()
	m := New(theme.New(theme.NoColor()))
	var ps []timeouts.Policy
	for _, s := range []string{"timeout=1s", "timeout=1500ms,reset-on-progress", "python-sdk"} {
		p, err := timeouts.ParsePolicy(s)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	m.SetPolicies(ps)
	m.SetSize(w, h)
	m.Apply(session())
	m.SetNow(at(9900))
	return m
}

// row returns the bar of the row labelled label, stripped.
func row(t *testing.T, view, label string) string {
	t.Helper()
	for l := range strings.SplitSeq(ansi.Strip(view), "\n") {
		if strings.HasPrefix(l, label) {
			return l[strings.Index(l, "   "):] // past the label
		}
	}
	t.Fatalf("no row %q in\n%s", label, ansi.Strip(view))
	return ""
}

// TestDeadlineMarks: each policy's deadline is marked on a bar by its
// number: on the bar where the request outlived it (id 2 under a 1s
// timeout), past its end where it came first (id 2 under 1.5s with
// reset-on-progress: its progress at 1.1s and 2.1s moved the deadline to
// 3.6s, past its end at 3.1s), and on an in-flight bar once it has come
// (id 6, sent 1.9s ago).
func TestDeadlineMarks(t *testing.T) {
	m := policyModel(t, 118, 30)
	v := m.View()
	slow := row(t, v, "2 tools/call slow")
	end := strings.LastIndex(slow, "━")
	if one := strings.Index(slow, "1"); one < 0 || one > end {
		t.Errorf("id 2: the 1s deadline is not on its bar: %q", slow)
	}
	if two := strings.Index(slow, "2"); two < end {
		t.Errorf("id 2: the reset deadline is not past its end: %q", slow)
	}
	if live := row(t, v, "6 tools/call slow"); !strings.Contains(live, "1") || !strings.Contains(live, "2") || strings.Contains(live, "3") {
		t.Errorf("id 6 in flight 1.9s: both deadlines passed, python-sdk has none: %q", live)
	}
	if got := m.Title(); !strings.Contains(got, "deadlines 1 timeout=1s 2 timeout=1500ms,reset-on-progress 3 python-sdk") {
		t.Errorf("title %q", got)
	}
	plain := newModel(118, 30)
	if strings.Contains(plain.Title(), "deadlines") || row(t, plain.View(), "2 tools/call slow") == slow {
		t.Error("without policies, marks or a legend")
	}
}

func TestPoliciesGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		m := policyModel(t, size[0], size[1])
		golden.Assert(t, fmt.Sprintf("policies_%dx%d", size[0], size[1]), ansi.Strip(m.View()))
	}
}
