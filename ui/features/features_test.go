package features

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/theme"
)

var t0 = uitest.T0

var press = uitest.Press

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// run returns the first message of cmd (nil for none).
func run(cmd tea.Cmd) tea.Msg {
	if msgs := uitest.Run(cmd); len(msgs) > 0 {
		return msgs[0]
	}
	return nil
}

func lists() ListedMsg {
	size := int64(12)
	return ListedMsg{HasResources: true, HasPrompts: true, HasCompletions: true,
		Resources: []mcp.Resource{
			{URI: "file:///notes.md", Name: "notes", MimeType: "text/markdown"},
			{URI: "file:///logo.png", Name: "logo", MimeType: "image/png", Size: &size},
		},
		Templates: []mcp.ResourceTemplate{{URITemplate: "db://{table}/rows{?limit}", Name: "rows"}},
		Prompts: []mcp.Prompt{
			{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}, {Name: "tone"}}},
			{Name: "plain"},
		},
	}
}

func newModel(w, h int) *Model {
	m := New(theme.New(theme.NoColor()))
	m.SetSize(w, h)
	m.SetNow(t0)
	m.SetLists(lists())
	return m
}

func frame(method string, params string) client.Event {
	return client.Event{Time: t0, Kind: client.EvFrame, Frame: &client.FrameInfo{
		Frame: client.Frame{Dir: client.In, Msg: jsonrpc.Message{Kind: jsonrpc.KindNotification, Method: method, Params: json.RawMessage(params)}},
	}}
}

func TestReadResourceAndSave(t *testing.T) {
	m := newModel(78, 20)
	if msg, ok := run(m.Update(press("enter"))).(ReadMsg); !ok || msg.URI != "file:///notes.md" {
		t.Fatalf("enter on a resource: %#v", msg)
	}
	if run(m.Update(press("enter"))) != nil {
		t.Fatal("a second read while one is in flight")
	}
	text := "# Notes\nline two\x1b[31m"
	m.Update(ReadResultMsg{URI: "file:///notes.md", Result: &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: "file:///notes.md", MimeType: "text/markdown", Text: &text}}}})
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "# Notes") || !strings.Contains(view, `line two\x1b[31m`) {
		t.Fatalf("text not shown, or not escaped:\n%s", view)
	}
	m.Update(press("down"))
	blob := base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G'})
	if msg, ok := run(m.Update(press("enter"))).(ReadMsg); !ok || msg.URI != "file:///logo.png" {
		t.Fatalf("%#v", msg)
	}
	m.Update(ReadResultMsg{URI: "file:///logo.png", Result: &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: "file:///logo.png", MimeType: "image/png", Blob: &blob}}}})
	view = ansi.Strip(m.View())
	if !strings.Contains(view, "file:///logo.png · blob · image/png · 4B") {
		t.Fatalf("blob not summarised:\n%s", view)
	}
	save, ok := run(m.Update(press("w"))).(SaveMsg)
	if !ok || save.URI != "file:///logo.png" || string(save.Data) != "\x89PNG" {
		t.Fatalf("%#v", save)
	}
	m.Update(SavedMsg{Path: "./logo.png"})
	if !strings.Contains(ansi.Strip(m.View()), "saved to ./logo.png") {
		t.Fatal("no status after saving")
	}
	m.Update(ReadResultMsg{URI: "x://gone", Err: errors.New("MCP_ERROR: server error -32002: not found")})
	if !strings.Contains(ansi.Strip(m.View()), "error: MCP_ERROR") || m.blob != nil {
		t.Fatal("a failed read")
	}
}

func TestTemplateForm(t *testing.T) {
	m := newModel(78, 20)
	m.Update(press("down"))
	m.Update(press("down"))
	if cmd := m.Update(press("enter")); run(cmd) != nil || !m.Capturing() {
		t.Fatal("enter on a template opens the form")
	}
	if !strings.Contains(ansi.Strip(m.View()), "values for db://{table}/rows{?limit}") {
		t.Fatalf("%s", ansi.Strip(m.View()))
	}
	// Both variables are required: an empty form is refused.
	if run(m.Update(press("ctrl+s"))) != nil || !m.Capturing() {
		t.Fatal("submitted without the required variables")
	}
	typeText(m, "10") // limit (fields are sorted)
	m.Update(press("down"))
	typeText(m, "users /x")
	msg, ok := run(m.Update(press("ctrl+s"))).(ReadMsg)
	if !ok || msg.URI != "db://users%20%2Fx/rows?limit=10" || m.Capturing() {
		t.Fatalf("%#v (capturing %v)", msg, m.Capturing())
	}
}

