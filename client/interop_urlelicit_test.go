package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// TestInteropURLRequired: server-everything's trigger-url-elicitation
// (listed only to a client that declares URL-mode elicitation) with
// errorPath answers -32042 with a prerequisite URL; sonde reports it as
// MCP_URL_REQUIRED with that URL; the retry with the same arguments in the
// same session succeeds, through the request path (an elicitation/create in
// URL mode, which the handler accepts).
func TestInteropURLRequired(t *testing.T) {
	bin := everythingServer(t)
	var asked []mcp.ElicitParams
	handler := func(r ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
		var p mcp.ElicitParams
		if r.Method != mcp.MethodElicit || json.Unmarshal(r.Params, &p) != nil {
			return nil, nil, false
		}
		asked = append(asked, p) // the reader goroutine: read after the call returns
		return json.RawMessage(`{"action":"accept"}`), nil, true
	}
	s := startPeer(t, Options{Timeout: 20 * time.Second, ServerRequests: ServerRequests{Elicitation: true, Handler: handler}}, bin)
	s.init()
	ctx := context.Background()
	args := json.RawMessage(`{"url":"https://example.com","errorPath":true}`)
	_, _, err := s.c.CallTool(ctx, "trigger-url-elicitation", args, CallOptions{})
	if !errors.Is(err, ErrURLRequired) || CodeOf(err) != CodeURLRequired {
		t.Fatalf("first call: %v", err)
	}
	els, ok := URLElicitations(err)
	if !ok || len(els) != 1 || els[0].URL != "https://modelcontextprotocol.io" || els[0].Mode != "url" || els[0].ElicitationID == "" {
		t.Fatalf("elicitations %+v (%v)", els, ok)
	}
	res, _, err := s.c.CallTool(ctx, "trigger-url-elicitation", args, CallOptions{})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "User completed the URL elicitation flow") {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != "https://example.com" {
		t.Fatalf("the retry's elicitation/create: %+v", asked)
	}
}
