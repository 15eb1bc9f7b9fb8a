package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestResults(t *testing.T) {
	m := New(newModel(t, 78, 20).st, Options{Results: 3})
	m.SetSize(78, 20)
	m.SetTools(fixtureTools())
	for i := 1; i <= 5; i++ {
		m.Update(ResultMsg{Tool: "echo", ID: jsonrpc.Int(int64(i)),
			Result: &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "result " + string(rune('0'+i))}}}})
	}
	if m.results.Len() != 3 || m.results.Evicted() != 2 {
		t.Fatalf("kept %d, evicted %d", m.results.Len(), m.results.Evicted())
	}
	if m.mode != modeResult || !strings.Contains(view(t, m), "result 5") {
		t.Fatalf("the newest result is not shown:\n%s", view(t, m))
	}
	m.Update(press('['))
	m.Update(press('['))
	m.Update(press('['))
	if v := view(t, m); !strings.Contains(v, "result 3") || !strings.Contains(v, "result 1/3 (+2 dropped)") {
		t.Errorf("[ did not step back:\n%s", v)
	}
	if m.keys.Older.Enabled() {
		t.Error("[ enabled on the oldest result")
	}
	m.Update(press(']'))
	if !strings.Contains(view(t, m), "result 4") {
		t.Error("] did not step forward")
	}
	m.Update(keyEsc)
	if m.mode != modeList {
		t.Error("esc did not return to the list")
	}
	m.Update(press(']'))
	if m.mode != modeResult || m.cur != 2 {
		t.Error("] in the list does not open the newest result")
	}
}

func TestResultContent(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(ResultMsg{Tool: "greet (structured)", ID: jsonrpc.String("7"), Latency: 1234 * time.Microsecond,
		Result: &mcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(`{"greeting":"hi"}`), Content: []mcp.Content{
			{Type: "text", Text: "line one\nline\ttwo \x1b[31mred"},
			{Type: "image", MimeType: "image/png", Data: strings.Repeat("QUJD", 410)},
			{Type: "audio", MimeType: "audio/wav", Data: "QUI="},
			{Type: "resource_link", URI: "file:///tmp/a.txt"},
			{Type: "resource"},
		}}})
	v := view(t, m)
	for _, want := range []string{
		`greet (structured) · id "7" · 1.2ms · isError`,
		"line one", `line    two \x1b[31mred`,
		"[image image/png, 1.2KiB]", "[audio audio/wav, 2B]", "[resource_link file:///tmp/a.txt]", "[resource]",
		"structuredContent", `"greeting": "hi"`,
	} {
		if !strings.Contains(v, want) {
			t.Errorf("result view lacks %q:\n%s", want, v)
		}
	}
}

func TestResultError(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(ResultMsg{Tool: "echo", ID: jsonrpc.Int(9), Latency: 30 * time.Second,
		Err: &client.Error{Code: client.CodeTimeout, Message: "no answer to tools/call after 30s"}})
	m.Update(ResultMsg{Tool: "fail", ID: jsonrpc.Int(10), Err: &client.Error{Code: client.CodeRemote,
		Message: "server error -32001: boom", RPC: &jsonrpc.Error{Code: -32001, Message: "boom", Data: json.RawMessage(`{"tool":"fail"}`)}}})
	v := view(t, m)
	if !strings.Contains(v, "MCP_ERROR: server error -32001: boom") || !strings.Contains(v, `"tool": "fail"`) {
		t.Errorf("remote error:\n%s", v)
	}
	m.Update(press('['))
	if v := view(t, m); !strings.Contains(v, "MCP_TIMEOUT: no answer to tools/call after 30s") {
		t.Errorf("timeout:\n%s", v)
	}
	m.Update(ResultMsg{Tool: "x", Err: errors.New("MCP_BUSY: too many")})
	if v := view(t, m); !strings.Contains(v, "x · id – · 0µs") {
		t.Errorf("a call without an id:\n%s", v)
	}
}

func TestResultScroll(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(ResultMsg{Tool: "big", ID: jsonrpc.Int(1),
		Result: &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: strings.Repeat("word ", 2000)}}}})
	top := view(t, m)
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.scroll != 17+3 {
		t.Errorf("scroll %d after a page and a wheel step", m.scroll)
	}
	m.Update(press('G'))
	bottom := view(t, m)
	n := len(m.body())
	if bottom == top || !strings.Contains(bottom, fmt.Sprintf("-%d/%d", n, n)) {
		t.Errorf("end did not scroll to the bottom:\n%s", bottom)
	}
	m.Update(press('g'))
	if m.scroll != 0 {
		t.Error("home did not scroll to the top")
	}
}

func TestResultWhileFormOpen(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(keyEnter)
	m.Update(ResultMsg{Tool: "add", ID: jsonrpc.Int(1), Result: &mcp.CallToolResult{}})
	if m.mode != modeForm || !m.Capturing() {
		t.Fatal("a result took the keyboard from the form")
	}
	m.Update(keyEsc)
	if m.mode != modeResult {
		t.Error("the result is not shown after the form closes")
	}
}

// An isError result is an error in the pane: its text in the error colour
// with a label saying the tool failed, and "✗ failed" beside the tool in
// the list until a call of it succeeds.
func TestResultIsErrorShown(t *testing.T) {
	st := theme.New(theme.Dark())
	m := New(st, Options{})
	m.SetSize(78, 20)
	m.SetTools(fixtureTools())
	m.Update(ResultMsg{Tool: "echo", ID: jsonrpc.Int(1),
		Result: &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: "text", Text: "no such file"}}}})
	v := m.View()
	if !strings.Contains(v, st.Error.Render("no such file")) || !strings.Contains(ansi.Strip(v), "isError: the tool failed") {
		t.Fatalf("isError text not drawn as an error:\n%q", v)
	}
	m.mode = modeList
	if v := ansi.Strip(m.View()); !regexp.MustCompile(`echo +✗ failed`).MatchString(v) {
		t.Fatalf("the list does not mark the failed tool:\n%s", v)
	}
	m.Update(ResultMsg{Tool: "echo", ID: jsonrpc.Int(2), Result: &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "ok"}}}})
	m.mode = modeList
	if v := ansi.Strip(m.View()); strings.Contains(v, "failed") {
		t.Fatalf("a successful call left the mark:\n%s", v)
	}
}
