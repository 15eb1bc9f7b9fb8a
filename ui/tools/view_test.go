package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

var sizes = []struct{ w, h int }{{78, 20}, {118, 36}}

// scenes put the pane in each of its views.
var scenes = []struct {
	name  string
	setup func(m *Model)
}{
	{"list", func(m *Model) {
		m.Update(keyDown)
		m.Update(keyDown)
		m.Update(keyDown)
		m.Update(keyDown)
		m.Update(keyDown) // greet (structured)
	}},
	{"list_hint_calling", func(m *Model) {
		m.Update(keyEnter)
		typeText(m, "hi")
		run(m.Update(keyCtrlS))
		run(m.Update(keyEnter))
		run(m.Update(keyCtrlS))
		m.Apply([]client.Event{listChanged(1)})
	}},
	{"filter", func(m *Model) {
		m.Update(press('/'))
		typeText(m, "lo")
	}},
	{"filter_nothing", func(m *Model) {
		m.Update(press('/'))
		typeText(m, "zzz")
	}},
	{"form", func(m *Model) {
		m.Update(press('/'))
		typeText(m, "greet")
		m.Update(keyEnter) // keeps the filter, back in the list
		m.Update(keyEnter) // opens the form
		m.Update(keyCtrlS)
	}},
	{"form_json", func(m *Model) {
		m.Update(press('/'))
		typeText(m, "batch")
		m.Update(keyEnter) // keeps the filter, back in the list
		m.Update(keyEnter) // opens the form
		m.Update(keyCtrlS)
	}},
	{"result", func(m *Model) {
		m.Update(ResultMsg{Tool: "greet (structured)", ID: jsonrpc.Int(12), Latency: 812 * time.Millisecond,
			Result: &mcp.CallToolResult{IsError: true,
				StructuredContent: json.RawMessage(`{"greeting":"Hello, Ada","formal":false,"count":2,"tags":["a",null]}`),
				Content: []mcp.Content{
					{Type: "text", Text: "Hello, Ada! This sentence is long enough to be wrapped at the narrower of the two sizes used by the goldens."},
					{Type: "image", MimeType: "image/png", Data: strings.Repeat("QUJD", 410)},
					{Type: "resource_link", URI: "file:///tmp/greeting.txt"},
				}}})
		m.SetNow(m.now.Add(3 * time.Second))
	}},
	{"result_error", func(m *Model) {
		m.Update(ResultMsg{Tool: "fail", ID: jsonrpc.String("a-1"), Latency: 4 * time.Millisecond, Err: &client.Error{
			Code: client.CodeRemote, Message: "server error -32001: fixture failure",
			RPC: &jsonrpc.Error{Code: -32001, Message: "fixture failure", Data: json.RawMessage(`{"tool":"fail"}`)}}})
	}},
	{"waiting", func(m *Model) { m.loaded, m.tools, m.visible = false, nil, nil }},
}

func TestGolden(t *testing.T) {
	for _, sc := range scenes {
		for _, sz := range sizes {
			name := fmt.Sprintf("%s_%dx%d", sc.name, sz.w, sz.h)
			t.Run(name, func(t *testing.T) {
				m := newModel(t, sz.w, sz.h)
				sc.setup(m)
				golden.Assert(t, name, view(t, m))
			})
		}
	}
}

// TestViewSize checks that every view fills exactly its size, small sizes
// included.
func TestViewSize(t *testing.T) {
	for _, sc := range scenes {
		for _, sz := range []struct{ w, h int }{{1, 1}, {12, 3}, {30, 6}, {60, 12}, {89, 24}, {90, 24}, {200, 60}} {
			m := newModel(t, sz.w, sz.h)
			sc.setup(m)
			checkSize(t, m.View(), sz.w, sz.h)
			m.SetSize(sz.w+7, sz.h+2) // resize after the fact
			checkSize(t, m.View(), sz.w+7, sz.h+2)
		}
	}
	m := newModel(t, 0, 0)
	if v := m.View(); v != "" {
		t.Errorf("0x0 view %q", v)
	}
}
