// Package tools is the Tools pane of sonde's TUI: pick a tool, fill in its
// arguments, call it, and read the result.
//
// Views: the tool list (fuzzy filter on "/", the selected tool's description
// and input schema summary beside or below it), the argument form (package
// form: one field per property, or a raw JSON editor), and the result view
// (the last Options.Results results, stepped with "[" and "]").
//
// Messages the pane returns for the root to act on (as tea.Cmd):
//   - CallMsg: start tools/call with these arguments, without blocking the
//     UI, and later send the outcome back as a ResultMsg through Update.
//   - RefreshMsg: run tools/list again and call SetTools with the answer.
//
// The root sends ResultMsg through Update whichever pane has the focus.
// Several calls may be in flight at once; the list shows how many per tool.
package tools

import (
	"encoding/json"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// CallMsg asks the root to call Tool with Args (a JSON object, already
// validated against the tool's inputSchema when it compiles).
type CallMsg struct {
	Tool string
	Args json.RawMessage
}

// RefreshMsg asks the root to run tools/list again.
type RefreshMsg struct{}

// ResultMsg is the outcome of a call started for a CallMsg. Err is set when
// the call failed (a *client.Error such as MCP_TIMEOUT); Result and Raw hold
// the tools/call result otherwise (Raw may be set alone when the result did
// not decode). ID is the request id, unset when the call never got one.
// Args are the arguments the call was made with (a JSON object, or empty
// when unknown).
type ResultMsg struct {
	Tool    string
	Args    json.RawMessage
	ID      jsonrpc.ID
	Result  *mcp.CallToolResult
	Raw     json.RawMessage
	Err     error
	Latency time.Duration
}