func TestPromptForm(t *testing.T) {
	m := newModel(78, 20)
	m.Update(press("P"))
	if m.CurrentView() != ViewPrompts {
		t.Fatal("P")
	}
	m.Update(press("enter"))
	if !m.Capturing() {
		t.Fatal("no form for a prompt with arguments")
	}
	if run(m.Update(press("ctrl+s"))) != nil {
		t.Fatal("the required argument was not enforced")
	}
	typeText(m, "Ada") // the refused submit focused the missing argument
	msg, ok := run(m.Update(press("ctrl+s"))).(GetPromptMsg)
	if !ok || msg.Name != "greet" || msg.Args["who"] != "Ada" || len(msg.Args) != 1 {
		t.Fatalf("%#v", msg)
	}
	text := "be nice"
	m.Update(PromptResultMsg{Name: "greet", Result: &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: "user", Content: mcp.PromptContent{Content: mcp.Content{Type: "text", Text: "Hello Ada"}}},
		{Role: "assistant", Content: mcp.PromptContent{Content: mcp.Content{Type: "resource"}, Resource: &mcp.ResourceContents{URI: "x://r", Text: &text}}},
	}}})
	view := ansi.Strip(m.View())
	for _, want := range []string{"── user", "Hello Ada", "── assistant", "[resource x://r]", "be nice"} {
		if !strings.Contains(view, want) {
			t.Fatalf("%q not in\n%s", want, view)
		}
	}
	m.Update(press("down"))
	if msg, ok := run(m.Update(press("enter"))).(GetPromptMsg); !ok || msg.Name != "plain" || msg.Args != nil {
		t.Fatalf("a prompt without arguments is got at once: %#v", msg)
	}
	m.Update(press("esc"))
}

func TestSubscribeAndUpdates(t *testing.T) {
	m := newModel(78, 20)
	msg, ok := run(m.Update(press("s"))).(SubscribeMsg)
	if !ok || msg.URI != "file:///notes.md" || !msg.On {
		t.Fatalf("%#v", msg)
	}
	m.Update(SubscribedMsg{URI: "file:///notes.md", On: true})
	m.Apply([]client.Event{frame(mcp.MethodResourceUpdated, `{"uri":"file:///notes.md"}`), frame(mcp.MethodResourceUpdated, `{"uri":"file:///notes.md"}`)})
	if !strings.Contains(ansi.Strip(m.View()), "subscribed updated 2×") {
		t.Fatalf("%s", ansi.Strip(m.View()))
	}
	if msg, ok := run(m.Update(press("s"))).(SubscribeMsg); !ok || msg.On {
		t.Fatalf("s again unsubscribes: %#v", msg)
	}
	m.Update(press("down"))
	m.Update(press("down"))
	if run(m.Update(press("s"))) != nil {
		t.Fatal("a template cannot be subscribed to")
	}
}

func TestListChanged(t *testing.T) {
	m := newModel(78, 20)
	if m.WantsRefresh() {
		t.Fatal("no list_changed yet")
	}
	m.Apply([]client.Event{frame(mcp.MethodPromptsChanged, `{}`), frame(mcp.MethodResourcesChanged, `{}`)})
	if !m.WantsRefresh() || m.WantsRefresh() {
		t.Fatal("one refresh per list_changed burst")
	}
	l := lists()
	l.Resources = l.Resources[:1]                                                  // logo removed
	l.Resources = append(l.Resources, mcp.Resource{URI: "file:///new", Name: "n"}) // added
	l.Prompts[0].Arguments = l.Prompts[0].Arguments[:1]                            // greet changed
	m.SetLists(l)
	if got := m.Title(); got != "Resources 3 (+1 −1 ~0) · Prompts 2 (+0 −0 ~1) · Log 0" {
		t.Fatal(got)
	}
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "file:///new  n  new") {
		t.Fatalf("%s", view)
	}
	m.Update(press("P"))
	if !strings.Contains(ansi.Strip(m.View()), "greet  who* changed") {
		t.Fatalf("%s", ansi.Strip(m.View()))
	}
}

