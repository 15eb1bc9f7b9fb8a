package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// recorded is a Watched over batches of events a test hands it, as the
// tap's recording would grow, and the requests given to Inject with the
// answers it is told to give (the real socket is exercised by sonde
// watch's tests in internal/cli/tap).
type recorded struct {
	batches  chan []client.Event
	mu       sync.Mutex
	injected []string // method and params
	result   json.RawMessage
	err      error
	no       string
}

func newRecorded() *recorded { return &recorded{batches: make(chan []client.Event, 16)} }

func (r *recorded) Next(limit int) ([]client.Event, uint64, bool) {
	evs, ok := <-r.batches
	return evs, 0, ok
}

func (r *recorded) Inject(ctx context.Context, method string, params any) (jsonrpc.ID, json.RawMessage, error) {
	p, _ := json.Marshal(params)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.injected = append(r.injected, method+" "+string(p))
	return jsonrpc.String(fmt.Sprintf("sonde-4242-%d", len(r.injected))), r.result, r.err
}

func (r *recorded) NoInject() string { return r.no }

func newWatchHarness(t *testing.T, src *recorded) *harness {
	t.Helper()
	hs := newHarness(t, 160, 40, func(o *Options) { o.Watch, o.Start, o.Transport = src, nil, "tap · github" })
	return hs
}

// pump runs the model's read of the watched session once and applies it.
func (hs *harness) pump() tea.Cmd {
	hs.t.Helper()
	return hs.send(waitWatch(hs.m.wt.src)())
}

// hostSession is a host's handshake, its tools/list and a call still in
// flight, as the tap records them (the host's ids, in both directions).
func hostSession() []client.Event {
	var e events
	e.call(0, 1, "initialize", "", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude","version":"1"}}`, 0)
	e.answer(20, 0, 1, "initialize", "", `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"gh-server","version":"2.0"}}`)
	e.frame(21, client.Out, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, client.VerdictSent, "")
	e.call(30, 2, "tools/list", "", "", 0)
	e.answer(40, 30, 2, "tools/list", "", `{"tools":[{"name":"search","inputSchema":{"type":"object"}},{"name":"open","inputSchema":{"type":"object"}}]}`)
	e.call(50, 3, "tools/call", "search", `{"name":"search","arguments":{"q":"x"}}`, 0)
	return e.take()
}

// toolNames are the tools the watch took from the session, in order, that
// the Tools pane lists.
func toolNames(m *Model) []string {
	var names []string
	for _, it := range m.wt.known.Tools {
		if _, ok := m.tools.Tool(it.Key); ok {
			names = append(names, it.Key)
		}
	}
	return names
}

// A watched session starts no server: its events come from the recording
// and fill the panes; the status bar names the server from the host's
// handshake; the Tools pane lists what the host's tools/list answered.
func TestWatchShowsTheHostsSession(t *testing.T) {
	src := newRecorded()
	hs := newWatchHarness(t, src)
	if hs.m.wt == nil {
		t.Fatal("not watching")
	}
	if hs.m.Init() == nil {
		t.Fatal("Init returned nothing")
	}
	src.batches <- hostSession()
	if cmd := hs.pump(); cmd == nil {
		t.Fatal("the read was not re-armed")
	}
	status := hs.status()
	for _, want := range []string{"gh-server 2.0", "tap · github", "live", "pending 1"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q: %s", want, status)
		}
	}
	if names := toolNames(hs.m); strings.Join(names, ",") != "search,open" {
		t.Errorf("tools %v, want the host's list", names)
	}
	if hs.starts != 0 {
		t.Errorf("%d servers started", hs.starts)
	}
	if screen := hs.screen(); !strings.Contains(screen, "tools/call search") {
		t.Errorf("the host's call in flight is not on the screen:\n%s", screen)
	}
	// The recording ends: the read is not re-armed, and the status says so.
	close(src.batches)
	if cmd := hs.pump(); cmd != nil {
		t.Error("the read was re-armed after the end")
	}
	if !strings.Contains(hs.status(), "ended") {
		t.Errorf("status: %s", hs.status())
	}
}

