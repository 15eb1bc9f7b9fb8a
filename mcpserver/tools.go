package mcpserver

import (
	"context"
	"reflect"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A toolFunc is a tool's body: its structured result and a short text
// summary of it, or an error, which the agent gets as an isError result
// whose text is the error's message (say what to do in it). With an error,
// a result that is not the zero value goes out too, as structuredContent
// (the facts of a failure: session_start's stderr head). A panic is not
// caught: a tool must not panic.
type toolFunc[In, Out any] func(ctx context.Context, in In) (Out, string, error)

// addTool registers t with body f. Its input and output schemas are
// derived from In and Out (field tags `json` and `jsonschema`, the
// description) unless t sets them; the result carries Out as
// structuredContent and the summary as its one text block.
func addTool[In, Out any](s *Server, t *sdk.Tool, f toolFunc[In, Out]) {
	sdk.AddTool(s.sdk, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		out, summary, err := f(context.WithValue(ctx, callerKey{}, req.Session), in)
		if err != nil {
			if reflect.ValueOf(&out).Elem().IsZero() {
				return nil, out, err
			}
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, out, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: summary}}}, out, nil
	})
}

// readOnly are the annotations of a tool that changes nothing: it reads
// what sonde already holds.
func readOnly(title string) *sdk.ToolAnnotations {
	f := false
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: &f}
}

// acting are the annotations of a tool that acts on the target server
// (starts it, sends to it, stops it): not read-only; destructive says
// whether what it does can end or lose something; openWorld whether it
// reaches beyond sonde's own state.
func acting(title string, destructive, idempotent bool) *sdk.ToolAnnotations {
	t := true
	return &sdk.ToolAnnotations{Title: title, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &t}
}

type callerKey struct{}

// caller is the MCP session of the client whose tool call ctx is (nil:
// unknown), which owns the sessions it starts.
func caller(ctx context.Context) *sdk.ServerSession {
	ss, _ := ctx.Value(callerKey{}).(*sdk.ServerSession)
	return ss
}
