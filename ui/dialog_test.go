package ui

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/pending"
)

func ctrl(c rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: c, Mod: tea.ModCtrl} }

// serverReq is the event of a request from the server arriving.
func serverReq(ms int, id jsonrpc.ID, method, params string) client.Event {
	return client.Event{Time: at(ms), Kind: client.EvRequest, Req: &client.ReqInfo{
		Dir: client.In, ID: id, Method: method, State: client.StateReceived, Params: json.RawMessage(params)}}
}

// serverReqEnd is the event of a request from the server ending.
func serverReqEnd(ms int, id jsonrpc.ID, method string, state client.State) client.Event {
	return client.Event{Time: at(ms), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.In, ID: id, Method: method, State: state}}
}

const (
	samplingParams = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}`
	elicitParams   = `{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"}},"required":["name"]}}`
)

// dialogID is the id of the request whose dialog is open, or "" for none.
func (hs *harness) dialogID() string {
	if d, ok := hs.m.dlg.(*answer.Dialog); ok {
		return d.Request().ID.String()
	}
	return ""
}

func TestDialogOpensOnSamplingAndSends(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.connect()
	hs.feed(serverReq(100, jsonrpc.Int(0), mcp.MethodCreateMessage, samplingParams))
	if hs.dialogID() != "0" {
		t.Fatal("no dialog for the sampling request")
	}
	hs.tick(2600)
	screen := hs.screen()
	golden.Assert(t, "dialog_sampling_100x30", screen)
	for _, r := range "Paris" {
		hs.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	// Global keys do not apply while the dialog has the keyboard: q is text.
	hs.press("q")
	if hs.m.quitted {
		t.Fatal("q quit with the dialog open")
	}
	cmd := hs.send(ctrl('s'))
	if hs.m.dlg != nil || cmd == nil {
		t.Fatalf("ctrl+s: dialog %v, cmd %v", hs.m.dlg, cmd)
	}
	// The harness's client never received the request: Respond refuses, and
	// the status bar says the answer was not sent.
	hs.send(cmd())
	if !strings.Contains(hs.status(), "not sent: MCP_PROTOCOL") {
		t.Fatalf("status: %s", hs.status())
	}
}

func TestDialogQueueLaterAndPendingKey(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.connect()
	hs.feed(serverReq(100, jsonrpc.Int(0), mcp.MethodCreateMessage, samplingParams),
		serverReq(120, jsonrpc.String("e1"), mcp.MethodElicit, elicitParams))
	if hs.dialogID() != "0" {
		t.Fatalf("open: %q", hs.dialogID())
	}
	hs.press("esc") // answer later: the next one opens
	if hs.dialogID() != `"e1"` {
		t.Fatalf("after esc: %q", hs.dialogID())
	}
	hs.tick(2600)
	golden.Assert(t, "dialog_elicit_120x40", hs.screen())
	hs.press("esc")
	if hs.m.dlg != nil {
		t.Fatal("a dialog reopened by itself")
	}
	// Both wait in Pending; a on the first row reopens its dialog.
	hs.press("1")
	cmd := hs.press("a")
	if cmd == nil {
		t.Fatal("a on a waiting request gave no command")
	}
	msg := cmd()
	if am, ok := msg.(pending.AnswerMsg); !ok || am.ID != jsonrpc.Int(0) {
		t.Fatalf("a: %#v", msg)
	}
	hs.send(msg)
	if hs.dialogID() != "0" {
		t.Fatalf("after a: %q", hs.dialogID())
	}
	// The server cancels it: the dialog closes, and the request is gone.
	hs.feed(serverReqEnd(900, jsonrpc.Int(0), mcp.MethodCreateMessage, client.StateCancelled))
	if hs.m.dlg != nil || len(hs.m.asks.waiting) != 1 {
		t.Fatalf("after the server's cancel: dialog %v, waiting %d", hs.m.dlg, len(hs.m.asks.waiting))
	}
	// The elicitation accepted with its default.
	hs.send(pending.AnswerMsg{ID: jsonrpc.String("e1")})
	if cmd := hs.send(ctrl('s')); cmd == nil || hs.m.dlg != nil {
		t.Fatal("accept did not send")
	}
	if len(hs.m.asks.waiting) != 0 {
		t.Fatal("answered request still waiting")
	}
}

func TestDialogIgnoresOldSessions(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.connect()
	hs.send(eventsMsg{gen: hs.m.gen - 1, sub: hs.sub, evs: []client.Event{serverReq(100, jsonrpc.Int(0), mcp.MethodCreateMessage, samplingParams)}})
	if hs.m.dlg != nil {
		t.Fatal("a request of an old session opened a dialog")
	}
	// The end of an old session's request 0 does not end the new session's
	// request 0 (server-everything numbers from 0 in every session).
	hs.feed(serverReq(100, jsonrpc.Int(0), mcp.MethodCreateMessage, samplingParams))
	hs.send(pending.AnswerMsg{ID: jsonrpc.Int(0)})
	hs.press("esc")
	hs.send(eventsMsg{gen: hs.m.gen - 1, sub: hs.sub, evs: []client.Event{serverReqEnd(200, jsonrpc.Int(0), mcp.MethodCreateMessage, client.StateClosed)}})
	if len(hs.m.asks.waiting) != 1 {
		t.Fatal("an old session's outcome ended the new session's request")
	}
	hs.feed(serverReqEnd(300, jsonrpc.Int(0), mcp.MethodCreateMessage, client.StateAnswered))
	// A request answered at once (a reply file) never opens one.
	hs.feed(serverReq(100, jsonrpc.Int(1), mcp.MethodCreateMessage, samplingParams),
		serverReqEnd(101, jsonrpc.Int(1), mcp.MethodCreateMessage, client.StateAnswered))
	if hs.m.dlg != nil {
		t.Fatal("an answered request opened a dialog")
	}
}

func TestRootsEditorKey(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.connect()
	cmd := hs.press("O")
	if cmd == nil {
		t.Fatal("O gave no command")
	}
	hs.send(cmd())
	if _, ok := hs.m.dlg.(*answer.Roots); !ok {
		t.Fatalf("dialog %T", hs.m.dlg)
	}
	if !strings.Contains(hs.screen(), "Roots 0") {
		t.Fatal(hs.screen())
	}
	hs.press("a")
	for _, r := range "/" {
		hs.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	add := hs.press("enter")
	hs.send(add())
	apply := hs.press("enter")
	if hs.m.dlg != nil || apply == nil {
		t.Fatal("enter did not apply the roots")
	}
	// The harness's client did not declare roots: SetRoots says so.
	msg := apply()
	hs.send(msg)
	if rs, ok := msg.(rootsSetMsg); !ok || !errors.Is(rs.err, client.ErrProtocol) {
		t.Fatalf("%#v", msg)
	}
	if hs.m.answerErr == nil || !strings.Contains(hs.status(), "not sent: MCP_PROTOCOL: roots") {
		t.Fatal(hs.status())
	}
}

// TestDialogForClientTask follows a task sonde runs for the server: the
// server's request is answered at once with a CreateTaskResult, the task
// gets a row of its own in the server's direction, and its request waits
// for the user as "task:<taskId>", in a dialog and from the task's row.
func TestDialogForClientTask(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.connect()
	const taskID = "sonde-1-0a1b2c"
	ask := jsonrpc.String("task:" + taskID)
	task := func(ms int, status string, end bool) client.Event {
		return client.Event{Time: at(ms), Kind: client.EvTask, Task: &client.TaskInfo{Call: jsonrpc.Int(0), Dir: client.In, Method: mcp.MethodElicit,
			Task: mcp.Task{TaskID: taskID, Status: status, StatusMessage: map[bool]string{false: "waiting for sonde's user to answer"}[end]}, End: end}}
	}
	hs.feed(serverReq(100, jsonrpc.Int(0), mcp.MethodElicit, elicitParams),
		serverReqEnd(101, jsonrpc.Int(0), mcp.MethodElicit, client.StateAnswered),
		task(101, mcp.TaskWorking, false),
		serverReq(101, ask, mcp.MethodElicit, elicitParams))
	if hs.dialogID() != ask.String() {
		t.Fatalf("open: %q", hs.dialogID())
	}
	hs.press("esc")
	hs.tick(2600)
	hs.press("1", "z")
	screen := hs.screen()
	golden.Assert(t, "client_task_120x40", screen)
	if !strings.Contains(screen, "task elicitation/create") || !strings.Contains(screen, "working: waiting for sonde's user to answer") {
		t.Fatalf("no task row:\n%s", screen)
	}
	// a on the task's row opens its request; c does not cancel it (the
	// server owns the task).
	hs.press("g")
	if e, ok := hs.m.pending.Selected(); !ok || e.Method != "task" || e.Dir != client.In || e.Tool != mcp.MethodElicit {
		t.Fatalf("selected %+v", e)
	}
	if hs.press("c") != nil {
		t.Fatal("c on a task sonde runs gave a command")
	}
	cmd := hs.press("a")
	if cmd == nil {
		t.Fatal("a on the task's row gave no command")
	}
	if am, ok := cmd().(pending.AnswerMsg); !ok || am.ID != ask {
		t.Fatalf("a: %#v", cmd())
	}
	hs.send(pending.AnswerMsg{ID: ask})
	if hs.dialogID() != ask.String() {
		t.Fatalf("after a: %q", hs.dialogID())
	}
	// The answer went (ended by the client), then the task completed.
	hs.feed(serverReqEnd(3000, ask, mcp.MethodElicit, client.StateAnswered), task(3000, mcp.TaskCompleted, true))
	if hs.m.dlg != nil || len(hs.m.asks.waiting) != 0 {
		t.Fatalf("after the answer: dialog %v, waiting %d", hs.m.dlg, len(hs.m.asks.waiting))
	}
}

// TestDialogHoldsDeadlines: while the dialog of a request of the server's
// is open, the session's client is told to hold its deadlines; putting the
// question off (esc), or its end, lets them run again, and a reopened
// dialog holds them again.
func TestDialogHoldsDeadlines(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.connect()
	if hs.m.held != nil {
		t.Fatal("held before any question")
	}
	hs.feed(serverReq(100, jsonrpc.Int(0), mcp.MethodCreateMessage, samplingParams))
	if hs.m.held != hs.c {
		t.Fatalf("dialog open: held %v", hs.m.held)
	}
	hs.press("esc")
	if hs.m.held != nil {
		t.Fatal("still held after esc")
	}
	hs.send(pending.AnswerMsg{ID: jsonrpc.Int(0)})
	if hs.m.held != hs.c {
		t.Fatal("not held after reopening")
	}
	hs.feed(serverReqEnd(900, jsonrpc.Int(0), mcp.MethodCreateMessage, client.StateCancelled))
	if hs.m.dlg != nil || hs.m.held != nil {
		t.Fatalf("after the server's cancel: dialog %v, held %v", hs.m.dlg, hs.m.held)
	}
	// The roots editor is not a question of the server's: no hold.
	hs.send(rootsLoadedMsg{gen: hs.m.gen})
	if hs.m.dlg == nil || hs.m.held != nil {
		t.Fatalf("roots editor: dialog %v, held %v", hs.m.dlg, hs.m.held)
	}
}

// TestAuthorizeDialog: the OAuth flow's URL opens a dialog (before the
// server's requests) that says which grant runs and why, y copies it, esc
// hides it, and the end of the handshake closes it.
func TestAuthorizeDialog(t *testing.T) {
	hs := newHarness(t, 100, 30)
	const u = "http://127.0.0.1:9/as/authorize?client_id=c&state=s"
	hs.send(AuthorizeMsg{URL: u, Wait: 5 * time.Minute, Grant: "authorization code with PKCE (the default grant: a user signs in in a browser); client id https://sonde-mcp.github.io/sonde/client-metadata.json: sonde's client metadata document, since the authorization server supports client ID metadata documents"})
	d, ok := hs.m.dlg.(*answer.Authorize)
	if !ok || d.URL() != u {
		t.Fatalf("dialog %T", hs.m.dlg)
	}
	hs.tick(100)
	screen := hs.screen()
	golden.Assert(t, "dialog_authorize_100x30", screen)
	if !strings.Contains(screen, "Authorize sonde (OAuth)") || !strings.Contains(screen, u) || !strings.Contains(screen, "sonde waits up to 5m0s") ||
		!strings.Contains(screen, "Grant: authorization code with PKCE") {
		t.Fatalf("screen:\n%s", screen)
	}
	if cmd := hs.press("y"); cmd == nil {
		t.Fatal("y gave no clipboard command")
	}
	hs.press("esc")
	if hs.m.dlg != nil {
		t.Fatal("esc did not hide it")
	}
	// A request of the server's opens; the hidden dialog does not come back.
	hs.feed(serverReq(200, jsonrpc.Int(0), mcp.MethodCreateMessage, samplingParams))
	if hs.dialogID() != "0" {
		t.Fatalf("after esc: %q", hs.dialogID())
	}
	// A new URL (step-up) shows again, once the open dialog closes.
	hs.send(AuthorizeMsg{URL: u + "2", Wait: time.Minute})
	if hs.dialogID() != "0" {
		t.Fatal("the authorization took the place of an open dialog")
	}
	hs.press("esc")
	if d, ok := hs.m.dlg.(*answer.Authorize); !ok || d.URL() != u+"2" {
		t.Fatalf("after the request's dialog: %T", hs.m.dlg)
	}
	// The handshake ends: the dialog closes.
	hs.connect()
	if _, ok := hs.m.dlg.(*answer.Authorize); ok || hs.m.auth != nil {
		t.Fatalf("after the handshake: %T", hs.m.dlg)
	}
}
