package client

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/sonde-mcp/sonde/mcp"
)

// ServerCaps returns the capabilities the server declared in its
// initialize result (all nil before the handshake, or when they do not
// decode).
func (c *Client) ServerCaps() mcp.ServerCapabilities {
	c.init.mu.Lock()
	res := c.init.result
	c.init.mu.Unlock()
	var caps mcp.ServerCapabilities
	if res != nil && len(res.Capabilities) > 0 {
		_ = json.Unmarshal(res.Capabilities, &caps)
	}
	return caps
}

// Undeclared says which capability the server would have had to declare
// for method, when it did not ("" when it did, when the method needs none,
// or before the handshake). The feature methods of Client do not refuse an
// undeclared method: a debugger wants to see what the server does with
// it. They send it, and emit a note with this text first.
func (c *Client) Undeclared(method string) string {
	c.init.mu.Lock()
	done := c.init.result != nil
	c.init.mu.Unlock()
	if !done {
		return ""
	}
	caps := c.ServerCaps()
	var need string
	switch {
	case method == mcp.MethodResourcesSubscribe || method == mcp.MethodResourcesUnsubscribe:
		if caps.Resources == nil || !caps.Resources.Subscribe {
			need = "resources.subscribe"
		}
	case strings.HasPrefix(method, "resources/"):
		if caps.Resources == nil {
			need = "resources"
		}
	case strings.HasPrefix(method, "prompts/"):
		if caps.Prompts == nil {
			need = "prompts"
		}
	case method == mcp.MethodComplete:
		if caps.Completions == nil {
			need = "completions"
		}
	case method == mcp.MethodLoggingSetLevel:
		if caps.Logging == nil {
			need = "logging"
		}
	case method == mcp.MethodTasksCancel:
		if caps.Tasks == nil || caps.Tasks.Cancel == nil {
			need = "tasks.cancel"
		}
	case method == mcp.MethodTasksList:
		if caps.Tasks == nil || caps.Tasks.List == nil {
			need = "tasks.list"
		}
	case strings.HasPrefix(method, "tasks/"):
		if caps.Tasks == nil {
			need = "tasks"
		}
	}
	if need == "" {
		return ""
	}
	return method + ": the server did not declare the " + need + " capability; sent anyway"
}

// featureCall sends a feature request: a note first when the server did not
// declare the capability it needs (see Undeclared), then the request.
func (c *Client) featureCall(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if w := c.Undeclared(method); w != "" {
		c.hub.emit(Event{Kind: EvNote, Note: w})
	}
	return c.Call(ctx, method, params, CallOptions{ProgressToken: true})
}

// listPages calls a paginated list method until a page has no nextCursor,
// handing the array under field of each page to add. A page without that
// array, a repeated cursor, or more than maxPages pages is MCP_PROTOCOL.
func (c *Client) listPages(ctx context.Context, method, field string, add func(json.RawMessage) error) error {
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		var params any
		if cursor != "" {
			params = mcp.ListParams{Cursor: cursor}
		}
		raw, err := c.featureCall(ctx, method, params)
		if err != nil {
			return err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil || page == nil {
			return newErr(CodeProtocol, "%s: result is not an object: %s", method, bounded(string(raw), 200))
		}
		items, ok := page[field]
		if !ok || len(items) == 0 || items[0] != '[' {
			return newErr(CodeProtocol, "%s: result has no %q array: %s", method, field, bounded(string(raw), 200))
		}
		if err := add(items); err != nil {
			return newErr(CodeProtocol, "%s: %q is not a list of the right shape: %v", method, field, err)
		}
		var next string
		if nc, ok := page["nextCursor"]; ok && string(nc) != "null" {
			if err := json.Unmarshal(nc, &next); err != nil {
				return newErr(CodeProtocol, "%s: nextCursor is not a string: %s", method, bounded(string(nc), 64))
			}
		}
		if next == "" {
			return nil
		}
		if seen[next] {
			return newErr(CodeProtocol, "%s: the server repeated cursor %q (pagination would loop)", method, bounded(next, 64))
		}
		seen[next] = true
		cursor = next
	}
	return newErr(CodeProtocol, "%s: more than %d pages", method, maxPages)
}

// appendJSON returns an add function for listPages that decodes each page
// into a slice and appends it to *all.
func appendJSON[T any](all *[]T) func(json.RawMessage) error {
	return func(items json.RawMessage) error {
		var page []T
		if err := json.Unmarshal(items, &page); err != nil {
			return err
		}
		*all = append(*all, page...)
		return nil
	}
}

