package pending

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0, at = uitest.T0, uitest.At

func req(ms int, dir client.Direction, id jsonrpc.ID, method string, state client.State) client.Event {
	return client.Event{Time: at(ms), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: dir, ID: id, Method: method, State: state}}
}

func out(ms int, id int64, method string, state client.State) client.Event {
	return req(ms, client.Out, jsonrpc.Int(id), method, state)
}

// queued is sonde's request id with a deadline timeout ms after ms.
func queued(ms int, id int64, method, tool string, timeout int) client.Event {
	ev := out(ms, id, method, client.StateQueued)
	ev.Req.Tool, ev.Req.Deadline = tool, at(ms+timeout)
	return ev
}

func settle(ev client.Event, latency time.Duration, err error) client.Event {
	ev.Req.Latency, ev.Req.Err = latency, err
	return ev
}

func progress(ms int, id int64, n float64, total *float64, msg string) client.Event {
	ev := out(ms, id, "tools/call", client.StateProgress)
	ev.Req.Progress = &client.Progress{Progress: n, Total: total, Message: msg}
	return ev
}

var press = uitest.Press

func newModel(opts Options) *Model {
	m := New(theme.New(theme.NoColor()), opts)
	m.SetSize(78, 20)
	m.SetNow(t0)
	return m
}

func TestLifecycle(t *testing.T) {
	m := newModel(Options{})
	total := 8.0
	m.Apply([]client.Event{
		queued(0, 1, "tools/call", "slow", 30000),
		out(1, 1, "tools/call", client.StateSent),
		queued(2, 2, "ping", "", 30000),
	})
	if got := m.InFlight(); got != 2 {
		t.Fatalf("InFlight = %d, want 2", got)
	}
	m.Apply([]client.Event{progress(500, 1, 3, &total, "step 3"), settle(out(800, 2, "ping", client.StateResolved), 798*time.Millisecond, nil)})
	m.SetNow(at(1000))
	if got, want := m.Title(), "Pending 1 · 1 settled"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	es := m.Entries()
	if len(es) != 2 {
		t.Fatalf("Entries = %d rows, want 2", len(es))
	}
	if e := es[0]; e.Tool != "slow" || e.State != client.StateProgress || e.Age != time.Second || e.Remaining != 29*time.Second || e.Progress == nil || e.Progress.Progress != 3 {
		t.Errorf("entry 1 = %+v", e)
	}
	if e := es[1]; e.State != client.StateResolved || e.Latency != 798*time.Millisecond {
		t.Errorf("entry 2 = %+v", e)
	}
	// The settled row lingers 3s after it settled (at 800ms), then moves to history.
	m.SetNow(at(3799))
	if len(m.Entries()) != 2 {
		t.Fatal("settled row left before Linger")
	}
	m.SetNow(at(3800))
	if len(m.Entries()) != 1 || m.hist.Len() != 1 {
		t.Fatalf("after Linger: %d live, %d history", len(m.Entries()), m.hist.Len())
	}
	if got, want := m.Title(), "Pending 1"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	m.Update(press("h"))
	if got, want := m.Title(), "Pending 1 · history"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
}

func TestServerRequestsHaveTheirOwnIDs(t *testing.T) {
	m := newModel(Options{})
	m.Apply([]client.Event{
		queued(0, 0, "initialize", "", 10000),
		req(1, client.In, jsonrpc.Int(0), "ping", client.StateReceived),
	})
	if m.InFlight() != 2 {
		t.Fatalf("InFlight = %d, want 2 (same id, two directions)", m.InFlight())
	}
	m.Apply([]client.Event{settle(req(2, client.In, jsonrpc.Int(0), "ping", client.StateAnswered), time.Millisecond, nil)})
	es := m.Entries()
	if es[0].State != client.StateQueued || es[1].State != client.StateAnswered || es[1].Dir != client.In {
		t.Fatalf("entries = %+v", es)
	}
	if !strings.Contains(ansi.Strip(m.View()), "srv 0") {
		t.Errorf("server request not marked:\n%s", m.View())
	}
}

