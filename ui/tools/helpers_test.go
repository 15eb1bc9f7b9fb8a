package tools

import (
	"encoding/json"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/theme"
)

var (
	keyEnter = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyEsc   = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyDown  = tea.KeyPressMsg{Code: tea.KeyDown}
	keyTab   = tea.KeyPressMsg{Code: tea.KeyTab}
	keyCtrlS = tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	keyCtrlE = tea.KeyPressMsg{Code: 'e', Mod: tea.ModCtrl}
)

func press(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(press(r))
	}
}

// fixtureTools are the six tools of the fixture server plus awkward names
// and schemas.
func fixtureTools() []mcp.Tool {
	obj := func(props, required string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":[` + required + `],"additionalProperties":false}`)
	}
	return []mcp.Tool{
		{Name: "echo", Description: "Returns value after delay_ms; concurrent calls with different delays answer out of order.",
			InputSchema: obj(`"value":{"type":"string","description":"Text to return."},
				"delay_ms":{"type":"integer","description":"Milliseconds to wait before answering (default 0).","minimum":0,"maximum":600000}`, `"value"`),
			OutputSchema: obj(`"value":{"type":"string"}`, `"value"`)},
		{Name: "add", Description: "Adds two numbers.",
			InputSchema: obj(`"a":{"type":"number","description":"First addend."},"b":{"type":"number","description":"Second addend."}`, `"a","b"`)},
		{Name: "progress", Description: "Sends notifications/progress for each step when the call has a progressToken.",
			InputSchema: obj(`"steps":{"type":"integer","description":"Number of steps (default 3).","minimum":0,"maximum":10000}`, ``)},
		{Name: "fail", Description: "Answers with JSON-RPC error -32001.",
			InputSchema: obj(`"message":{"type":"string","description":"Error message."}`, ``)},
		{Name: "tool-error", Description: "Answers with a tool result that has isError: true.",
			InputSchema: obj(`"message":{"type":"string"}`, ``)},
		{Name: "greet (structured)", Title: "Greeter",
			InputSchema: obj(`"name":{"type":"string"},"style":{"enum":["formal","casual"],"default":"casual","description":"How to greet."},"shout":{"type":"boolean","default":false}`, `"name"`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{Name: "héllo wörld", Description: "Multi-byte name.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "batch", Description: "Nested arguments need the JSON editor.",
			InputSchema: obj(`"terms":{"type":"array","items":{"type":"string"}},"limit":{"type":"integer","default":10}`, `"terms"`)},
		{Name: "raw"},
	}
}

func newModel(t testing.TB, w, h int) *Model {
	t.Helper()
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(w, h)
	m.SetNow(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	m.SetTools(fixtureTools())
	return m
}

// view returns the view without styling and checks its size.
func view(t testing.TB, m *Model) string {
	t.Helper()
	v := m.View()
	checkSize(t, v, m.w, m.h)
	return ansi.Strip(v)
}

// checkSize fails unless v is exactly h lines of exactly w cells.
var checkSize = uitest.CheckScreen

func visibleNames(m *Model) []string {
	var out []string
	for _, i := range m.visible {
		out = append(out, m.tools[i].tool.Name)
	}
	return out
}

// run executes a command (and the commands of a batch) and returns the
// messages.
var run = uitest.Run

func listChanged(seq uint64) client.Event {
	return client.Event{Seq: seq, Kind: client.EvFrame, Frame: &client.FrameInfo{
		Frame:   client.Frame{Dir: client.In, Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), Msg: jsonrpc.Message{Kind: jsonrpc.KindNotification, Method: mcp.MethodToolsChanged}},
		Verdict: client.VerdictNotification}}
}

func otherFrame(seq uint64) client.Event {
	return client.Event{Seq: seq, Kind: client.EvFrame, Frame: &client.FrameInfo{
		Frame:   client.Frame{Dir: client.In, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), Msg: jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(1)}},
		Verdict: client.VerdictResolved}}
}
