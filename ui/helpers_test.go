package ui

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/lesson"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// t0 is the time of the first synthetic event; every clock in these tests
// is t0 plus a fixed offset, at(ms) is t0 plus ms milliseconds.
var t0, at = uitest.T0, uitest.At

// nowMS is the clock of the test models (Options.Now and the last tick).
const nowMS = 5900

// harness is a root model with a session whose client is never connected:
// its subscription is real (the pump's commands can be run against it) but
// no server runs. The client is closed at the end of the test.
type harness struct {
	t   testing.TB
	m   *Model
	c   *client.Client
	sub *client.Subscription
	// starts counts the calls of Options.Start (each returns a new
	// never-connected session, closed at the end of the test).
	starts int
}

// opt changes the Options of a harness before New.
type opt func(*Options)

func withLesson(o *Options) {
	o.Lesson = func(st *theme.Styles) Lesson { return lesson.New(st, lesson.Options{}) }
}

func withPalette(p theme.Palette, noColor bool) opt {
	return func(o *Options) { o.Palette, o.NoColor = p, noColor }
}

// newHarness returns a NoColor model of size w×h (no size message when w
// is 0) with a never-connected client and subscription.
func newHarness(t testing.TB, w, h int, opts ...opt) *harness {
	t.Helper()
	hs := &harness{t: t}
	hs.c = client.New(client.Options{})
	hs.sub = hs.c.Subscribe(16)
	t.Cleanup(func() { hs.c.Close() })
	o := Options{
		Start:     hs.start,
		Palette:   theme.NoColor(),
		NoColor:   true,
		Now:       func() time.Time { return at(nowMS) },
		Transport: "stdio",
		Command:   "srv",
	}
	for _, f := range opts {
		f(&o)
	}
	hs.m = New(o)
	if w > 0 {
		hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	}
	return hs
}

// start is Options.Start: a fresh never-connected session.
func (hs *harness) start() (Conn, error) {
	hs.starts++
	c := client.New(client.Options{})
	hs.t.Cleanup(func() { c.Close() })
	return Conn{Client: c, Sub: c.Subscribe(16)}, nil
}

// send delivers msg to Update and returns the command.
func (hs *harness) send(msg tea.Msg) tea.Cmd {
	hs.t.Helper()
	model, cmd := hs.m.Update(msg)
	if model != hs.m {
		hs.t.Fatalf("Update returned another model %T", model)
	}
	return cmd
}

// press sends the key presses named by keys.
func (hs *harness) press(keys ...string) tea.Cmd {
	hs.t.Helper()
	var cmd tea.Cmd
	for _, k := range keys {
		cmd = hs.send(keyMsg(k))
	}
	return cmd
}

// feed delivers evs as one batch of the pump, for the current generation.
func (hs *harness) feed(evs ...client.Event) tea.Cmd {
	hs.t.Helper()
	return hs.send(eventsMsg{gen: hs.m.gen, sub: hs.sub, evs: evs})
}

// connect delivers the harness's session as the result of the current
// generation's start, then the handshake's result and the tool list.
func (hs *harness) connect() {
	hs.t.Helper()
	if cmd := hs.send(startedMsg{gen: hs.m.gen, sess: Conn{Client: hs.c, Sub: hs.sub}}); cmd == nil {
		hs.t.Fatal("startedMsg returned no command (pump and handshake)")
	}
	if cmd := hs.send(initializedMsg{gen: hs.m.gen, res: initResult(), era: client.EraLegacy}); cmd == nil {
		hs.t.Fatal("initializedMsg returned no command (tools/list)")
	}
	hs.send(toolsListedMsg{gen: hs.m.gen, tools: fixtureTools()})
}

// tick delivers the clock message for t0+ms.
func (hs *harness) tick(ms int) tea.Cmd { return hs.send(tickMsg(at(ms))) }

// screen is the whole screen without styling, after checking its size.
func (hs *harness) screen() string {
	hs.t.Helper()
	return screen(hs.t, hs.m)
}

// status is the status bar without styling.
func (hs *harness) status() string { return ansi.Strip(hs.m.statusBar()) }