func TestRejectedWithoutID(t *testing.T) {
	m := newModel(Options{})
	busy := &client.Error{Code: client.CodeBusy, Message: "tools/call: 8 requests already in flight"}
	m.Apply([]client.Event{settle(req(0, client.Out, jsonrpc.ID{}, "tools/call", client.StateRejected), 0, busy)})
	m.Apply([]client.Event{settle(req(1, client.Out, jsonrpc.ID{}, "tools/call", client.StateRejected), 0, busy)})
	if m.InFlight() != 0 || len(m.Entries()) != 2 {
		t.Fatalf("InFlight %d, live %d; want 0, 2", m.InFlight(), len(m.Entries()))
	}
	m.SetNow(at(5000))
	if m.hist.Len() != 2 || m.hist.At(0).err != "MCP_BUSY: tools/call: 8 requests already in flight" {
		t.Fatalf("history = %d rows, first %+v", m.hist.Len(), *m.hist.At(0))
	}
}

func TestHistoryIsBounded(t *testing.T) {
	m := newModel(Options{HistorySize: 3, Linger: -1})
	for i := range 5 {
		m.Apply([]client.Event{queued(i, int64(i), "ping", "", 1000), settle(out(i, int64(i), "ping", client.StateResolved), 0, nil)})
	}
	if m.hist.Len() != 3 || m.hist.Evicted() != 2 || m.hist.At(0).key.id != jsonrpc.Int(2) {
		t.Fatalf("history len %d evicted %d first %v", m.hist.Len(), m.hist.Evicted(), m.hist.At(0).key.id)
	}
	m.Update(press("h"))
	if got, want := m.Title(), "Pending 0 · history · 2 evicted"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
}

func TestReusedIDRetiresTheOldRow(t *testing.T) {
	m := newModel(Options{})
	m.Apply([]client.Event{queued(0, 1, "ping", "", 1000), settle(out(5, 1, "ping", client.StateExited), 5*time.Millisecond, nil)})
	m.Reset()
	m.Apply([]client.Event{queued(10, 1, "initialize", "", 1000)})
	if es := m.Entries(); len(es) != 1 || es[0].Method != "initialize" || m.hist.Len() != 1 {
		t.Fatalf("entries %+v, history %d", es, m.hist.Len())
	}
}

func TestKeys(t *testing.T) {
	m := newModel(Options{})
	m.Apply([]client.Event{
		queued(0, 1, "tools/call", "a", 1000),
		req(1, client.In, jsonrpc.String("s1"), "sampling/createMessage", client.StateReceived),
		queued(2, 7, "tools/call", "b", 1000),
	})
	if cmd := m.Update(press("c")); cmd == nil || cmd() != (CancelMsg{ID: 1}) {
		t.Fatalf("c on row 1: %v", cmd)
	}
	m.Update(press("j"))
	if cmd := m.Update(press("c")); cmd != nil {
		t.Fatalf("c on a server request returned %v", cmd())
	}
	if cmd := m.Update(press("enter")); cmd == nil || cmd() != (ShowFramesMsg{ID: jsonrpc.String("s1"), Dir: client.In}) {
		t.Fatalf("enter on row 2: %v", cmd)
	}
	m.Update(press("down"))
	if cmd := m.Update(press("f")); cmd == nil || cmd() != (ShowFramesMsg{ID: jsonrpc.Int(7), Dir: client.Out}) {
		t.Fatalf("f on row 3: %v", cmd)
	}
	m.Update(press("down")) // stays on the last row
	m.Update(press("g"))
	if m.lv.sel != 0 {
		t.Errorf("g: sel %d", m.lv.sel)
	}
	m.Update(press("G"))
	if m.lv.sel != 2 {
		t.Errorf("G: sel %d", m.lv.sel)
	}
	m.Update(press("k"))
	m.Update(press("up"))
	if m.lv.sel != 0 {
		t.Errorf("k, up: sel %d", m.lv.sel)
	}
	m.Update(press("h"))
	if m.keys.Cancel.Enabled() || m.Update(press("c")) != nil {
		t.Error("cancel is enabled in the history view")
	}
	m.Update(press("h"))
	if !m.keys.Cancel.Enabled() {
		t.Error("cancel is disabled in the live view")
	}
}

func TestSelectionFollowsTheRequest(t *testing.T) {
	m := newModel(Options{})
	m.Apply([]client.Event{queued(0, 1, "ping", "", 9000), queued(0, 2, "ping", "", 9000), queued(0, 3, "ping", "", 9000)})
	m.Update(press("G"))
	m.Apply([]client.Event{settle(out(10, 1, "ping", client.StateResolved), 10*time.Millisecond, nil)})
	m.SetNow(at(4000))
	if e := m.selected(); e == nil || e.key.id != jsonrpc.Int(3) {
		t.Fatalf("selected %+v after row 1 left, want id 3", e)
	}
}

