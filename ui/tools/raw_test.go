package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// annotatedRaw is a tools/call result whose blocks carry annotations, one
// of them malformed.
const annotatedRaw = `{"content":[` +
	`{"type":"text","text":"for you","annotations":{"audience":["user","assistant"],"priority":0.8,"lastModified":"2025-01-12T15:00:58Z"}},` +
	`{"type":"text","text":"odd","annotations":{"priority":"high","audience":["\u001b[31muser"]}}],"isError":false}`

func annotatedResult(t *testing.T) ResultMsg {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(annotatedRaw), &res); err != nil {
		t.Fatal(err)
	}
	return ResultMsg{Tool: "echo", ID: jsonrpc.Int(4), Result: &res, Raw: json.RawMessage(annotatedRaw)}
}

func TestResultAnnotations(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(annotatedResult(t))
	v := view(t, m)
	for _, want := range []string{
		"audience user, assistant · priority 0.8 · lastModified 2025-01-12T15:00:58Z",
		`audience \x1b[31muser · priority (not a number)`,
	} {
		if !strings.Contains(v, want) {
			t.Errorf("result view lacks %q:\n%s", want, v)
		}
	}
}

func TestResultRawToggle(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(annotatedResult(t))
	if !m.keys.Raw.Enabled() {
		t.Fatal("r is not enabled in the result view")
	}
	m.Update(press('r'))
	v := view(t, m)
	body := ansi.Strip(strings.Join(m.body(), "\n"))
	for _, want := range []string{"result (raw JSON)", `"content": [`, `"priority": "high"`, `"isError": false`} {
		if !strings.Contains(body, want) {
			t.Errorf("raw body lacks %q:\n%s", want, body)
		}
	}
	for _, want := range []string{"result (raw JSON)", `"content": [`} {
		if !strings.Contains(v, want) {
			t.Errorf("raw view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "[text]") {
		t.Errorf("raw view still draws the blocks:\n%s", v)
	}
	golden.Assert(t, "result_raw_78x20", view(t, m))
	m.Update(press('r'))
	if v := view(t, m); !strings.Contains(v, "[text]") || strings.Contains(v, "result (raw JSON)") {
		t.Errorf("r again did not go back to the drawn result:\n%s", v)
	}
	m.Update(keyEsc)
	if m.keys.Raw.Enabled() {
		t.Error("r is enabled in the list")
	}
}

func TestResultRawError(t *testing.T) {
	m := newModel(t, 78, 20)
	m.Update(ResultMsg{Tool: "fail", ID: jsonrpc.Int(10), Err: &client.Error{Code: client.CodeRemote,
		Message: "server error -32001: boom", RPC: &jsonrpc.Error{Code: -32001, Message: "boom", Data: json.RawMessage(`{"tool":"fail"}`)}}})
	m.Update(press('r'))
	v := view(t, m)
	if !strings.Contains(v, "error (raw JSON)") || !strings.Contains(v, `"code": -32001`) {
		t.Errorf("raw view of a remote error:\n%s", v)
	}
	m.Update(ResultMsg{Tool: "x", Err: &client.Error{Code: client.CodeTimeout, Message: "late"}})
	if v := view(t, m); !strings.Contains(v, "no result: the call failed") {
		t.Errorf("raw view of a timeout:\n%s", v)
	}
}
