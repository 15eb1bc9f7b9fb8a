package frames

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// sizes are the pane inside its border at 80, 120 and 200 columns.
var sizes = []struct{ w, h int }{{78, 20}, {118, 36}, {198, 20}}

func TestViewGolden(t *testing.T) {
	states := []struct {
		name string
		set  func(m *Model)
	}{
		{"list", func(m *Model) {}},
		{"selected", func(m *Model) { press(m, "g"); press(m, "j"); press(m, "j") }},
		{"typing", func(m *Model) { press(m, "/"); typeText(m, "tools") }},
		{"id", func(m *Model) { m.FilterID(jsonrpc.Int(3)) }},
		{"detail", func(m *Model) { press(m, "g"); press(m, "j"); press(m, "enter") }},
		{"detail-malformed", func(m *Model) { press(m, "g"); press(m, "n"); press(m, "enter") }},
		{"detail-crlf", func(m *Model) { selectSeq(m, 13); press(m, "enter") }},
	}
	for _, s := range states {
		for _, sz := range sizes {
			name := fmt.Sprintf("%s-%dx%d", s.name, sz.w, sz.h)
			t.Run(name, func(t *testing.T) {
				m := newModel(t, sz.w, sz.h)
				s.set(m)
				golden.Assert(t, name, ansi.Strip(m.View()))
			})
		}
	}
}

// TestViewSize checks that View is exactly h lines of w cells in every
// mode, at sizes down to nothing, with colours on.
func TestViewSize(t *testing.T) {
	modes := map[string]func(m *Model){
		"list":   func(m *Model) {},
		"filter": func(m *Model) { press(m, "/"); typeText(m, "res") },
		"id":     func(m *Model) { m.FilterID(jsonrpc.Int(3)) },
		"detail": func(m *Model) { press(m, "g"); press(m, "enter") },
		"wide":   func(m *Model) { press(m, "enter") },
		"wide-detail-scrolled": func(m *Model) {
			press(m, "enter")
			press(m, "G")
		},
		"empty": func(m *Model) { m.Reset() },
	}
	for name, set := range modes {
		for _, w := range []int{0, 1, 2, 3, 5, 20, 40, 77, 78, 99, 100, 160} {
			for _, h := range []int{0, 1, 2, 3, 10, 40} {
				m := New(theme.New(theme.Dark()), Options{})
				m.SetSize(w, h)
				m.Apply(session())
				m.Apply([]client.Event{frameEv(19, 3e9, client.In, `{"jsonrpc":"2.0","method":"日本語日本語日本語日本語","params":{"x":"\u0085日本"}}`, client.VerdictServerRequest, "日本語日本語 request from the server")})
				set(m)
				checkSize(t, fmt.Sprintf("%s %dx%d", name, w, h), m.View(), w, h)
			}
		}
	}
}

func checkSize(t *testing.T, name, v string, w, h int) {
	t.Helper()
	if h == 0 {
		if v != "" {
			t.Errorf("%s: want an empty view, got %q", name, v)
		}
		return
	}
	if err := uitest.ScreenSize(v, w, h); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}