func TestLogFilters(t *testing.T) {
	m := newModel(78, 20)
	m.Update(press("L"))
	m.Apply([]client.Event{
		frame(mcp.MethodLogMessage, `{"level":"debug","logger":"db","data":"connected"}`),
		frame(mcp.MethodLogMessage, `{"level":"error","logger":"http","data":{"status":500}}`),
		frame(mcp.MethodLogMessage, `{"level":"warning","data":"slow\nquery"}`),
	})
	view := ansi.Strip(m.View())
	for _, want := range []string{"level ≥ debug · logger all · server level not set · 3 of 3", "debug     [db] connected", `error     [http] {"status":500}`, `warning   slow\nquery`} {
		if !strings.Contains(view, want) {
			t.Fatalf("%q not in\n%s", want, view)
		}
	}
	for range 3 {
		m.Update(press("+")) // info, notice, warning
	}
	if got := len(m.visibleLog()); got != 2 {
		t.Fatalf("%d entries at warning and above", got)
	}
	if msg, ok := run(m.Update(press("s"))).(SetLevelMsg); !ok || msg.Level != "warning" {
		t.Fatalf("%#v", msg)
	}
	m.Update(LevelSetMsg{Level: "warning"})
	m.Update(press("f")) // db
	m.Update(press("f")) // http
	if v := m.visibleLog(); len(v) != 1 || v[0].logger != "http" {
		t.Fatalf("%+v", v)
	}
	m.Update(press("f")) // all
	if m.logger != "" {
		t.Fatal(m.logger)
	}
	if !strings.Contains(ansi.Strip(m.View()), "server level warning") {
		t.Fatal(ansi.Strip(m.View()))
	}
}

func TestReset(t *testing.T) {
	m := newModel(78, 20)
	m.Apply([]client.Event{frame(mcp.MethodLogMessage, `{"level":"info","data":"x"}`)})
	m.Update(SubscribedMsg{URI: "file:///notes.md", On: true})
	m.Reset()
	if len(m.resources) != 0 || len(m.subscribed) != 0 || m.log.Len() != 1 {
		t.Fatal("Reset keeps the log and forgets the server's state")
	}
	if !strings.Contains(ansi.Strip(m.View()), "waiting for the lists") {
		t.Fatal(ansi.Strip(m.View()))
	}
}

func TestGolden(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{78, 20}, {118, 36}} {
		for _, sc := range []struct {
			name  string
			setup func(m *Model)
		}{
			{"resources", func(m *Model) {
				text := "# Notes\n\nsonde reads resources."
				m.Update(SubscribedMsg{URI: "file:///notes.md", On: true})
				m.Update(ReadResultMsg{URI: "file:///notes.md", Result: &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: "file:///notes.md", MimeType: "text/markdown", Text: &text}}}})
			}},
			{"prompt_form", func(m *Model) {
				m.Update(press("P"))
				m.Update(press("enter"))
			}},
			{"log", func(m *Model) {
				m.Update(press("L"))
				m.Apply([]client.Event{
					frame(mcp.MethodLogMessage, `{"level":"info","logger":"db","data":"connected"}`),
					frame(mcp.MethodLogMessage, `{"level":"error","data":"boom"}`),
				})
			}},
		} {
			m := newModel(sz.w, sz.h)
			sc.setup(m)
			golden.Assert(t, sc.name+"_"+strconv.Itoa(sz.w)+"x"+strconv.Itoa(sz.h), m.Title()+"\n"+m.View())
		}
	}
}

