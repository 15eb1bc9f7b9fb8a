package capturetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// Outcomes drives a session with one call of each outcome the error count
// tells apart (client.Errored): tool-error answers with isError (an error),
// an echo the caller cancels (cancelled, not an error), and an echo that
// resolves. Record it with Record(t, Options{}, Outcomes(t)).
func Outcomes(t testing.TB) func(context.Context, *client.Client) {
	return func(ctx context.Context, c *client.Client) {
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		res, _, err := c.CallTool(ctx, "tool-error", json.RawMessage(`{"message":"the tool failed"}`), client.CallOptions{})
		if err != nil || !res.IsError {
			t.Fatalf("tool-error: %+v, %v", res, err)
		}
		call := c.GoTool(ctx, "echo", json.RawMessage(`{"value":"never","delay_ms":30000}`), client.CallOptions{})
		id, _ := call.ID.Int64()
		c.Cancel(id, "the user's cancel")
		if _, err := call.Wait(); !errors.Is(err, client.ErrAborted) {
			t.Fatalf("the cancelled echo: %v, want MCP_ABORTED", err)
		}
		if _, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"ok"}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