// A call from the Tools pane is injected through the tap as tools/call
// with the form's arguments; its result comes back to the pane. An error
// answer is the pane's error.
func TestWatchInjectsACall(t *testing.T) {
	src := newRecorded()
	src.result = json.RawMessage(`{"content":[{"type":"text","text":"found"}]}`)
	hs := newWatchHarness(t, src)
	src.batches <- hostSession()
	hs.pump()
	cmd := hs.send(tools.CallMsg{Tool: "search", Args: json.RawMessage(`{"q":"y"}`)})
	if cmd == nil {
		t.Fatal("the call gave no command")
	}
	res, ok := cmd().(tools.ResultMsg)
	if !ok || res.Err != nil || res.Result == nil || res.Tool != "search" {
		t.Fatalf("result %+v", res)
	}
	if got := strings.Join(src.injected, "|"); got != `tools/call {"name":"search","arguments":{"q":"y"}}` {
		t.Errorf("injected %s", got)
	}
	// The result is shown under the id the tap gave the request, the one
	// Frames and Pending show (not "id –").
	if want := jsonrpc.String("sonde-4242-1"); res.ID != want {
		t.Errorf("result id %v, want %v", res.ID, want)
	}
	hs.send(res)
	if screen := hs.screen(); !strings.Contains(screen, `search · id "sonde-4242-1"`) {
		t.Errorf("the result's header lacks the injected id:\n%s", screen)
	}
	src.err = &client.Error{Code: client.CodeRemote, Message: "tools/call: -32602 bad", RPC: &jsonrpc.Error{Code: -32602, Message: "bad"}}
	res = hs.send(tools.CallMsg{Tool: "search", Args: json.RawMessage(`{}`)})().(tools.ResultMsg)
	if !errors.Is(res.Err, client.ErrRemote) {
		t.Errorf("error %v", res.Err)
	}
	// ctrl+l (the pane's refresh) injects tools/list.
	hs.send(tools.RefreshMsg{})()
	if last := src.injected[len(src.injected)-1]; last != "tools/list {}" {
		t.Errorf("refresh injected %s", last)
	}
}

// Nothing is injected into an ended session, nor into one whose tap takes
// no requests, and the status bar says why; the host's requests cannot be
// cancelled from here; q quits at once, whatever the host has in flight;
// restart and record are off.
func TestWatchRefusals(t *testing.T) {
	src := newRecorded()
	src.no = "this tap takes no injected requests"
	hs := newWatchHarness(t, src)
	src.batches <- hostSession()
	hs.pump()
	if cmd := hs.send(tools.CallMsg{Tool: "search", Args: json.RawMessage(`{}`)}); cmd != nil {
		t.Error("a call was sent into a session that takes none")
	}
	if !strings.Contains(hs.status(), "takes no injected requests") {
		t.Errorf("status: %s", hs.status())
	}
	src.no = ""
	close(src.batches)
	hs.pump()
	if cmd := hs.send(tools.CallMsg{Tool: "search", Args: json.RawMessage(`{}`)}); cmd != nil {
		t.Error("a call was sent into an ended session")
	}
	if !strings.Contains(hs.status(), "the session ended") {
		t.Errorf("status: %s", hs.status())
	}
	hs.send(pending.CancelMsg{ID: 3})
	if !strings.Contains(hs.status(), "the host's to cancel") {
		t.Errorf("status: %s", hs.status())
	}
	if hs.m.keys.Restart.Enabled() || hs.m.keys.Record.Enabled() {
		t.Error("restart or record enabled in a watched session")
	}
	if len(src.injected) != 0 {
		t.Errorf("injected %v", src.injected)
	}
	if !isQuit(hs.press("q")) {
		t.Error("q did not quit with the host's request in flight")
	}
}

// The Features pane lists the resources and prompts the host's lists
// answered; its refresh injects the lists the server declared (every page),
// and a prompt's get is injected too.
func TestWatchFeatures(t *testing.T) {
	src := newRecorded()
	hs := newWatchHarness(t, src)
	var e events
	e.call(0, 1, "initialize", "", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude","version":"1"}}`, 0)
	e.answer(20, 0, 1, "initialize", "", `{"protocolVersion":"2025-06-18","capabilities":{"prompts":{}},"serverInfo":{"name":"s","version":"1"}}`)
	e.call(30, 2, "prompts/list", "", "", 0)
	e.answer(40, 30, 2, "prompts/list", "", `{"prompts":[{"name":"summarize"},{"name":"review"}]}`)
	src.batches <- e.take()
	hs.pump()
	if l := hs.m.wt.listed; len(l.Prompts) != 2 || !l.HasPrompts || l.HasResources {
		t.Fatalf("listed %+v", l)
	}
	src.result = json.RawMessage(`{"prompts":[{"name":"summarize"}]}`)
	msg := hs.send(features.RefreshMsg{})()
	if _, ok := msg.(featuresListedMsg); !ok {
		t.Fatalf("refresh gave %T", msg)
	}
	if got := strings.Join(src.injected, "|"); got != "prompts/list {}" {
		t.Errorf("the refresh injected %s (the server declared prompts only)", got)
	}
	src.injected = nil
	src.result = json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)
	res, ok := hs.send(features.GetPromptMsg{Name: "summarize", Args: map[string]string{"n": "1"}})().(features.PromptResultMsg)
	if !ok || res.Err != nil || res.Result == nil || len(res.Result.Messages) != 1 {
		t.Fatalf("prompt %+v", res)
	}
	if got := strings.Join(src.injected, "|"); got != `prompts/get {"name":"summarize","arguments":{"n":"1"}}` {
		t.Errorf("injected %s", got)
	}
}

