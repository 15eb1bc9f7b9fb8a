package ui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// fixtureHarness is a harness whose session is a real client connected to
// the fixture (this test binary re-executed as the server), after the
// handshake and tools/list, delivered to the model as the UI does.
func fixtureHarness(t *testing.T) *harness {
	t.Helper()
	cfg := capturetest.Stdio(t)
	c := client.New(client.Options{Timeout: 10 * time.Second, ServerRequests: client.ServerRequests{Elicitation: true, Interactive: true}})
	sub := c.Subscribe(1 << 16)
	t.Cleanup(func() { c.Close() })
	if err := c.Connect(client.Stdio(cfg)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := c.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hs := newHarness(t, 120, 40)
	hs.c, hs.sub = c, sub
	hs.send(startedMsg{gen: hs.m.gen, sess: Conn{Client: c, Sub: sub}})
	hs.send(initializedMsg{gen: hs.m.gen, res: res, era: c.Era()})
	hs.send(toolsListedMsg{gen: hs.m.gen, tools: list})
	return hs
}

// call sends a tools.CallMsg as the Tools pane does, runs the call and
// returns its outcome.
func (hs *harness) call(tool, args string) toolDoneMsg {
	hs.t.Helper()
	for _, msg := range uitest.Run(hs.send(tools.CallMsg{Tool: tool, Args: json.RawMessage(args)})) {
		if done, ok := msg.(toolDoneMsg); ok {
			return done
		}
	}
	hs.t.Fatalf("calling %s gave no toolDoneMsg", tool)
	return toolDoneMsg{}
}

// pumpUntil feeds the client's events to the model, batch by batch, until
// cond holds (the bound only guards against a hang).
func (hs *harness) pumpUntil(what string, cond func() bool) {
	hs.t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		got := make(chan tea.Msg, 1)
		go func() { got <- waitEvents(hs.m.gen, hs.sub)() }()
		select {
		case msg := <-got:
			hs.send(msg)
		case <-deadline:
			hs.t.Fatalf("no %s within 10s", what)
		}
	}
}

func (hs *harness) urlDialog() *answer.URLRequired {
	d, _ := hs.m.dlg.(*answer.URLRequired)
	return d
}

// TestURLRequiredDialogRetry: a call from the Tools pane that the fixture
// answers with -32042 opens the URL dialog (the server named, the URL
// whole); the server's notifications/elicitation/complete marks it done; r
// sends the same call again, which succeeds, and no dialog opens for it.
func TestURLRequiredDialogRetry(t *testing.T) {
	hs := fixtureHarness(t)
	args := `{"url":"https://auth.example/login?state=abc","message":"Sign in first","complete_after_ms":0}`
	done := hs.call("url-required", args)
	if client.CodeOf(done.res.Err) != client.CodeURLRequired {
		t.Fatalf("first call: %v", done.res.Err)
	}
	hs.send(done)
	d := hs.urlDialog()
	if d == nil {
		t.Fatalf("no URL dialog: %T", hs.m.dlg)
	}
	screen := hs.screen()
	for _, want := range []string{
		"URL required by sonde-fixture 0.1.0 · tools/call url-required",
		"sonde-fixture 0.1.0 asks you to open 1 URL before tools/call url-required can go on.",
		"https://auth.example/login?state=abc", "host auth.example · elicitation id fixture-url-1", "1/1 waiting",
		"y copy URL", "r retry the call",
	} {
		if !strings.Contains(screen, want) {
			t.Fatalf("screen lacks %q:\n%s", want, screen)
		}
	}
	// The Tools pane (under the dialog) has the failure too.
	if tv := ansi.Strip(hs.m.tools.View()); !strings.Contains(tv, "MCP_URL_REQUIRED") {
		t.Fatalf("no failure in Tools:\n%s", tv)
	}
	hs.pumpUntil("the elicitation/complete notification", func() bool { return d.Done() == 1 })
	if !strings.Contains(hs.screen(), "1/1 ✓ done (the server sent elicitation/complete)") {
		t.Fatal(hs.screen())
	}
	// Global keys are the dialog's while it is open: q does not quit.
	hs.press("q")
	if hs.m.quitted || hs.urlDialog() != d {
		t.Fatal("q left the dialog")
	}
	msgs := uitest.Run(hs.press("r"))
	if hs.m.dlg != nil || len(msgs) != 1 {
		t.Fatalf("r: dialog %T, %d messages", hs.m.dlg, len(msgs))
	}
	retry, ok := msgs[0].(toolDoneMsg)
	if !ok || retry.call.Tool != "url-required" || string(retry.call.Args) != args {
		t.Fatalf("r sent %#v", msgs[0])
	}
	if retry.res.Err != nil || retry.res.Result == nil || !strings.Contains(retry.res.Result.Content[0].Text, "retried after the URL elicitation fixture-url-1") {
		t.Fatalf("retry: %+v %v", retry.res.Result, retry.res.Err)
	}
	hs.send(retry)
	if hs.m.dlg != nil || len(hs.m.urlReqs) != 0 {
		t.Fatal("a dialog after a successful retry")
	}
	if tv := ansi.Strip(hs.m.tools.View()); !strings.Contains(tv, "result 2/2") || !strings.Contains(tv, "elicitation fixture-url-1") {
		t.Fatalf("the retry's result is not shown:\n%s", tv)
	}
}