// screen is m's whole screen without styling, after checking its size.
func screen(t testing.TB, m *Model) string {
	t.Helper()
	v := m.View()
	checkScreen(t, v.Content, m.width, m.height)
	return ansi.Strip(v.Content)
}

// checkScreen fails unless s is exactly h lines of exactly w cells.
var checkScreen = uitest.CheckScreen

var keyMsg = uitest.Press

// isQuit reports whether cmd is tea.Quit (its message is a tea.QuitMsg).
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func initResult() *mcp.InitializeResult {
	return &mcp.InitializeResult{ProtocolVersion: "2025-06-18", ServerInfo: mcp.Implementation{Name: "demo-server", Version: "1.4.0"}}
}

func fixtureTools() []mcp.Tool {
	obj := func(props, required string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":[` + required + `]}`)
	}
	return []mcp.Tool{
		{Name: "echo", Description: "Returns its message.", InputSchema: obj(`"message":{"type":"string"}`, `"message"`)},
		{Name: "slow", Description: "Answers after ms milliseconds, with progress.", InputSchema: obj(`"ms":{"type":"integer"}`, `"ms"`)},
		{Name: "hang", Description: "Answers only after the caller gave up.", InputSchema: obj(``, ``)},
		{Name: "add", Description: "Adds two numbers.", InputSchema: obj(`"a":{"type":"number"},"b":{"type":"number"}`, `"a","b"`)},
	}
}

// events numbers synthetic client events in order, like the client does.
type events struct {
	seq  uint64
	list []client.Event
}

func (e *events) add(ev client.Event) {
	e.seq++
	ev.Seq = e.seq
	e.list = append(e.list, ev)
}

// take returns the events added since the last take (one pump batch).
func (e *events) take() []client.Event {
	out := e.list
	e.list = nil
	return out
}

// frame adds a frame decoded as the transport does.
func (e *events) frame(ms int, dir client.Direction, raw string, v client.Verdict, detail string) {
	f := client.NewInFrame([]byte(raw), at(ms))
	f.Dir = dir
	e.add(client.Event{Time: f.Time, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f, Verdict: v, Detail: detail, VerdictInDetail: strings.HasPrefix(detail, string(v)+" ")}})
}

// req adds a lifecycle transition of sonde's request id.
func (e *events) req(ms int, id int64, method, tool string, state client.State) *client.ReqInfo {
	r := &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(id), Method: method, Tool: tool, State: state}
	e.add(client.Event{Time: at(ms), Kind: client.EvRequest, Req: r})
	return r
}

