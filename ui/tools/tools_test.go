package tools

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/form"
)

func TestCallFromForm(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(keyEnter) // echo
	if !m.Capturing() || m.form == nil || m.form.Tool() != "echo" {
		t.Fatal("enter did not open the form")
	}
	if msgs := run(m.Update(keyCtrlS)); len(msgs) != 0 {
		t.Fatalf("sent while invalid: %v", msgs)
	}
	if v := view(t, m); !strings.Contains(v, "✗ required") {
		t.Errorf("no error next to the field:\n%s", v)
	}
	typeText(m, "hi")
	m.Update(keyTab)
	typeText(m, "25")
	msgs := run(m.Update(keyEnter)) // enter on the last field submits
	want := CallMsg{Tool: "echo", Args: json.RawMessage(`{"value":"hi","delay_ms":25}`)}
	if len(msgs) != 1 || !reflect.DeepEqual(msgs[0], want) {
		t.Fatalf("messages %v, want %v", msgs, want)
	}
	if m.Capturing() || m.form != nil {
		t.Error("the form stayed open after submit")
	}
	// A second call while the first is in flight.
	m.Update(keyEnter)
	if got := m.form.Keys(); !got.Submit.Enabled() {
		t.Fatal("submit disabled")
	}
	run(m.Update(keyCtrlS)) // pre-filled with the last arguments
	if got := m.Title(); got != "Tools 9 · 2 calling" {
		t.Errorf("title %q", got)
	}
	if v := view(t, m); !strings.Contains(v, "› echo") || !strings.Contains(v, "2 calling…") {
		t.Errorf("no calling count in the list:\n%s", v)
	}
	m.Update(ResultMsg{Tool: "echo", ID: jsonrpc.Int(4), Latency: 25 * time.Millisecond,
		Result: &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "hi"}}}})
	if got := m.Title(); got != "Tools 9 · 1 calling" {
		t.Errorf("title after one result %q", got)
	}
}

func TestEscCancelsForm(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(keyEnter)
	typeText(m, "q") // typed into the field, not a quit
	if msgs := run(m.Update(keyEsc)); len(msgs) != 0 || m.form != nil || m.Capturing() {
		t.Fatalf("esc: msgs %v form %v", msgs, m.form)
	}
	if m.inFlight != 0 {
		t.Error("cancel counted a call")
	}
}

func TestNestedSchemaOpensJSONEditor(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(press('/'))
	typeText(m, "batch")
	m.Update(keyEnter) // keeps the filter
	m.Update(keyEnter) // the form
	if m.form == nil || m.form.Mode() != form.ModeJSON {
		t.Fatal("batch did not open the JSON editor")
	}
	run(m.Update(keyCtrlS))
	if v := view(t, m); !strings.Contains(v, "✗ terms: required") {
		t.Errorf("no error under the editor:\n%s", v)
	}
	m.Update(keyCtrlE) // to fields: terms becomes a JSON field
	if m.form.Mode() != form.ModeFields {
		t.Fatal("ctrl+e did not switch to fields")
	}
	typeText(m, `["a"]`)
	msgs := run(m.Update(keyCtrlS))
	want := CallMsg{Tool: "batch", Args: json.RawMessage(`{"terms":["a"],"limit":10}`)}
	if len(msgs) != 1 || !reflect.DeepEqual(msgs[0], want) {
		t.Fatalf("messages %v, want %v", msgs, want)
	}
}

func TestListChanged(t *testing.T) {
	m := newModel(t, 78, 20)
	out := listChanged(2)
	out.Frame.Dir = client.Out
	m.Apply([]client.Event{otherFrame(1), out, {Seq: 3, Kind: client.EvStderr, Stderr: []byte("x")}})
	if m.changed {
		t.Fatal("hint set without an incoming list_changed")
	}
	m.Apply([]client.Event{otherFrame(4), listChanged(5)})
	if got := m.Title(); got != "Tools 9 · list changed" {
		t.Errorf("title %q", got)
	}
	if v := view(t, m); !strings.Contains(v, "list changed (ctrl+l to refresh)") {
		t.Errorf("no hint:\n%s", v)
	}
	msgs := run(m.Update(tea.KeyPressMsg{Code: 'l', Mod: tea.ModCtrl}))
	if len(msgs) != 1 || msgs[0] != (RefreshMsg{}) {
		t.Fatalf("ctrl+l produced %v", msgs)
	}
	m.SetTools(fixtureTools()[:2])
	if m.changed || m.Title() != "Tools 2 · +0 −7 ~0" {
		t.Errorf("SetTools kept the hint, or did not count what changed: %q", m.Title())
	}
}

