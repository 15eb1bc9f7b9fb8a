package pending

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// scene is a mix of every kind of row, seen at t0+4s.
func scene(m *Model) {
	total := 8.0
	timeout := &client.Error{Code: client.CodeTimeout, Message: "tools/call slow_op: no answer after 2s"}
	remote := &client.Error{Code: client.CodeRemote, Message: "server error -32602: unknown tool \"nope\""}
	busy := &client.Error{Code: client.CodeBusy, Message: "tools/call: 8 requests already in flight"}
	m.Apply([]client.Event{
		queued(0, 1, "initialize", "", 10000),
		settle(out(40, 1, "initialize", client.StateResolved), 40*time.Millisecond, nil),
		queued(100, 2, "tools/call", "slow_op", 2000),
		queued(200, 3, "tools/call", "long_running_export", 30000),
		out(210, 3, "tools/call", client.StateSent),
		progress(2500, 3, 3, &total, "exporting table users"),
		queued(300, 4, "tools/call", "nope", 5000),
		settle(out(320, 4, "tools/call", client.StateError), 20*time.Millisecond, remote),
		queued(400, 5, "resources/read", "", 4200),
		progress(3000, 5, 42, nil, "bytes"),
		req(1500, client.In, jsonrpc.Int(0), "roots/list", client.StateReceived),
		settle(out(2100, 2, "tools/call", client.StateTimeout), 2*time.Second, timeout),
		settle(req(2900, client.Out, jsonrpc.ID{}, "tools/call", client.StateRejected), 0, busy),
		queued(3100, 6, "ping", "", 1000),
	})
	m.SetNow(at(4000))
}

func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{78, 20}, {118, 36}} {
		for _, hist := range []bool{false, true} {
			m := New(theme.New(theme.NoColor()), Options{})
			m.SetSize(size[0], size[1])
			m.SetNow(t0)
			scene(m)
			name := fmt.Sprintf("live_%dx%d", size[0], size[1])
			if hist {
				m.SetNow(at(10000))
				m.Update(press("h"))
				name = fmt.Sprintf("history_%dx%d", size[0], size[1])
			}
			golden.Assert(t, name, ansi.Strip(m.View()))
		}
	}
}

func TestViewSize(t *testing.T) {
	for _, size := range [][2]int{{78, 20}, {118, 36}, {30, 4}, {1, 1}, {200, 2}} {
		for _, palette := range []theme.Palette{theme.NoColor(), theme.Dark()} {
			m := New(theme.New(palette), Options{})
			m.SetSize(size[0], size[1])
			m.SetNow(t0)
			scene(m)
			for i := range 30 {
				m.Apply([]client.Event{queued(5000+i, int64(100+i), "ping", "", 1000)})
			}
			m.Update(press("j"))
			for _, v := range []string{m.View(), func() string { m.Update(press("h")); return m.View() }()} {
				uitest.CheckScreen(t, v, size[0], size[1])
			}
		}
	}
}

func TestControlCharactersAreEscaped(t *testing.T) {
	m := newModel(Options{})
	m.SetSize(118, 3)
	m.Apply([]client.Event{req(0, client.In, jsonrpc.Int(1), "evil\x1b[2J\nmethod", client.StateReceived)})
	v := m.View()
	if strings.Contains(v, "\x1b[2J") || !strings.Contains(v, `evil\x1b[2J\nmethod`) {
		t.Fatalf("method not escaped:\n%q", v)
	}
}

// fill returns a pane with n requests in history.
func fill(n int) *Model {
	m := New(theme.New(theme.Dark()), Options{HistorySize: n, Linger: -1})
	m.SetSize(118, 36)
	m.SetNow(t0)
	evs := make([]client.Event, 0, 2*1024)
	err := errors.New("MCP_TIMEOUT: no answer")
	for i := 0; i < n; i += 1024 {
		evs = evs[:0]
		for j := i; j < min(i+1024, n); j++ {
			evs = append(evs, queued(j, int64(j), "tools/call", "x", 1000), settle(out(j+1, int64(j), "tools/call", client.StateTimeout), time.Second, err))
		}
		m.Apply(evs)
	}
	return m
}

func BenchmarkApply(b *testing.B) {
	total := 100.0
	evs := make([]client.Event, 0, 100_000)
	for i := range 25_000 {
		id := int64(i)
		evs = append(evs, queued(i, id, "tools/call", "x", 1000), out(i, id, "tools/call", client.StateSent),
			progress(i+1, id, 50, &total, "half"), settle(out(i+2, id, "tools/call", client.StateResolved), 2*time.Millisecond, nil))
	}
	b.ReportAllocs()
	for b.Loop() {
		m := New(theme.New(theme.Dark()), Options{})
		m.SetNow(t0)
		m.Apply(evs)
	}
}

func BenchmarkView(b *testing.B) {
	uitest.BenchView(b, "history", func(b *testing.B, n int) func() {
		m := fill(n)
		m.Update(press("h"))
		m.Update(press("g"))
		m.Update(press("j"))
		return func() { _ = m.View() }
	})
}

// TestLongToolNameWhole: at 118 cells (a zoomed pane at 120 columns) a
// long tool name is shown whole when the columns beside it leave room
// (issue #33: no column truncates while 20 columns sit free); at 60 it is
// cut where it does not fit.
func TestLongToolNameWhole(t *testing.T) {
	const tool = "trigger-long-running-operation"
	for _, c := range []struct {
		w     int
		whole bool
	}{{118, true}, {60, false}} {
		m := newModel(Options{})
		m.SetSize(c.w, 5)
		m.Apply([]client.Event{queued(0, 1, "tools/call", tool, 30000), out(1, 1, "tools/call", client.StateSent)})
		v := ansi.Strip(m.View())
		if got := strings.Contains(v, "tools/call "+tool+" "); got != c.whole {
			t.Errorf("at %d: the whole name shown %v, want %v:\n%s", c.w, got, c.whole, v)
		}
	}
}
