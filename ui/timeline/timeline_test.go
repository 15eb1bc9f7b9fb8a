package timeline

import (
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var at = uitest.At

func req(ms int, id int64, method, tool string, st client.State, dir client.Direction) client.Event {
	return client.Event{Time: at(ms), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: dir, ID: jsonrpc.Int(id), Method: method, Tool: tool, State: st}}
}

func frame(ms int, raw string, v client.Verdict) client.Event {
	f := client.NewInFrame([]byte(raw), at(ms))
	return client.Event{Time: at(ms), Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f, Verdict: v}}
}

// session: a call with progress, a fast call, a call that times out and
// is answered late, an isError result, a server request, a notification,
// stderr, and a call still in flight.
func session() []client.Event {
	out, in := client.Out, client.In
	return []client.Event{
		{Time: at(0), Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart, Pid: 1}},
		req(100, 2, "tools/call", "slow", client.StateSent, out),
		req(1100, 2, "tools/call", "slow", client.StateProgress, out),
		req(2100, 2, "tools/call", "slow", client.StateProgress, out),
		req(1500, 3, "tools/call", "echo", client.StateSent, out),
		req(1520, 3, "tools/call", "echo", client.StateResolved, out),
		req(3000, 4, "tools/call", "hang", client.StateSent, out),
		req(5000, 4, "tools/call", "hang", client.StateTimeout, out),
		frame(5600, `{"jsonrpc":"2.0","id":4,"result":{}}`, client.VerdictLate),
		req(3100, 2, "tools/call", "slow", client.StateResolved, out),
		req(6000, 5, "tools/call", "fail", client.StateSent, out),
		frame(6300, `{"jsonrpc":"2.0","id":5,"result":{"content":[],"isError":true}}`, client.VerdictResolved),
		req(6300, 5, "tools/call", "fail", client.StateResolved, out),
		req(6500, 0, "roots/list", "", client.StateReceived, in),
		req(6600, 0, "roots/list", "", client.StateAnswered, in),
		frame(7000, `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, client.VerdictNotification),
		{Time: at(7200), Kind: client.EvStderr, Stderr: []byte("warn\n")},
		req(8000, 6, "tools/call", "slow", client.StateSent, out),
	}
}

func newModel(w, h int) *Model {
	m := New(theme.New(theme.NoColor()))
	m.SetSize(w, h)
	m.Apply(session())
	m.SetNow(at(9900))
	return m
}

func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{78, 20}, {118, 30}} {
		m := newModel(size[0], size[1])
		v := m.View()
		uitest.CheckScreen(t, v, size[0], size[1])
		got := ansi.Strip(v)
		for _, want := range []string{"2 tools/call slow", "┿", "!", "0 roots/list", "srv", "•", "▪", "tools/call slow", "p50"} {
			if !strings.Contains(got, want) {
				t.Errorf("%dx%d lacks %q:\n%s", size[0], size[1], want, got)
			}
		}
		golden.Assert(t, "timeline_"+strconv.Itoa(size[0])+"x"+strconv.Itoa(size[1]), got)
	}
}

// The window follows now; zoom changes its width, pan stops following
// until it reaches now again, f follows at once; the wheel zooms.
func TestZoomPanFollow(t *testing.T) {
	m := newModel(100, 24)
	if m.Title() != "Timeline 10s" || !m.follow {
		t.Fatalf("title %q follow %v", m.Title(), m.follow)
	}
	m.Update(uitest.Press("]"))
	if m.width != 5*time.Second {
		t.Fatalf("] zoomed to %v", m.width)
	}
	m.Update(uitest.Press("["))
	m.Update(uitest.Press("["))
	if m.width != 30*time.Second {
		t.Fatalf("[ [ zoomed to %v", m.width)
	}
	m.Update(uitest.Press("h"))
	if m.follow || !strings.Contains(m.Title(), "paused") {
		t.Fatalf("h: follow %v title %q", m.follow, m.Title())
	}
	from, to := m.window()
	if !to.Equal(at(9900).Add(-30*time.Second/4)) || to.Sub(from) != 30*time.Second {
		t.Fatalf("window %v..%v", from, to)
	}
	m.SetNow(at(20000)) // paused: the window stays
	if _, to2 := m.window(); !to2.Equal(to) {
		t.Fatal("a paused window moved with now")
	}
	m.Update(uitest.Press("f"))
	if _, to3 := m.window(); !m.follow || !to3.Equal(at(20000)) {
		t.Fatal("f did not follow now")
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.width != 10*time.Second {
		t.Fatalf("wheel up zoomed to %v", m.width)
	}
}

// The view of a window far from the session shows no request, and a
// window that moves with now (the replay cursor) shows the requests then.
func TestWindowFollowsCursor(t *testing.T) {
	m := newModel(100, 24)
	m.SetNow(at(2000))
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "2 tools/call slow") || strings.Contains(v, "6 tools/call slow") {
		t.Fatalf("at +2s:\n%s", v)
	}
	m.SetNow(at(600_000))
	if v := ansi.Strip(m.View()); !strings.Contains(v, "6 tools/call slow") || strings.Contains(v, "3 tools/call echo") {
		t.Fatalf("10 minutes on, only the call still in flight is in the window:\n%s", v)
	}
}

// BenchmarkView1M draws the pane after a million requests: only the spans
// near the window are looked at (compare with BenchmarkView1K).
func BenchmarkView1M(b *testing.B) { benchView(b, 1_000_000) }

// BenchmarkView1K is the same pane after a thousand requests.
func BenchmarkView1K(b *testing.B) { benchView(b, 1_000) }

func benchView(b *testing.B, n int) {
	m := New(theme.New(theme.Dark()))
	m.SetSize(120, 40)
	evs := make([]client.Event, 0, 4096)
	for i := range n {
		id := int64(i + 1)
		evs = append(evs, req(i, id, "tools/call", "echo", client.StateSent, client.Out),
			req(i+3, id, "tools/call", "echo", client.StateResolved, client.Out))
		if len(evs) >= 4000 {
			m.Apply(evs)
			evs = evs[:0]
		}
	}
	m.Apply(evs)
	m.SetNow(at(n + 5))
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// / filters the rows (and the latency summary) with the filter language.
func TestFilter(t *testing.T) {
	m := newModel(118, 30)
	m.Update(uitest.Press("/"))
	if !m.Capturing() {
		t.Fatal("/ did not start typing")
	}
	for _, r := range "status:error" {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	m.Update(uitest.Press("enter"))
	v := ansi.Strip(m.View())
	for _, want := range []string{"4 tools/call hang", "5 tools/call fail", "/ status:error", "2 shown", "filter: status:error"} {
		if !strings.Contains(v+m.Title(), want) {
			t.Errorf("status:error lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "3 tools/call echo") || m.Capturing() {
		t.Errorf("status:error shows a resolved call, or still types:\n%s", v)
	}
	m.Update(uitest.Press("esc"))
	if v := ansi.Strip(m.View()); !strings.Contains(v, "3 tools/call echo") {
		t.Errorf("esc did not clear the filter:\n%s", v)
	}
}