// injectList follows nextCursor over the pages, and says what is wrong
// with a page that has no array.
func TestInjectList(t *testing.T) {
	src := &pages{results: []string{`{"prompts":[{"name":"a"}],"nextCursor":"p2"}`, `{"prompts":[{"name":"b"}]}`}}
	got, err := injectList[mcp.Prompt](context.Background(), src, mcp.MethodPromptsList, "prompts")
	if err != nil || len(got) != 2 || got[1].Name != "b" || strings.Join(src.params, "|") != `{}|{"cursor":"p2"}` {
		t.Fatalf("%v %v %v", got, err, src.params)
	}
	src = &pages{results: []string{`{"nothing":1}`}}
	if _, err := injectList[mcp.Prompt](context.Background(), src, mcp.MethodPromptsList, "prompts"); !errors.Is(err, client.ErrProtocol) {
		t.Errorf("error %v", err)
	}
}

// pages answers each Inject with the next of its results.
type pages struct {
	results []string
	params  []string
}

func (p *pages) Next(int) ([]client.Event, uint64, bool) { return nil, 0, false }
func (p *pages) NoInject() string                        { return "" }
func (p *pages) Inject(ctx context.Context, method string, params any) (jsonrpc.ID, json.RawMessage, error) {
	b, _ := json.Marshal(params)
	p.params = append(p.params, string(b))
	r := p.results[0]
	p.results = p.results[1:]
	return jsonrpc.ID{}, json.RawMessage(r), nil
}

// What the server says of itself in the host's handshake reaches the
// status bar escaped, as does a server's error in a refusal note.
func TestWatchEscapesServerText(t *testing.T) {
	src := newRecorded()
	hs := newWatchHarness(t, src)
	var e events
	e.call(0, 1, "initialize", "", `{}`, 0)
	e.answer(20, 0, 1, "initialize", "", `{"protocolVersion":"x\u001b[2J","capabilities":{},"serverInfo":{"name":"evil\u001b]0;pwned\u0007","version":"1"}}`)
	src.batches <- e.take()
	hs.pump()
	hs.send(injectedMsg{method: "tools/list", err: errors.New("boom \x1b[31m")})
	if bar := hs.m.statusBar(); strings.Contains(bar, "\x1b]0;pwned") || strings.Contains(bar, "\x1b[2J") || strings.Contains(bar, "boom \x1b[31m") {
		t.Errorf("server text reached the status bar unescaped: %q", bar)
	}
	if !strings.Contains(hs.status(), "evil") {
		t.Errorf("status: %s", hs.status())
	}
}

// A tools/list the host gave up on (cancelled) whose answer came late is
// still the server's tool list: the Tools pane lists it. A duplicate
// answer changes nothing.
func TestWatchTakesALateToolsList(t *testing.T) {
	src := newRecorded()
	hs := newWatchHarness(t, src)
	var e events
	e.call(30, 2, "tools/list", "", "", 0)
	e.req(35, 2, "tools/list", "", client.StateCancelled)
	e.frame(40, client.In, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"search","inputSchema":{"type":"object"}}]}}`, client.VerdictLate, "response for id 2 arrived 5ms after it ended (cancelled)")
	src.batches <- e.take()
	hs.pump()
	if names := toolNames(hs.m); strings.Join(names, ",") != "search" {
		t.Fatalf("tools %v, want the late answer's", names)
	}
	e.frame(50, client.In, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"other","inputSchema":{"type":"object"}}]}}`, client.VerdictDuplicate, "second response for id 2")
	src.batches <- e.take()
	hs.pump()
	if _, ok := hs.m.tools.Tool("other"); ok {
		t.Error("a duplicate answer reached the Tools pane")
	}
}
