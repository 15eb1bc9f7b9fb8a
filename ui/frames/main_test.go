package frames

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// TestMain runs the tests under goleak, or the fixture server when the
// binary was re-executed as one (fixturetest).
func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

// start is the time of the first synthetic frame.
var start = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// frameEv builds a frame event from raw bytes, decoded as the transport does;
// a detail led by the verdict is marked VerdictInDetail, as the client does.
func frameEv(seq uint64, at time.Duration, dir client.Direction, raw string, v client.Verdict, detail string) client.Event {
	f := client.NewInFrame([]byte(raw), start.Add(at))
	f.Dir = dir
	return client.Event{Seq: seq, Time: f.Time, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f, Verdict: v, Detail: detail, VerdictInDetail: strings.HasPrefix(detail, string(v)+" ")}}
}

// session is a small exchange with one of each kind of frame.
func session() []client.Event {
	ms := time.Millisecond
	out, in := client.Out, client.In
	evs := []client.Event{
		frameEv(1, 0, out, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sonde","version":"0.1.0"}}}`, client.VerdictSent, ""),
		frameEv(2, 12*ms, in, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1.0"}}}`, client.VerdictResolved, "resolved id 1 after 12.0ms"),
		frameEv(3, 13*ms, out, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, client.VerdictSent, ""),
		frameEv(4, 15*ms, out, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, client.VerdictSent, ""),
		frameEv(5, 16*ms, in, "Starting demo server on stdio...", client.VerdictMalformed, "line on stdout is not JSON: servers must log to stderr"),
		frameEv(6, 20*ms, in, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`, client.VerdictResolved, "resolved id 2 after 5.0ms"),
		frameEv(7, 100*ms, out, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"n":2},"_meta":{"progressToken":3}}}`, client.VerdictSent, ""),
		frameEv(8, 400*ms, in, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,"total":2}}`, client.VerdictProgress, "progress 1/2 for id 3"),
		frameEv(9, 912*ms, in, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}`, client.VerdictRemoteError, "error for id 3 after 812ms"),
		frameEv(10, 950*ms, in, `{"jsonrpc":"2.0","id":"3","result":{}}`, client.VerdictUnknown, `id "3" is a string; sonde sent the integer 3 (ids keep their JSON type)`),
		frameEv(11, 960*ms, in, `{"jsonrpc":"2.0","id":3,"result":{}}`, client.VerdictDuplicate, "second response for id 3 (already error 48ms ago); ignored"),
		frameEv(12, 1200*ms, out, `{"jsonrpc":"2.0","id":4,"method":"ping"}`, client.VerdictSent, ""),
		frameEv(13, 1201*ms, in, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\r", client.VerdictResolved, "resolved id 4 after 1.0ms"),
		frameEv(14, 1300*ms, in, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, client.VerdictServerRequest, "request from the server: ping"),
		frameEv(15, 1301*ms, out, `{"jsonrpc":"2.0","id":1,"result":{}}`, client.VerdictSent, ""),
		frameEv(16, 1500*ms, in, `{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}}`, client.VerdictInvalid, "response has both result and error"),
		frameEv(17, 2*time.Second, in, `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`, client.VerdictTooLong, "line exceeds 64 bytes (--max-line-bytes); the first 64 bytes are shown"),
		frameEv(18, 2100*ms, out, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}`, client.VerdictSent, ""),
	}
	return evs
}

// newModel is a NoColor pane of size w×h holding the session.
func newModel(t testing.TB, w, h int) *Model {
	t.Helper()
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(w, h)
	m.Apply(session())
	return m
}

// press sends one key press.
func press(m *Model, k string) tea.Cmd {
	if k == "G" || k == "N" { // shift and a letter, as a terminal reports it
		return m.Update(tea.KeyPressMsg{Code: rune(k[0] + 'a' - 'A'), ShiftedCode: rune(k[0]), Text: k, Mod: tea.ModShift})
	}
	return m.Update(uitest.Press(k))
}

// typeText types s into the pane one key at a time.
func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// selSeq is the event seq of the selected frame.
func selSeq(m *Model) uint64 { return m.ring.at(m.sel).seq }

// note is a notification from the server, event seq, one second after the session.
func note(seq uint64) client.Event {
	return frameEv(seq, 3*time.Second, client.In, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`, client.VerdictNotification, "notifications/message")
}

// selectSeq selects the frame of client event seq and leaves follow mode;
// false when that frame is not held (evicted, or hidden by the filter).
func selectSeq(m *Model, seq uint64) bool {
	for abs := m.ring.oldest(); abs < m.ring.total(); abs++ {
		if m.ring.at(abs).seq != seq {
			continue
		}
		i := m.indexOf(abs)
		if m.count() == 0 || m.absAt(i) != abs {
			return false
		}
		m.follow = false
		m.moveTo(i)
		return true
	}
	return false
}
