package client

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// initState shares one initialize exchange between concurrent callers. Its
// own mu guards inFlight, result and err (never held with Client.mu).
// Only Initialize calls it: runInitialize and initialize run without either
// lock held and take Client.mu where they touch the client's state.
type initState struct {
	c        *Client // the client it belongs to
	mu       sync.Mutex
	inFlight chan struct{} // closed when the current exchange ends
	result   *mcp.InitializeResult
	err      error
}

// Initialize runs the handshake: initialize with Options.ProtocolVersion,
// a check of the server's answer, then notifications/initialized.
// Concurrent callers share one exchange; once it succeeded the result is
// returned again without a new exchange. A server answering a protocol
// version sonde does not support is MCP_HANDSHAKE naming both versions.
// Initialize is never cancelled on the wire (the spec forbids it): a
// caller whose ctx ends stops waiting with MCP_ABORTED, and the exchange goes
// on for the others until its own timeout.
func (c *Client) Initialize(ctx context.Context) (*mcp.InitializeResult, error) {
	s := &c.init
	s.mu.Lock()
	if s.result != nil {
		r := s.result
		s.mu.Unlock()
		return r, nil
	}
	ch := s.inFlight
	if ch == nil {
		ch = make(chan struct{})
		s.inFlight = ch
		// The shared exchange keeps ctx's values but not its cancellation:
		// it must not end because one of its waiters gave up.
		go c.init.runInitialize(context.WithoutCancel(ctx), ch)
	}
	s.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, &Error{Code: CodeAborted, Message: "initialize: stopped waiting (the exchange goes on)", Err: context.Cause(ctx)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result, s.err
}

func (s *initState) runInitialize(ctx context.Context, ch chan struct{}) {
	c := s.c
	res, err := c.init.initialize(ctx)
	s.mu.Lock()
	s.result, s.err = res, err
	if s.inFlight == ch {
		s.inFlight = nil
	}
	if err != nil {
		s.result = nil
	}
	s.mu.Unlock()
	close(ch)
}

func (s *initState) initialize(ctx context.Context) (*mcp.InitializeResult, error) {
	c := s.c
	if res, err, done := c.era.startEra(ctx); done {
		return res, err
	}
	params := mcp.InitializeParams{
		ProtocolVersion: c.opts.ProtocolVersion,
		Capabilities:    c.srv.capabilities(false),
		ClientInfo:      mcp.Implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion},
	}
	raw, err := c.start(ctx, mcp.MethodInitialize, params, CallOptions{}, true).Wait()
	if err != nil {
		return nil, err
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil || res.ProtocolVersion == "" {
		return nil, newErr(CodeHandshake, "initialize: the server's result is not an InitializeResult (%s)", bounded(string(raw), 200))
	}
	if !mcp.IsSupportedVersion(res.ProtocolVersion) {
		return nil, newErr(CodeHandshake, "initialize: sonde asked for protocol version %s and the server answered %s, which sonde does not support (supported: %s)",
			c.opts.ProtocolVersion, res.ProtocolVersion, strings.Join(mcp.SupportedVersions, ", "))
	}
	note, _ := jsonrpc.EncodeNotification(mcp.MethodInitialized, nil)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead != nil || c.closed {
		if c.dead != nil {
			return nil, c.dead
		}
		return nil, newErr(CodeClosed, "initialize: client closed")
	}
	if !c.out.push(outItem{raw: note, method: mcp.MethodInitialized}) {
		return nil, newErr(CodeClosed, "initialize: could not queue notifications/initialized")
	}
	c.initialized = true
	return &res, nil
}

// Ping sends ping and waits for the empty result.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Call(ctx, mcp.MethodPing, nil, CallOptions{})
	return err
}

// maxPages bounds tools/list pagination against a server that never stops.
const maxPages = 1000

// ListTools returns every tool, following nextCursor over all pages. A
// cursor the server already gave is MCP_PROTOCOL (it would loop forever).
func (c *Client) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	var all []mcp.Tool
	seen := map[string]bool{}
	cursor := ""
	for page := 0; page < maxPages; page++ {
		var params any
		if cursor != "" {
			params = mcp.ListToolsParams{Cursor: cursor}
		}
		raw, err := c.Call(ctx, mcp.MethodToolsList, params, CallOptions{})
		if err != nil {
			return all, err
		}
		var res mcp.ListToolsResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return all, newErr(CodeProtocol, "tools/list: result is not a ListToolsResult: %v", err)
		}
		if res.Tools == nil {
			return all, newErr(CodeProtocol, "tools/list: result has no \"tools\" array: %s", bounded(string(raw), 200))
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			return all, nil
		}
		if seen[res.NextCursor] {
			return all, newErr(CodeProtocol, "tools/list: the server repeated cursor %q (pagination would loop)", bounded(res.NextCursor, 64))
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	return all, newErr(CodeProtocol, "tools/list: more than %d pages", maxPages)
}

// CallTool calls a tool with arguments (a JSON object, or nil) and returns
// the decoded result and its raw JSON. A result with isError is not a Go
// error: check CallToolResult.IsError.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, o CallOptions) (*mcp.CallToolResult, json.RawMessage, error) {
	raw, err := c.GoTool(ctx, name, args, o).Wait()
	if err != nil {
		return nil, raw, err
	}
	res, err := ToolResult(name, raw)
	return res, raw, err
}

// GoTool starts a tools/call without waiting (see Go), with the tool name
// recorded for events and a progress token requested.
func (c *Client) GoTool(ctx context.Context, name string, args json.RawMessage, o CallOptions) *Call {
	o.Tool, o.ProgressToken = name, true
	return c.Go(ctx, mcp.MethodToolsCall, mcp.CallToolParams{Name: name, Arguments: args}, o)
}

// ToolIsError reports whether the raw result of a tools/call of tool name
// has isError: true, reading only its top-level members (for a caller such
// as sonde bench that needs nothing else, and so does not decode the
// content). A result that is not an object, whose isError is not a boolean
// or whose content is not an array is decoded by ToolResult, whose error it
// returns (MCP_PROTOCOL).
func ToolIsError(name string, raw json.RawMessage) (bool, error) {
	p := trimSpace(raw)
	isError, shaped := false, len(p) > 0 && p[0] == '{'
	if shaped {
		_, ok := scanObject(p, 0, func(key []byte, vs, ve int) {
			v := p[vs:ve]
			switch {
			case keyFold(key, "isError"):
				switch string(v) {
				case "true":
					isError = true
				case "false", "null":
					isError = false
				default:
					shaped = false
				}
			case keyFold(key, "content"):
				shaped = shaped && (v[0] == '[' || string(v) == "null")
			}
		})
		shaped = shaped && ok
	}
	if shaped {
		return isError, nil
	}
	res, err := ToolResult(name, raw)
	if err != nil {
		return false, err
	}
	return res.IsError, nil
}

// ToolResult decodes the result of a tools/call of tool name; a result of
// another shape is MCP_PROTOCOL.
func ToolResult(name string, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, newErr(CodeProtocol, "tools/call %s: result is not a CallToolResult: %v", name, err)
	}
	return &res, nil
}
