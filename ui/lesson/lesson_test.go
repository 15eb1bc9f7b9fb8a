package lesson

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

func frame(dir client.Direction, kind jsonrpc.Kind, id int64, method, raw string) client.Event {
	f := client.Frame{Dir: dir, Raw: []byte(raw)}
	f.Msg.Kind, f.Msg.ID, f.Msg.Method = kind, jsonrpc.Int(id), method
	if kind == jsonrpc.KindResponse {
		f.Msg.Result = []byte(raw)
	}
	return client.Event{Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f}}
}

func outcomeEvent(id int64, state client.State) client.Event {
	return client.Event{Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(id), Method: "tools/call", State: state, Latency: time.Second}}
}

// The FIFO view pairs the n-th request with the n-th answer and marks the
// pairs a FIFO client would get wrong; sonde's own outcome stands beside.
func TestFIFOViewMarksWrongAnswers(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(100, 10)
	m.trail.labels = map[int64]string{2: "slow", 3: "fast"}
	m.Apply([]client.Event{
		frame(client.Out, jsonrpc.KindRequest, 2, "tools/call", ""),
		frame(client.Out, jsonrpc.KindRequest, 3, "tools/call", ""),
		frame(client.In, jsonrpc.KindResponse, 3, "", `{"content":[{"type":"text","text":"fast"}]}`),
		outcomeEvent(3, client.StateResolved),
		frame(client.In, jsonrpc.KindResponse, 2, "", `{"content":[{"type":"text","text":"slow"}]}`),
		outcomeEvent(2, client.StateResolved),
	})
	m.ToggleFIFO()
	view := ansi.Strip(m.View())
	for _, want := range []string{
		`id 2 slow`, `answer of id 3 "fast"  WRONG`, `answer of id 2 "slow"  WRONG`, "2 wrong answers",
	} {
		if !strings.Contains(view, want) {
			t.Fatalf("FIFO view lacks %q:\n%s", want, view)
		}
	}
	if strings.Count(view, "resolved") != 2 {
		t.Fatalf("sonde's outcomes missing:\n%s", view)
	}
	if !strings.Contains(m.Title(), "FIFO") {
		t.Fatalf("title %q", m.Title())
	}
}

func TestFIFOViewAgreesWhenInOrder(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(100, 10)
	m.Apply([]client.Event{
		frame(client.Out, jsonrpc.KindRequest, 2, "tools/call", ""),
		frame(client.In, jsonrpc.KindResponse, 2, "", `{"content":[{"type":"text","text":"a"}]}`),
	})
	m.ToggleFIFO()
	if view := ansi.Strip(m.View()); strings.Contains(view, "WRONG") || !strings.Contains(view, "agree") {
		t.Fatalf("%s", view)
	}
}

func TestNextNeedsASession(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	if m.Next() != nil || m.Step() != 0 {
		t.Fatal("stepped without a client")
	}
	m.SetSize(80, 8)
	if lines := strings.Split(m.View(), "\n"); len(lines) != 8 {
		t.Fatalf("%d lines", len(lines))
	}
	if !strings.HasPrefix(m.Title(), "Lesson 1/") || Steps() < 7 {
		t.Fatalf("title %q, %d steps", m.Title(), Steps())
	}
}

func TestShortPaneSaysTextIsCut(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(60, 5)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "… more: z zooms this pane") || strings.Count(v, "\n") != 4 {
		t.Fatalf("%s", v)
	}
	m.SetSize(120, 20)
	if v := ansi.Strip(m.View()); strings.Contains(v, "more: z") || !strings.Contains(v, "Press space") {
		t.Fatalf("%s", v)
	}
}
