package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/features"
)

// maxInjectPages bounds the pages of one list injected into a watched
// session.
const maxInjectPages = 100

// injectList reads every page of a list (resources/list, prompts/list…)
// through the tap: the array under key of each page, following nextCursor.
func injectList[T any](ctx context.Context, src Watched, method, key string) ([]T, error) {
	var all []T
	cursor := ""
	for range maxInjectPages {
		var params any = struct{}{}
		if cursor != "" {
			params = mcp.ListParams{Cursor: cursor}
		}
		_, raw, err := src.Inject(ctx, method, params)
		if err != nil {
			return all, err
		}
		var page map[string]json.RawMessage
		var items []T
		if json.Unmarshal(raw, &page) != nil || json.Unmarshal(page[key], &items) != nil {
			return all, &client.Error{Code: client.CodeProtocol, Message: fmt.Sprintf("%s: the result has no %q array", method, key), Err: client.ErrProtocol}
		}
		all = append(all, items...)
		cursor = ""
		if c, ok := page["nextCursor"]; ok && json.Unmarshal(c, &cursor) != nil {
			return all, &client.Error{Code: client.CodeProtocol, Message: method + ": nextCursor is not a string", Err: client.ErrProtocol}
		}
		if cursor == "" {
			return all, nil
		}
	}
	return all, &client.Error{Code: client.CodeProtocol, Message: fmt.Sprintf("%s: more than %d pages", method, maxInjectPages), Err: client.ErrProtocol}
}

// injectResult injects a request and decodes its result as a T; a result
// of another shape is MCP_PROTOCOL, naming the method and what (the URI,
// the prompt). The raw result comes back either way.
func injectResult[T any](ctx context.Context, src Watched, method string, params any, what string) (*T, json.RawMessage, error) {
	_, raw, err := src.Inject(ctx, method, params)
	if err != nil {
		return nil, raw, err
	}
	var res T
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, raw, &client.Error{Code: client.CodeProtocol, Message: fmt.Sprintf("%s %s: the result is not what the method returns: %v", method, what, err), Err: client.ErrProtocol}
	}
	return &res, raw, nil
}

// watchFeatureMsg injects the Features pane's lists (its refresh) and a
// prompt's get into a watched session; ok is false for the others.
func (w *watchState) watchFeatureMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case features.RefreshMsg:
		caps, known := w.caps()
		gen := w.m.gen
		return w.injectCmd(func(ctx context.Context, src Watched) tea.Msg {
			// Without the host's initialize (the modern era has none),
			// every list is asked for.
			out := features.ListedMsg{HasResources: !known || caps.Resources != nil, HasPrompts: !known || caps.Prompts != nil, HasCompletions: caps.Completions != nil}
			if out.HasResources {
				out.Resources, out.Err = injectList[mcp.Resource](ctx, src, mcp.MethodResourcesList, "resources")
				if out.Err == nil {
					var err error
					out.Templates, err = injectList[mcp.ResourceTemplate](ctx, src, mcp.MethodResourceTemplatesList, "resourceTemplates")
					var ce *client.Error
					if !errors.As(err, &ce) || ce.RPC == nil || ce.RPC.Code != jsonrpc.CodeMethodNotFound {
						out.Err = err
					}
				}
			}
			if out.HasPrompts {
				var err error
				out.Prompts, err = injectList[mcp.Prompt](ctx, src, mcp.MethodPromptsList, "prompts")
				if out.Err == nil {
					out.Err = err
				}
			}
			return featuresListedMsg{gen: gen, ListedMsg: out}
		}), true
	case features.GetPromptMsg:
		return w.injectCmd(func(ctx context.Context, src Watched) tea.Msg {
			res, _, err := injectResult[mcp.GetPromptResult](ctx, src, mcp.MethodPromptsGet, mcp.GetPromptParams{Name: msg.Name, Arguments: msg.Args}, msg.Name)
			return features.PromptResultMsg{Name: msg.Name, Result: res, Err: err}
		}), true
	}
	return nil, false
}