// call adds a request queued at ms with a timeout, its frame, and "sent".
func (e *events) call(ms int, id int64, method, tool, params string, timeoutMS int) {
	e.req(ms, id, method, tool, client.StateQueued).Deadline = at(ms + timeoutMS)
	raw := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"` + method + `"`
	if params != "" {
		raw += `,"params":` + params
	}
	e.frame(ms, client.Out, raw+"}", client.VerdictSent, "")
	e.req(ms, id, method, tool, client.StateSent)
}

// answer adds the result frame of id and its "resolved" transition.
func (e *events) answer(ms, sentMS int, id int64, method, tool, result string) {
	lat := time.Duration(ms-sentMS) * time.Millisecond
	e.frame(ms, client.In, `{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"result":`+result+`}`,
		client.VerdictResolved, "resolved id "+strconv.FormatInt(id, 10)+" after "+lat.String())
	e.req(ms, id, method, tool, client.StateResolved).Latency = lat
}

func (e *events) stderr(ms int, s string) {
	e.add(client.Event{Time: at(ms), Kind: client.EvStderr, Stderr: []byte(s)})
}

func (e *events) proc(ms int, p client.ProcInfo) {
	e.add(client.Event{Time: at(ms), Kind: client.EvProcess, Proc: &p})
}

// progress adds a progress notification for id and its transition.
func (e *events) progress(ms int, id int64, n, total float64, msg string) {
	ns, ts := strconv.FormatFloat(n, 'f', -1, 64), strconv.FormatFloat(total, 'f', -1, 64)
	e.frame(ms, client.In, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+strconv.FormatInt(id, 10)+
		`,"progress":`+ns+`,"total":`+ts+`,"message":"`+msg+`"}}`, client.VerdictProgress, "progress "+ns+"/"+ts+" for id "+strconv.FormatInt(id, 10))
	tot := total
	e.req(ms, id, "tools/call", "", client.StateProgress).Progress = &client.Progress{Progress: n, Total: &tot, Message: msg}
}

// scenario is a realistic session in four pump batches: the process start
// and handshake (with a log line on stdout), two tools/call answered out of
// order, a call that times out and is answered late, and a call still
// pending with progress. Stderr is interleaved, one line left partial.
func scenario() [][]client.Event {
	var e events
	var batches [][]client.Event

	e.proc(0, client.ProcInfo{What: client.ProcStart, Pid: 4242, Argv: []string{"srv", "--stdio"}})
	e.stderr(2, "srv 1.4.0: listening on stdio\n")
	e.call(5, 1, "initialize", "", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sonde","version":"0.1.0"}}`, 30_000)
	e.frame(8, client.In, "Starting demo server on stdio...", client.VerdictMalformed, "line on stdout is not JSON: servers must log to stderr")
	e.answer(17, 5, 1, "initialize", "", `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"demo-server","version":"1.4.0"}}`)
	e.frame(18, client.Out, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, client.VerdictSent, "")
	e.call(20, 2, "tools/list", "", "", 30_000)
	e.answer(24, 20, 2, "tools/list", "", `{"tools":[{"name":"echo"},{"name":"slow"},{"name":"hang"},{"name":"add"}]}`)
	batches = append(batches, e.take())

	e.call(100, 3, "tools/call", "slow", `{"name":"slow","arguments":{"ms":800},"_meta":{"progressToken":3}}`, 10_000)
	e.call(110, 4, "tools/call", "echo", `{"name":"echo","arguments":{"message":"hi"},"_meta":{"progressToken":4}}`, 10_000)
	e.stderr(120, "slow: sleeping 800ms\n")
	e.answer(310, 110, 4, "tools/call", "echo", `{"content":[{"type":"text","text":"hi"}]}`)
	e.answer(905, 100, 3, "tools/call", "slow", `{"content":[{"type":"text","text":"slept 800ms"}]}`)
	batches = append(batches, e.take())

	e.call(1000, 5, "tools/call", "hang", `{"name":"hang","arguments":{},"_meta":{"progressToken":5}}`, 2000)
	r := e.req(3000, 5, "tools/call", "hang", client.StateTimeout)
	r.Latency, r.Err = 2*time.Second, errors.New("MCP_TIMEOUT: tools/call: no answer within 2s")
	e.frame(3001, client.Out, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"timeout"}}`, client.VerdictSent, "")
	e.stderr(3400, "hang: done after 2.5s")
	e.stderr(3500, ", answering anyway\n")
	e.frame(3502, client.In, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"finally"}]}}`, client.VerdictLate, "late response for id 5: timed out 502ms ago")
	batches = append(batches, e.take())

	e.call(4000, 6, "tools/call", "slow", `{"name":"slow","arguments":{"ms":60000},"_meta":{"progressToken":6}}`, 60_000)
	e.progress(4800, 6, 1, 4, "warming up")
	e.stderr(5200, "slow: step 1/4\nslow: step 2/4\n")
	e.progress(5600, 6, 2, 4, "halfway")
	e.stderr(5700, "slow: step 3/4 (partial")
	batches = append(batches, e.take())
	return batches
}

// scenarioFrames is how many frames scenario holds.
const scenarioFrames = 16

// play connects hs, feeds the scenario batch by batch, and ticks the clock
// to nowMS.
func (hs *harness) play() {
	hs.t.Helper()
	hs.connect()
	for _, b := range scenario() {
		if cmd := hs.feed(b...); cmd == nil {
			hs.t.Fatal("eventsMsg did not re-arm the pump")
		}
	}
	hs.tick(nowMS)
}
