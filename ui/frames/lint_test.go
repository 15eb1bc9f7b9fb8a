package frames

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// lintModel is a pane that was given the events of a real capture, in
// batches of batch events (as the UI's event pump delivers them).
func lintModel(t *testing.T, path string, batch int) (*Model, []client.Event) {
	t.Helper()
	evs := capturetest.Events(t, path)
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(100, 30)
	for i := 0; i < len(evs); i += batch {
		m.Apply(evs[i:min(i+batch, len(evs))])
	}
	return m, evs
}

// marks returns "seq:rule" for every frame held that breaks a lint rule.
func marks(m *Model) []string {
	var out []string
	for abs := m.ring.oldest(); abs < m.ring.total(); abs++ {
		e := m.ring.at(abs)
		for _, f := range e.lint {
			out = append(out, itoa(e.seq)+":"+f.Rule)
		}
	}
	return out
}

func itoa(n uint64) string { return commas(n) }

// TestLiveLint: applying a real session (noise on stdout, a late answer,
// a crash mid-line) marks the frames that break rules as they arrive, the
// same whatever the batches; n stops at them; the detail view names the
// rule and its spec reference.
func TestLiveLint(t *testing.T) {
	const sample = "../../testdata/captures/out-of-order-late-crash.jsonl"
	m, _ := lintModel(t, sample, 1<<20)
	want := marks(m)
	if strings.Join(want, " ") != "5:not-json 15:not-json 18:not-json 27:not-json 28:late-response 33:not-json 34:not-json" {
		t.Fatalf("marks %v", want)
	}
	for _, batch := range []int{1, 3, 64} {
		if mb, _ := lintModel(t, sample, batch); strings.Join(marks(mb), " ") != strings.Join(want, " ") {
			t.Errorf("in batches of %d: %v, want %v", batch, marks(mb), want)
		}
	}
	if !selectSeq(m, 28) {
		t.Fatal("no frame 28")
	}
	press(m, "enter")
	text := strings.ReplaceAll(detailText(m), "\n", "")
	if !strings.Contains(text, "lint late-response  response for id 4 arrived") || !strings.Contains(text, "2511/basic/utilities/cancellation.mdx") {
		t.Errorf("detail of the late frame:\n%s", text)
	}
	press(m, "esc")
	press(m, "g")
	press(m, "n")
	if selSeq(m) != 5 {
		t.Errorf("n from the top: %d, want 5", selSeq(m))
	}
}

// TestLintOnlyMark: a frame whose verdict is fine but which breaks a rule
// (the server's request before notifications/initialized) gets the mark,
// n stops at it, and Reset starts the linter again.
func TestLintOnlyMark(t *testing.T) {
	m, evs := lintModel(t, "../../testdata/captures/lint/request-before-initialize.jsonl", 1)
	if got := strings.Join(marks(m), " "); got != "4:request-before-initialize" {
		t.Fatalf("marks %q", got)
	}
	if bad, _ := violation(m.ring.at(m.ring.oldest() + 2).f.Verdict); bad {
		t.Fatal("the sample's frame is already a violation by its verdict")
	}
	press(m, "g")
	press(m, "n")
	if selSeq(m) != 4 {
		t.Fatalf("n: %d, want 4", selSeq(m))
	}
	row := ansi.Strip(strings.Split(m.View(), "\n")[1+m.indexOf(m.sel)])
	if !strings.HasPrefix(row, ">!") {
		t.Errorf("row of frame 4 has no mark: %q", row)
	}
	press(m, "enter")
	if text := strings.ReplaceAll(detailText(m), "\n", ""); !strings.Contains(text, "lint request-before-initialize  the server sent sampling/createMessage before the client's notifications/initialized") {
		t.Errorf("detail:\n%s", text)
	}
	m.Reset()
	m.Apply(evs[3:]) // a stream that does not start the session proves nothing
	if got := marks(m); len(got) != 0 {
		t.Errorf("after Reset, mid-session: %v", got)
	}
}