func TestCompletionInForms(t *testing.T) {
	m := newModel(78, 20)
	m.Update(press("P"))
	m.Update(press("enter")) // greet: tone (focused), who*
	msg, ok := run(m.Update(press("ctrl+o"))).(CompleteMsg)
	if !ok || msg.Ref != (mcp.CompleteRef{Type: mcp.RefPrompt, Name: "greet"}) || msg.Argument != (mcp.CompleteArgument{Name: "tone", Value: ""}) || msg.Context != nil {
		t.Fatalf("%#v", msg)
	}
	m.Update(CompletionMsg{Argument: msg.Argument, Completion: &mcp.Completion{Values: []string{"calm", "warm"}}})
	if got := m.form.Texts()["tone"]; got != "calm" {
		t.Fatalf("tone %q", got)
	}
	if !strings.Contains(ansi.Strip(m.View()), "tone: calm · warm (ctrl+o: next)") {
		t.Fatalf("%s", ansi.Strip(m.View()))
	}
	if run(m.Update(press("ctrl+o"))) != nil || m.form.Texts()["tone"] != "warm" {
		t.Fatal("ctrl+o again steps to the next value without asking")
	}
	m.Update(press("down"))
	typeText(m, "A")
	msg, ok = run(m.Update(press("ctrl+o"))).(CompleteMsg)
	if !ok || msg.Argument != (mcp.CompleteArgument{Name: "who", Value: "A"}) || msg.Context["tone"] != "warm" {
		t.Fatalf("%#v", msg)
	}
	// A late answer for another field changes nothing.
	m.Update(CompletionMsg{Argument: mcp.CompleteArgument{Name: "tone"}, Completion: &mcp.Completion{Values: []string{"x"}}})
	if m.form.Texts()["tone"] != "warm" || m.form.Texts()["who"] != "A" {
		t.Fatal(m.form.Texts())
	}
	m.Update(CompletionMsg{Argument: msg.Argument, Err: errors.New("MCP_ERROR: server error -32601")})
	if !strings.Contains(ansi.Strip(m.View()), "completion: MCP_ERROR") {
		t.Fatal(ansi.Strip(m.View()))
	}
	// Templates complete with ref/resource.
	m.Update(press("esc"))
	m.Update(press("U"))
	m.Update(press("down"))
	m.Update(press("down"))
	m.Update(press("enter"))
	msg, ok = run(m.Update(press("ctrl+o"))).(CompleteMsg)
	if !ok || msg.Ref != (mcp.CompleteRef{Type: mcp.RefResource, URI: "db://{table}/rows{?limit}"}) || msg.Argument.Name != "limit" {
		t.Fatalf("%#v", msg)
	}
	// Without the capability, ctrl+o does nothing.
	l := lists()
	l.HasCompletions = false
	m.SetLists(l)
	if run(m.Update(press("ctrl+o"))) != nil {
		t.Fatal("completion without the capability")
	}
}

// TestCompletionHintLeavesWithItsField: the completion shown in the form's
// title belongs to its field; moving to another field, or closing the
// form, takes it away (#33: a stale hint stayed in the title).
func TestCompletionHintLeavesWithItsField(t *testing.T) {
	m := newModel(78, 20)
	m.Update(press("P"))
	m.Update(press("enter")) // greet: tone (focused), who*
	msg, ok := run(m.Update(press("ctrl+o"))).(CompleteMsg)
	if !ok {
		t.Fatal("ctrl+o asked nothing")
	}
	m.Update(CompletionMsg{Argument: msg.Argument, Completion: &mcp.Completion{Values: []string{"calm", "warm"}}})
	if !strings.Contains(ansi.Strip(m.View()), "tone: calm · warm") {
		t.Fatalf("no hint:\n%s", ansi.Strip(m.View()))
	}
	m.Update(press("down"))
	if v := ansi.Strip(m.View()); strings.Contains(v, "tone: calm") {
		t.Errorf("the hint of tone stayed on who:\n%s", v)
	}
	m.Update(press("up"))
	run(m.Update(press("ctrl+o")))
	m.Update(CompletionMsg{Argument: msg.Argument, Completion: &mcp.Completion{Values: []string{"calm", "warm"}}})
	m.Update(press("esc"))
	if v := ansi.Strip(m.Title() + "\n" + m.View()); strings.Contains(v, "tone: calm") {
		t.Errorf("the hint stayed after the form closed:\n%s", v)
	}
}