// A new list is compared with the old: added tools and tools whose
// definition changed (here the input schema) are marked, removed ones
// counted.
func TestListDiff(t *testing.T) {
	m := newModel(t, 78, 20)
	tools := fixtureTools()
	tools[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"other":{"type":"string"}}}`)
	tools = append(tools[:len(tools)-1], mcp.Tool{Name: "brand-new", InputSchema: json.RawMessage(`{"type":"object"}`)})
	m.SetTools(tools)
	if got := m.Title(); got != "Tools 9 · +1 −1 ~1" {
		t.Fatalf("title %q", got)
	}
	v := view(t, m)
	if !regexp.MustCompile(`(?m)› `+regexp.QuoteMeta(tools[0].Name)+` +changed`).MatchString(v) || !regexp.MustCompile(`(?m)brand-new +new`).MatchString(v) {
		t.Errorf("no marks:\n%s", v)
	}
	m.SetTools(tools)
	if got := m.Title(); got != "Tools 9" {
		t.Fatalf("the same list again changes nothing: %q", got)
	}
}

func TestSetToolsKeepsSelection(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(keyDown)
	m.Update(keyDown) // progress
	tools := fixtureTools()
	m.SetTools(append([]mcp.Tool{{Name: "new"}}, tools...))
	if got := m.selected().tool.Name; got != "progress" {
		t.Errorf("selected %q after SetTools", got)
	}
	m.SetTools(nil)
	if v := view(t, m); !strings.Contains(v, "the server lists no tools") {
		t.Errorf("empty list:\n%s", v)
	}
}

func TestReset(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(keyDown)
	m.Update(keyEnter) // add
	typeText(m, "1")
	m.Update(keyTab)
	typeText(m, "2")
	run(m.Update(keyCtrlS))
	m.Apply([]client.Event{listChanged(1)})
	m.Reset()
	if m.inFlight != 0 || m.changed || len(m.tools) != 9 {
		t.Errorf("reset: inFlight %d changed %v tools %d", m.inFlight, m.changed, len(m.tools))
	}
	m.Update(ResultMsg{Tool: "add", Err: &client.Error{Code: client.CodeProcessExit, Message: "exited"}})
	if m.inFlight != 0 {
		t.Errorf("a late result after Reset made inFlight %d", m.inFlight)
	}
	if string(m.lastArgs["add"]) != `{"a":1,"b":2}` {
		t.Errorf("last arguments lost: %s", m.lastArgs["add"])
	}
}

func TestMouse(t *testing.T) {
	m := newModel(t, 118, 36)
	m.Update(tea.MouseClickMsg{X: 3, Y: 3, Button: tea.MouseLeft})
	if got := m.selected().tool.Name; got != "progress" {
		t.Errorf("click selected %q", got)
	}
	m.Update(tea.MouseClickMsg{X: 80, Y: 1, Button: tea.MouseLeft}) // in the detail
	if got := m.selected().tool.Name; got != "progress" {
		t.Errorf("a click in the detail selected %q", got)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if got := m.selected().tool.Name; got != "fail" {
		t.Errorf("wheel selected %q", got)
	}
}

func TestKeys(t *testing.T) {
	m := newModel(t, 78, 20)
	check := func(name string, enabled map[string]bool) {
		t.Helper()
		k := m.Keys()
		for _, group := range k.FullHelp() {
			for _, b := range group {
				if b.Help().Key == "" || b.Help().Desc == "" {
					t.Errorf("%s: binding %v has no help", name, b.Keys())
				}
				if want, ok := enabled[b.Help().Desc]; ok && b.Enabled() != want {
					t.Errorf("%s: %q enabled %v, want %v", name, b.Help().Desc, b.Enabled(), want)
				}
			}
		}
	}
	check("list", map[string]bool{"call…": true, "call": false, "filter": true, "clear filter": false, "back": false, "next / call": false, "copy as sonde call": false})
	m.Update(press('/'))
	check("filter", map[string]bool{"call…": false, "keep filter": true, "copy as sonde call": false, "clear filter": true, "refresh list": false})
	m.Update(keyEsc)
	m.Update(keyEnter)
	check("form", map[string]bool{"call…": false, "call": true, "filter": false, "next / call": true, "cancel": true, "toggle": false})
	m.Update(keyEsc)
	m.Update(ResultMsg{Tool: "echo"})
	check("result", map[string]bool{"back": true, "older result": false, "newer result": false, "filter": false, "copy as sonde call": true})
	if len(m.Keys().ShortHelp()) == 0 {
		t.Error("no short help")
	}
}

// A list_changed notification older than the list request (applied late,
// since events and results travel separately) sets no hint; a newer one
// does.
func TestListChangedBeforeTheListIsNotAHint(t *testing.T) {
	m := newModel(t, 80, 20)
	asked := time.Unix(100, 0)
	m.SetToolsAsOf([]mcp.Tool{{Name: "echo"}}, asked)
	changed := func(at time.Time) client.Event {
		f := client.Frame{Dir: client.In, Time: at}
		f.Msg.Kind, f.Msg.Method = jsonrpc.KindNotification, mcp.MethodToolsChanged
		return client.Event{Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f}}
	}
	m.Apply([]client.Event{changed(asked.Add(-time.Millisecond))})
	if strings.Contains(m.Title(), "list changed") {
		t.Fatalf("title %q", m.Title())
	}
	m.Apply([]client.Event{changed(asked.Add(time.Millisecond))})
	if !strings.Contains(m.Title(), "list changed") {
		t.Fatalf("title %q", m.Title())
	}
}
