package client

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// TestURLRequiredThenRetry: the fixture's url-required answers -32042
// with one URL elicitation: the call fails with MCP_URL_REQUIRED (which is
// also a remote error), URLElicitations gives the URL, and the retry with
// the same arguments succeeds.
func TestURLRequiredThenRetry(t *testing.T) {
	s := start(t, Options{Timeout: 5 * time.Second}, fixtureArgs{})
	s.init()
	ctx := context.Background()
	args := json.RawMessage(`{"url":"https://auth.example/login","message":"Sign in"}`)
	_, _, err := s.c.CallTool(ctx, "url-required", args, CallOptions{})
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeURLRequired || !errors.Is(err, ErrURLRequired) || !errors.Is(err, ErrRemote) || errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	if e.RPC == nil || e.RPC.Code != mcp.CodeURLElicitationRequired || e.Err != nil {
		t.Fatalf("RPC %+v, cause %v", e.RPC, e.Err)
	}
	want := "MCP_URL_REQUIRED: server error -32042: url-required: the fixture needs the user to open a URL first (1 URL to open before a retry)"
	if err.Error() != want {
		t.Fatalf("message %q\nwant       %q", err.Error(), want)
	}
	els, ok := URLElicitations(err)
	if !ok || len(els) != 1 || els[0].URL != "https://auth.example/login" || els[0].Message != "Sign in" || els[0].ElicitationID != "fixture-url-1" {
		t.Fatalf("URLElicitations: %+v %v", els, ok)
	}
	// The request's outcome is an error like any other JSON-RPC error.
	s.waitFor("the error outcome", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.State == StateError && errors.Is(ev.Req.Err, ErrURLRequired)
	})
	res, _, err := s.c.CallTool(ctx, "url-required", args, CallOptions{})
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "retried after the URL elicitation fixture-url-1") {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if els, ok := URLElicitations(nil); ok || els != nil {
		t.Fatal("URLElicitations(nil)")
	}
}

// TestURLRequiredBadData: a -32042 whose data holds no valid URL
// elicitations stays MCP_ERROR; its message says what is wrong, its cause
// matches mcp.ErrURLElicitationData, and URLElicitations reports none.
func TestURLRequiredBadData(t *testing.T) {
	s := start(t, Options{Timeout: 5 * time.Second}, fixtureArgs{})
	s.init()
	for _, tc := range []struct{ name, data, why string }{
		{"form mode", `{"elicitations":[{"mode":"form","message":"Name?"}]}`, `elicitation 1 has mode "form", want "url"`},
		{"no data", `null`, "no data"},
		{"not an object", `"open https://example.com"`, "data is not an object"},
		{"too large", `{"elicitations":[{"mode":"url","elicitationId":"e","url":"https://x.example/","message":"` + strings.Repeat("m", MaxURLElicitationData) + `"}]}`,
			"bytes of data, more than the " + strconv.Itoa(MaxURLElicitationData) + " sonde keeps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"data": tc.data})
			_, _, err := s.c.CallTool(context.Background(), "url-required", args, CallOptions{})
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeRemote || errors.Is(err, ErrURLRequired) {
				t.Fatalf("got %v", err)
			}
			if !errors.Is(err, mcp.ErrURLElicitationData) || !strings.Contains(e.Message, "server error -32042: ") || !strings.Contains(e.Message, tc.why) {
				t.Fatalf("message %q, want the reason %q", e.Message, tc.why)
			}
			if els, ok := URLElicitations(err); ok || els != nil {
				t.Fatalf("URLElicitations: %+v", els)
			}
		})
	}
}

// TestRemoteErrKeepsURLElicitationData: the data of a -32042 is kept up to
// MaxURLElicitationData (a long sign-in URL survives whole); other errors
// keep MaxErrorData.
func TestRemoteErrKeepsURLElicitationData(t *testing.T) {
	long := "https://auth.example/login?state=" + strings.Repeat("a", 3*MaxErrorData)
	data, _ := json.Marshal(mcp.URLElicitationRequiredData{Elicitations: []mcp.ElicitParams{{Mode: "url", ElicitationID: "e1", URL: long, Message: "m"}}})
	e := remoteErr(&jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "auth", Data: data})
	els, ok := URLElicitations(e)
	if e.Code != CodeURLRequired || !ok || els[0].URL != long {
		t.Fatalf("code %s, ok %v", e.Code, ok)
	}
	other := remoteErr(&jsonrpc.Error{Code: -32001, Message: "x", Data: data})
	if other.Code != CodeRemote || len(other.RPC.Data) > MaxErrorData {
		t.Fatalf("code %s, data %d bytes", other.Code, len(other.RPC.Data))
	}
	if _, ok := URLElicitations(other); ok {
		t.Fatal("URLElicitations of another code")
	}
	// Over HTTP, a -32042 in an error body is MCP_URL_REQUIRED as on stdio.
	x := exchangeErr(&transport.ExchangeError{Status: 403, Msg: "HTTP 403", RPC: &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "auth", Data: data}})
	if _, ok := URLElicitations(x); x.Code != CodeURLRequired || x.HTTP == nil || !ok || !strings.HasSuffix(x.Message, "(HTTP 403)") {
		t.Fatalf("%v", x)
	}
}