// ListResources returns every resource of resources/list, over all pages
// (a repeated cursor is MCP_PROTOCOL). What was read before a failure is
// returned with it.
func (c *Client) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	var all []mcp.Resource
	err := c.listPages(ctx, mcp.MethodResourcesList, "resources", appendJSON(&all))
	return all, err
}

// ListResourceTemplates returns every template of resources/templates/list,
// over all pages.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	var all []mcp.ResourceTemplate
	err := c.listPages(ctx, mcp.MethodResourceTemplatesList, "resourceTemplates", appendJSON(&all))
	return all, err
}

// ListPrompts returns every prompt of prompts/list, over all pages.
func (c *Client) ListPrompts(ctx context.Context) ([]mcp.Prompt, error) {
	var all []mcp.Prompt
	err := c.listPages(ctx, mcp.MethodPromptsList, "prompts", appendJSON(&all))
	return all, err
}

// ReadResource reads uri. A result without a contents array, or a content
// with neither text nor blob, is MCP_PROTOCOL; the raw result is returned
// either way.
func (c *Client) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, json.RawMessage, error) {
	raw, err := c.featureCall(ctx, mcp.MethodResourcesRead, mcp.URIParams{URI: uri})
	if err != nil {
		return nil, raw, err
	}
	var res mcp.ReadResourceResult
	var shape struct {
		Contents json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(raw, &shape) != nil || len(shape.Contents) == 0 || shape.Contents[0] != '[' {
		return nil, raw, newErr(CodeProtocol, "resources/read %s: result has no \"contents\" array: %s", uri, bounded(string(raw), 200))
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, raw, newErr(CodeProtocol, "resources/read %s: result is not a ReadResourceResult: %v", uri, err)
	}
	for i, rc := range res.Contents {
		if rc.Text == nil && rc.Blob == nil {
			return &res, raw, newErr(CodeProtocol, "resources/read %s: contents[%d] has neither text nor blob", uri, i)
		}
	}
	return &res, raw, nil
}

// SubscribeResource asks for notifications/resources/updated about uri.
func (c *Client) SubscribeResource(ctx context.Context, uri string) error {
	_, err := c.featureCall(ctx, mcp.MethodResourcesSubscribe, mcp.URIParams{URI: uri})
	return err
}

// UnsubscribeResource ends a subscription made with SubscribeResource.
func (c *Client) UnsubscribeResource(ctx context.Context, uri string) error {
	_, err := c.featureCall(ctx, mcp.MethodResourcesUnsubscribe, mcp.URIParams{URI: uri})
	return err
}

// GetPrompt gets prompt name with its arguments. A result without a
// messages array is MCP_PROTOCOL.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, json.RawMessage, error) {
	raw, err := c.featureCall(ctx, mcp.MethodPromptsGet, mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, raw, err
	}
	var res mcp.GetPromptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, raw, newErr(CodeProtocol, "prompts/get %s: result is not a GetPromptResult: %v", name, err)
	}
	if res.Messages == nil {
		return nil, raw, newErr(CodeProtocol, "prompts/get %s: result has no \"messages\" array: %s", name, bounded(string(raw), 200))
	}
	return &res, raw, nil
}

// Complete asks for completions of one argument of a prompt or resource
// template. context (may be nil) holds the values of other arguments.
func (c *Client) Complete(ctx context.Context, ref mcp.CompleteRef, arg mcp.CompleteArgument, context map[string]string) (*mcp.Completion, error) {
	p := mcp.CompleteParams{Ref: ref, Argument: arg}
	if len(context) > 0 {
		p.Context = &mcp.CompleteContext{Arguments: context}
	}
	raw, err := c.featureCall(ctx, mcp.MethodComplete, p)
	if err != nil {
		return nil, err
	}
	var res struct {
		Completion *mcp.Completion `json:"completion"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Completion == nil {
		return nil, newErr(CodeProtocol, "completion/complete: result has no \"completion\" object: %s", bounded(string(raw), 200))
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return res.Completion, nil
}

// SetLogLevel asks the server to send notifications/message at level and
// above. A level that is not one of mcp.LogLevels is sent as given (the
// server should answer -32602).
func (c *Client) SetLogLevel(ctx context.Context, level string) error {
	_, err := c.featureCall(ctx, mcp.MethodLoggingSetLevel, mcp.SetLevelParams{Level: level})
	return err
}
