package lesson

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// TestRunReorderInOrder runs the reorder step's calls against the fixture
// itself, with no tap between: the answers arrive as the server sends them
// (a, b, c), so matching by order happens to be right. (The tap's reversal
// is in the demo's tmux test.)
func TestRunReorderInOrder(t *testing.T) {
	cfg := capturetest.Stdio(t)
	r, err := RunReorder(func() (*client.Client, client.Dialer, error) {
		return client.New(client.Options{}), client.Stdio(cfg), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(r.Lines(), "\n")
	wants := []string{`by id:    a ← "a", b ← "b", c ← "c"`}
	// The fixture answers 40 ms apart; on a machine loaded enough to
	// miss that, the answers cross, and matching by order goes wrong
	// while matching by id still may not.
	if inOrder(r) {
		wants = append(wants, `by order: a ← "a", b ← "b", c ← "c" (0 wrong)`)
	} else {
		t.Logf("the answers crossed (a loaded machine): %s", got)
	}
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}

// inOrder reports whether r's answers arrived in the order sent.
func inOrder(r *Reordered) bool {
	if len(r.Arrived) != len(r.Sent) {
		return false
	}
	for i := range r.Sent {
		if r.Arrived[i].ID != r.Sent[i].ID {
			return false
		}
	}
	return true
}

// TestReorderLines: answers reversed go wrong twice by order, never by id.
func TestReorderLines(t *testing.T) {
	a := ReorderCall{ID: jsonrpc.Int(5), Value: "a", Answer: "a"}
	b := ReorderCall{ID: jsonrpc.Int(6), Value: "b", Answer: "b"}
	c := ReorderCall{ID: jsonrpc.Int(7), Value: "c", Answer: "c"}
	r := &Reordered{Sent: []ReorderCall{a, b, c}, Arrived: []ReorderCall{c, b, a}}
	want := []string{
		`sent:     id 5 "a", id 6 "b", id 7 "c"`,
		`arrived:  id 7 "c", id 6 "b", id 5 "a"`,
		`by id:    a ← "a", b ← "b", c ← "c"`,
		`by order: a ← "c" WRONG, b ← "b", c ← "a" WRONG (2 wrong)`,
	}
	if got := r.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(200, 30)
	m.step = stepTitled(t, "answers reversed")
	if v := ansi.Strip(m.View()); !strings.Contains(v, "running…") || !strings.Contains(v, ReorderRule) {
		t.Fatalf("%s", v)
	}
	m.Update(reorderMsg{r: r})
	if v := ansi.Strip(m.View()); !strings.Contains(v, want[3]) {
		t.Fatalf("%s", v)
	}
	// Without a way to start the tapped server the step says why.
	msg := m.reorderCmd()().(reorderMsg)
	m.Update(msg)
	if v := ansi.Strip(m.View()); msg.err == nil || !strings.Contains(v, "not shown: it needs a server command") {
		t.Fatalf("%v\n%s", msg.err, v)
	}
}

// TestNarrationCleansServerText: what a server said (an error of the
// reorder step; the eras step's tool text, transcript and error) reaches
// a step's screen only through textfmt.
func TestNarrationCleansServerText(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[2J"
	raw := func(v string) bool {
		return strings.Contains(v, "\x1b]0;") || strings.Contains(v, "\x07") || strings.Contains(v, "\x1b[2J")
	}
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(200, 30)
	m.step = stepTitled(t, "answers reversed")
	m.Update(reorderMsg{err: errors.New("MCP_SPAWN: " + evil)})
	if v := m.View(); raw(v) {
		t.Errorf("the reorder step's error reached the screen raw: %q", v)
	}
	m.updateEras(resultMsg{"confirm", "yes " + evil})
	m.updateEras(modernMsg{lines: []string{"<- id 1 " + evil}})
	if v := m.erasText(); raw(v) {
		t.Errorf("the eras step's tool text or transcript reached the screen raw: %q", v)
	}
	m.updateEras(modernMsg{err: errors.New("MCP_HANDSHAKE: " + evil)})
	if v := m.erasText(); raw(v) {
		t.Errorf("the eras step's error reached the screen raw: %q", v)
	}
}

// stepTitled is the index of the step whose title holds s.
func stepTitled(t *testing.T, s string) int {
	for i, st := range script {
		if strings.Contains(st.title, s) {
			return i
		}
	}
	t.Fatalf("no step %q", s)
	return 0
}