func TestMouse(t *testing.T) {
	m := newModel(Options{})
	for i := range 40 {
		m.Apply([]client.Event{queued(i, int64(i), "ping", "", 9000)})
	}
	m.Update(tea.MouseClickMsg{X: 5, Y: 3, Button: tea.MouseLeft})
	if m.lv.sel != 2 {
		t.Errorf("click on line 3 selected row %d, want 2", m.lv.sel)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.lv.sel != 5 {
		t.Errorf("wheel down: sel %d, want 5", m.lv.sel)
	}
	m.Update(press("pgdown"))
	if m.lv.sel != 24 || m.lv.off != 6 {
		t.Errorf("pgdown: sel %d off %d, want 24 6", m.lv.sel, m.lv.off)
	}
}

func TestCountdownTurnsRed(t *testing.T) {
	st := theme.New(theme.Dark())
	m := New(st, Options{})
	m.SetSize(100, 5)
	m.Apply([]client.Event{queued(0, 1, "ping", "", 10000), queued(0, 2, "ping", "", 10000)})
	m.Update(press("j")) // the selected row has its own background
	m.SetNow(at(7000))
	if strings.Contains(m.View(), st.Error.Render(format3s)) {
		t.Fatal("countdown red with 30% left")
	}
	m.SetNow(at(8500))
	if !strings.Contains(m.View(), st.Error.Render("1.5s")) {
		t.Fatalf("countdown not red with 15%% left:\n%q", m.View())
	}
}

const format3s = "3s  "

// Requests in flight come before the settled rows that linger, and the
// selection stays on the same request when the order changes.
func TestInFlightFirst(t *testing.T) {
	m := newModel(Options{Linger: time.Hour})
	m.Apply([]client.Event{queued(0, 1, "initialize", "", 1000), queued(1, 2, "tools/call", "slow", 5000), queued(2, 3, "tools/call", "fast", 5000)})
	m.Update(press("down")) // select id 2
	m.Apply([]client.Event{settle(out(5, 1, "initialize", client.StateResolved), 5*time.Millisecond, nil), settle(out(6, 3, "tools/call", client.StateResolved), 4*time.Millisecond, nil)})
	var ids []string
	for _, e := range m.Entries() {
		ids = append(ids, e.ID.String())
	}
	if strings.Join(ids, ",") != "2,1,3" {
		t.Fatalf("order %v, want the pending id 2 first, then 1 and 3 in the order they settled", ids)
	}
	if cmd := m.Update(press("c")); cmd == nil {
		t.Fatal("c did nothing")
	} else if msg, ok := cmd().(CancelMsg); !ok || msg.ID != 2 {
		t.Fatalf("cancel went to %+v, want id 2 (the selection must follow the request)", msg)
	}
}

// Over HTTP the row says which stream its answer is expected on, and
// follows it when the stream is resumed.
func TestHTTPStream(t *testing.T) {
	m := newModel(Options{})
	httpEv := func(ms int, id int64, stream string) client.Event {
		return client.Event{Time: at(ms), Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "POST", Stream: stream, ReqID: jsonrpc.Int(id), Status: 200}}
	}
	m.Apply([]client.Event{queued(0, 7, "tools/call", "slow", 30000), out(1, 7, "tools/call", client.StateSent), httpEv(5, 7, "POST 7")})
	if e := m.Entries()[0]; e.Stream != "POST 7" {
		t.Fatalf("stream = %q", e.Stream)
	}
	if v := m.View(); !strings.Contains(v, "on POST 7") {
		t.Fatalf("view does not show the stream:\n%s", v)
	}
	m.Apply([]client.Event{httpEv(900, 7, "GET resume 7"), httpEv(901, 99, "POST 99")})
	if e := m.Entries()[0]; e.Stream != "GET resume 7" || len(m.Entries()) != 1 {
		t.Fatalf("after the resume: %+v", m.Entries())
	}
}

