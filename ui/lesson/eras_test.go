package lesson

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// modernFixture starts the fixture (this test binary) in the modern era,
// as tui.go does for sonde demo.
func modernFixture(t *testing.T) ModernFunc {
	cfg := capturetest.Stdio(t, "--era", "modern")
	return func() (*client.Client, client.Dialer, error) {
		c := client.New(client.Options{Era: client.EraModern, ServerRequests: client.ServerRequests{Elicitation: true}, Inputs: Accept})
		return c, client.Stdio(cfg), nil
	}
}

// TestModernHalf runs the modern half of the eras step against a real
// fixture: discover, input_required, the retry under a new id, confirmed.
func TestModernHalf(t *testing.T) {
	lines, err := runModern(modernFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"-> id 1 server/discover\n<- id 1 resolved id 1 after ",
		"-> id 2 tools/call confirm\n<- id 2 input required for id 2 (confirm: elicitation/create); sonde answers and retries under a new id",
		"-> id 3 tools/call confirm, retry of id 2 with inputResponses and requestState\n<- id 3 resolved id 3 after ",
		`: "confirmed"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q:\n%s", want, got)
		}
	}
}

func TestErasStepText(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(200, 30)
	m.step = erasStep(t)
	m.ids["confirm"] = 9
	if v := ansi.Strip(m.View()); !strings.Contains(v, "id 9 called confirm") || !strings.Contains(v, "running…") {
		t.Fatalf("%s", v)
	}
	m.Update(resultMsg{"confirm", "not confirmed: the client answered elicitation/create with an error"})
	m.Update(modernMsg{lines: []string{"-> id 1 server/discover", "<- id 3 resolved"}})
	v := ansi.Strip(m.View())
	for _, want := range []string{"The tool says: not confirmed", "-> id 1 server/discover", "<- id 3 resolved"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	m.Update(modernMsg{err: os.ErrNotExist})
	if v := ansi.Strip(m.View()); !strings.Contains(v, "not shown: file does not exist") {
		t.Errorf("%s", v)
	}
	// Without a way to start the modern fixture the step says why.
	if msg := m.modernCmd()(); msg.(modernMsg).err == nil {
		t.Error("no error without Options.Modern")
	}
}

// erasStep is the index of the eras step.
func erasStep(t *testing.T) int {
	for i, s := range script {
		if strings.Contains(s.title, "input_required") {
			return i
		}
	}
	t.Fatal("no eras step")
	return 0
}
