package lesson

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// lessonTrail is the traffic of the lesson up to step 6: the handshake,
// slow and fast answered in reverse (two wrong by order), a late call that
// gives up and is answered anyway, and the long call a FIFO client would
// hand that late answer (the third wrong one).
func lessonTrail() []client.Event {
	text := func(s string) string { return `{"content":[{"type":"text","text":"` + s + `"}]}` }
	return []client.Event{
		frame(client.Out, jsonrpc.KindRequest, 1, "initialize", ""),
		frame(client.In, jsonrpc.KindResponse, 1, "", `{"protocolVersion":"2025-06-18"}`),
		outcomeEvent(1, client.StateResolved),
		frame(client.Out, jsonrpc.KindRequest, 2, "tools/call", ""),
		frame(client.Out, jsonrpc.KindRequest, 3, "tools/call", ""),
		frame(client.In, jsonrpc.KindResponse, 3, "", text("fast")),
		outcomeEvent(3, client.StateResolved),
		frame(client.In, jsonrpc.KindResponse, 2, "", text("slow")),
		outcomeEvent(2, client.StateResolved),
		frame(client.Out, jsonrpc.KindRequest, 4, "tools/call", ""),
		outcomeEvent(4, client.StateTimeout),
		frame(client.In, jsonrpc.KindResponse, 4, "", text("too late")),
		frame(client.Out, jsonrpc.KindRequest, 5, "tools/call", ""),
	}
}

// TestFIFOCountsEveryRow: the count of wrong answers is over all the
// requests, not the rows that fit the pane, and its noun agrees with it.
// The pane sizes are the lesson pane's inner size at 80x24 and 120x36.
func TestFIFOCountsEveryRow(t *testing.T) {
	for _, tc := range []struct {
		name string
		w, h int
		want string
	}{
		{"80x24", 78, 5, "3 wrong answers"},
		{"120x36", 118, 9, "3 wrong answers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(theme.New(theme.NoColor()), Options{})
			m.SetSize(tc.w, tc.h)
			m.trail.labels = map[int64]string{2: "slow", 3: "fast", 4: "late", 5: "long"}
			m.Apply(lessonTrail())
			m.ToggleFIFO()
			v := ansi.Strip(m.View())
			if !strings.Contains(v, tc.want) {
				t.Errorf("lacks %q:\n%s", tc.want, v)
			}
			golden.Assert(t, "fifo-"+tc.name, v)
		})
	}
}

// TestFIFOCountPlural: one wrong answer is "1 wrong answer".
func TestFIFOCountPlural(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(100, 10)
	// An answer under an id sonde never sent is the one a FIFO client
	// hands to id 2.
	stray := frame(client.In, jsonrpc.KindResponse, 0, "", `{"content":[{"type":"text","text":"a"}]}`)
	stray.Frame.Msg.ID = jsonrpc.String("x")
	m.Apply([]client.Event{frame(client.Out, jsonrpc.KindRequest, 2, "tools/call", ""), stray})
	m.ToggleFIFO()
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "1 wrong answer:") || strings.Contains(v, "1 wrong answers") {
		t.Fatalf("%s", v)
	}
}