// TestRetryOf: a modern request answered input_required ends "retried", and
// its retry under a new id shows which request it continues.
func TestRetryOf(t *testing.T) {
	m := newModel(Options{})
	retry := queued(20, 8, "tools/call", "confirm", 30000)
	retry.Req.RetryOf = jsonrpc.Int(7)
	m.Apply([]client.Event{
		queued(0, 7, "tools/call", "confirm", 30000), out(1, 7, "tools/call", client.StateSent),
		settle(out(10, 7, "tools/call", client.StateRetried), 10*time.Millisecond, nil),
		retry, out(21, 8, "tools/call", client.StateSent),
	})
	es := m.Entries()
	// In-flight rows come first.
	if len(es) != 2 || es[1].State != client.StateRetried || es[0].RetryOf != jsonrpc.Int(7) || es[0].ID != jsonrpc.Int(8) || m.InFlight() != 1 {
		t.Fatalf("entries %+v", es)
	}
	v := ansi.Strip(m.View())
	for _, want := range []string{"retried", "10.0ms", "input required", "retry of id 7"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	done := settle(out(40, 8, "tools/call", client.StateResolved), 20*time.Millisecond, nil)
	done.Req.RetryOf = jsonrpc.Int(7)
	m.Apply([]client.Event{done})
	if v := ansi.Strip(m.View()); !strings.Contains(v, "retry of id 7") || m.InFlight() != 0 {
		t.Errorf("after the retry resolved:\n%s", v)
	}
}

// TestHeldRowHasNoCountdown: a held request (its clock stands still while
// the user answers the server) shows no time left, says why, and gets its
// countdown back with the new deadline.
func TestHeldRowHasNoCountdown(t *testing.T) {
	m := newModel(Options{})
	m.SetSize(120, 5)
	m.Apply([]client.Event{queued(0, 1, "tools/call", "confirm", 1000), out(1, 1, "tools/call", client.StateSent)})
	m.SetNow(at(500))
	if v := ansi.Strip(m.View()); !strings.Contains(v, "500.0ms 500.0ms") {
		t.Fatalf("no countdown before the hold:\n%s", v)
	}
	m.Apply([]client.Event{out(600, 1, "tools/call", client.StateHeld)})
	m.SetNow(at(5000)) // well past the old deadline
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "held") || !strings.Contains(v, "held while you answer the server") || strings.Contains(v, "-4") {
		t.Fatalf("held row:\n%s", v)
	}
	release := out(5000, 1, "tools/call", client.StateSent)
	release.Req.Deadline = at(5400)
	m.Apply([]client.Event{release})
	m.SetNow(at(5100))
	if v := ansi.Strip(m.View()); !strings.Contains(v, "300.0ms") || strings.Contains(v, "held while") {
		t.Fatalf("after the hold:\n%s", v)
	}
}

// TestFaultDropped: a request whose answer sonde tap --fault dropped says
// so (docs/chaos.md); a note about another id, or a string id, marks only
// its own request.
func TestFaultDropped(t *testing.T) {
	m := newModel(Options{})
	note := func(ms int, text string, f *client.Fault) client.Event {
		return client.Event{Time: at(ms), Kind: client.EvNote, Note: text, Fault: f}
	}
	m.Apply([]client.Event{
		queued(0, 7, "tools/call", "echo", 30000), out(1, 7, "tools/call", client.StateSent),
		queued(2, 8, "tools/call", "echo", 30000), out(3, 8, "tools/call", client.StateSent),
		note(5, "fault rule 2 (drop:to-host,tool=echo,id=7) dropped the response to id 7 (tools/call echo) to-host",
			&client.Fault{Rule: 2, Action: "drop", Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(7), Method: "tools/call"}),
		// A string id "8" is not the request 8.
		note(6, `fault rule 3 (drop:to-host,id="8") dropped the response to id "8" to-host`,
			&client.Fault{Rule: 3, Action: "drop", Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.String("8")}),
		// The same words without the fields are a note, not a fault.
		note(7, "fault rule 4 (drop:to-host,id=8) dropped the response to id 8 (tools/call echo) to-host", nil),
	})
	v := m.View()
	if !strings.Contains(v, "dropped by fault rule 2") || strings.Contains(v, "fault rule 3") || strings.Contains(v, "fault rule 4") {
		t.Fatalf("view:\n%s", v)
	}
	for _, tc := range []struct {
		f    client.Fault
		key  reqKey
		what string
	}{
		{client.Fault{Rule: 1, Action: "close", Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(3)}, reqKey{client.Out, jsonrpc.Int(3)}, "closed by fault rule 1"},
		{client.Fault{Rule: 4, Action: "drop", Dir: client.Out, Kind: jsonrpc.KindResponse, ID: jsonrpc.String("a b")}, reqKey{client.In, jsonrpc.String("a b")}, "dropped by fault rule 4"},
	} {
		k, what, ok := faultedAnswer(&tc.f)
		if !ok || k != tc.key || what != tc.what {
			t.Errorf("%+v: %v %q %v", tc.f, k, what, ok)
		}
	}
	for _, f := range []*client.Fault{
		nil,
		{Rule: 1, Action: "delay", Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(3)},
		{Rule: 1, Action: "drop", Dir: client.In, Kind: jsonrpc.KindRequest, ID: jsonrpc.Int(3)},
		{Rule: 1, Action: "drop", Dir: client.In, Kind: jsonrpc.KindResponse},
	} {
		if _, _, ok := faultedAnswer(f); ok {
			t.Errorf("%+v read as a kept answer", f)
		}
	}
}