// TestURLRequiredDialogEsc: esc closes the dialog and sends nothing; the
// next call that needs a URL opens a new one.
func TestURLRequiredDialogEsc(t *testing.T) {
	hs := fixtureHarness(t)
	hs.send(hs.call("url-required", `{}`))
	if hs.urlDialog() == nil {
		t.Fatalf("no dialog: %T", hs.m.dlg)
	}
	if msgs := uitest.Run(hs.press("esc")); hs.m.dlg != nil || len(msgs) != 0 {
		t.Fatalf("esc: dialog %T, messages %v", hs.m.dlg, msgs)
	}
	// A -32042 with bad data is a plain failure: no dialog.
	bad := hs.call("url-required", `{"data":"{\"elicitations\":[{\"mode\":\"form\",\"message\":\"x\"}]}"}`)
	hs.send(bad)
	if hs.m.dlg != nil || client.CodeOf(bad.res.Err) != client.CodeRemote {
		t.Fatalf("bad data: dialog %T, %v", hs.m.dlg, bad.res.Err)
	}
	hs.send(hs.call("url-required", `{"message":"again"}`))
	if d := hs.urlDialog(); d == nil || d.Elicitations()[0].Message != "again" {
		t.Fatalf("second dialog: %T", hs.m.dlg)
	}
}

// urlErr is the error of a call the server refused with -32042.
func urlErr(ids ...string) error {
	var els []mcp.ElicitParams
	for _, id := range ids {
		els = append(els, mcp.ElicitParams{Mode: "url", ElicitationID: id, URL: "https://auth.example/" + id, Message: "Open " + id})
	}
	data, _ := json.Marshal(mcp.URLElicitationRequiredData{Elicitations: els})
	return &client.Error{Code: client.CodeURLRequired, Message: "server error -32042: auth", RPC: &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "auth", Data: data}}
}

func urlDone(gen int, tool string, ids ...string) toolDoneMsg {
	return toolDoneMsg{gen: gen, call: tools.CallMsg{Tool: tool, Args: json.RawMessage(`{}`)}, res: tools.ResultMsg{Tool: tool, ID: jsonrpc.Int(7), Err: urlErr(ids...)}}
}

// elicitComplete is the frame of notifications/elicitation/complete.
func elicitComplete(ms int, id string) client.Event {
	f := client.NewInFrame([]byte(`{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"`+id+`"}}`), at(ms))
	return client.Event{Time: f.Time, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f, Verdict: client.VerdictNotification}}
}

// TestURLRequiredDialogQueue: a server request waiting for the user goes
// first; URL dialogs wait their turn, oldest first; a complete notification
// marks the dialog it belongs to, open or waiting; a result of an old
// session opens nothing; a restart forgets them.
func TestURLRequiredDialogQueue(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.connect()
	hs.feed(serverReq(100, jsonrpc.Int(0), mcp.MethodCreateMessage, samplingParams))
	hs.send(urlDone(hs.m.gen, "clone", "a"))
	hs.send(urlDone(hs.m.gen, "push", "b", "c"))
	hs.send(urlDone(hs.m.gen-1, "old", "z"))
	if hs.dialogID() != "0" || len(hs.m.urlReqs) != 2 {
		t.Fatalf("dialog %q, %d URL dialogs waiting", hs.dialogID(), len(hs.m.urlReqs))
	}
	hs.feed(elicitComplete(200, "c"), elicitComplete(210, "nobody"))
	hs.press("esc") // the sampling request: answer later
	d := hs.urlDialog()
	if d == nil || d.Title() != "URL required by demo-server 1.4.0 · tools/call clone" {
		t.Fatalf("after esc: %T", hs.m.dlg)
	}
	hs.tick(2600)
	golden.Assert(t, "dialog_urlrequired_100x30", hs.screen())
	hs.press("esc")
	d = hs.urlDialog()
	if d == nil || d.Title() != "URL required by demo-server 1.4.0 · tools/call push" || d.Done() != 1 {
		t.Fatalf("the second: %T", hs.m.dlg)
	}
	// ? shows the dialog's keys; esc closes the help and the dialog stays.
	hs.press("?")
	if !hs.m.showHelp || !strings.Contains(hs.screen(), "Keys of the dialog: URL required by demo-server") || !strings.Contains(hs.screen(), "↓/j next URL") {
		t.Fatalf("help:\n%s", hs.screen())
	}
	hs.press("esc")
	if hs.m.showHelp || hs.urlDialog() != d {
		t.Fatal("esc on the help")
	}
	hs.send(urlDone(hs.m.gen, "pull", "d"))
	hs.m.restart() // (ctrl+r is the dialog's while it is open)
	if hs.m.dlg != nil || len(hs.m.urlReqs) != 0 {
		t.Fatal("a restart kept the URL dialogs")
	}
}