// / filters the rows with the filter language, in both views; a mistake
// matches nothing and says why; esc clears.
func TestFilterQuery(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{Linger: -1})
	m.SetSize(100, 12)
	m.Apply([]client.Event{
		queued(0, 1, "tools/call", "search", 10000), queued(0, 2, "tools/call", "echo", 10000), queued(0, 3, "ping", "", 10000),
		settle(out(10, 4, "tools/call", client.StateTimeout), 2*time.Second, errors.New("MCP_TIMEOUT: no answer")),
	})
	m.Update(press("/"))
	if !m.Capturing() {
		t.Fatal("/ did not start typing")
	}
	for _, r := range "tool:search" {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	m.Update(press("enter"))
	v := ansi.Strip(m.View())
	if m.Capturing() || m.rows() != 1 || !strings.Contains(v, "tools/call search") || strings.Contains(v, "echo") || !strings.Contains(v, "/ tool:search") {
		t.Fatalf("tool:search: %d rows\n%s", m.rows(), v)
	}
	m.Update(press("h")) // history: the timed-out call
	m.setQuery("status:error duration:>1s")
	if m.rows() != 1 || m.selected().key.id != jsonrpc.Int(4) {
		t.Fatalf("status:error in history: %d rows", m.rows())
	}
	m.setQuery("dur:>1s")
	if m.rows() != 0 || !strings.Contains(ansi.Strip(m.View()), `unknown field "dur"`) {
		t.Fatalf("a bad query: %d rows\n%s", m.rows(), ansi.Strip(m.View()))
	}
	m.Update(press("esc"))
	if m.filtering() || m.rows() != 1 {
		t.Fatalf("esc: filtering %v, %d rows", m.filtering(), m.rows())
	}
}

// TestServersTagged: two servers' request 1 are two rows, each settled by
// its own server's outcome; c and enter name the row's server; SetServer
// shows one server's rows (the title says which and counts them).
func TestServersTagged(t *testing.T) {
	m := newModel(Options{})
	m.SetTag("alpha")
	m.Apply([]client.Event{queued(0, 1, "tools/call", "slow", 5000), out(1, 1, "tools/call", client.StateSent)})
	m.SetTag("beta")
	m.Apply([]client.Event{queued(2, 1, "tools/call", "echo", 5000), out(3, 1, "tools/call", client.StateSent)})
	if m.InFlight() != 2 || len(m.Entries()) != 2 {
		t.Fatalf("in flight %d, rows %d: want two rows of id 1", m.InFlight(), len(m.Entries()))
	}
	m.Apply([]client.Event{settle(out(10, 1, "tools/call", client.StateResolved), 7*time.Millisecond, nil)}) // beta's
	var states []string
	for _, e := range m.Entries() {
		states = append(states, e.Tool+":"+string(e.State))
	}
	if got := strings.Join(states, " "); got != "slow:sent echo:resolved" {
		t.Fatalf("rows %s: beta's outcome must settle beta's request only", got)
	}
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "SERVER") || !strings.Contains(view, "alpha  1  tools/call slow") {
		t.Errorf("no server column:\n%s", view)
	}
	if msg, ok := m.Update(press("c"))().(CancelMsg); !ok || msg.ID != 1 || msg.Server != "alpha" {
		t.Errorf("c: %#v, want alpha's id 1", msg)
	}
	m.SetServer("beta")
	if got := m.Title(); got != "Pending 0 · server beta · 1 settled" {
		t.Errorf("title %q", got)
	}
	if msg, ok := m.Update(press("enter"))().(ShowFramesMsg); !ok || msg.Server != "beta" {
		t.Errorf("enter: %#v, want beta's frames", msg)
	}
	if view := ansi.Strip(m.View()); strings.Contains(view, "slow") {
		t.Errorf("beta only shows alpha's row:\n%s", view)
	}
	m.SetServer("")
	m.SetSize(30, 20)
	if view := ansi.Strip(m.View()); strings.Contains(view, "SERVER") {
		t.Errorf("narrow: the server column still shows:\n%s", view)
	}
}
