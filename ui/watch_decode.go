package ui

import (
	"encoding/json"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
)

// The watch mode's own decoding of what the session showed: the
// initialize and list requests by id, and their answers' pages (to be
// replaced by the shared fold of a session's state).

type askedReq struct {
	method string
	cursor bool // a tools/list page after the first
	at     time.Time
}

// maxAsked bounds the requests remembered while they wait for an answer.
const maxAsked = 256

// watchTrack follows the initialize and tools/list requests, whoever sent
// them, to show the server in the status bar and its tools in the Tools
// pane.
func (w *watchState) watchTrack(ev client.Event) {
	f := ev.Frame
	if ev.Kind != client.EvFrame || f == nil || !f.Msg.ID.IsValid() {
		return
	}
	key := f.Msg.ID.String()
	if f.Dir == client.Out {
		switch f.Msg.Method {
		case mcp.MethodInitialize, mcp.MethodToolsList, mcp.MethodResourcesList, mcp.MethodResourceTemplatesList, mcp.MethodPromptsList:
			if len(w.asked) >= maxAsked {
				clear(w.asked) // answers never came: start over
			}
			var p mcp.ListToolsParams
			_ = json.Unmarshal(f.Msg.Params, &p)
			w.asked[key] = askedReq{method: f.Msg.Method, cursor: p.Cursor != "", at: f.Time}
		}
		return
	}
	a, ok := w.asked[key]
	if !ok || f.Msg.Method != "" {
		return
	}
	delete(w.asked, key)
	if len(f.Msg.Result) == 0 {
		return
	}
	switch a.method {
	case mcp.MethodInitialize:
		var res mcp.InitializeResult
		if json.Unmarshal(f.Msg.Result, &res) == nil {
			// The status bar shows them: escaped, as every server text.
			srv := res.ServerInfo
			srv.Name, srv.Version = textfmt.Escape(srv.Name), textfmt.Escape(srv.Version)
			w.m.conn.server, w.m.conn.protocol = srv, textfmt.Escape(res.ProtocolVersion)
			var caps mcp.ServerCapabilities
			w.capsKnown = json.Unmarshal(res.Capabilities, &caps) == nil
			w.caps = caps
		}
	case mcp.MethodToolsList:
		var res mcp.ListToolsResult
		if json.Unmarshal(f.Msg.Result, &res) != nil {
			return
		}
		if !a.cursor {
			w.tools = nil
		}
		w.tools = append(w.tools, res.Tools...)
		w.m.tools.SetToolsAsOf(w.tools, a.at)
	default:
		w.watchListed(a, f.Msg.Result)
	}
}

// watchListed takes a page of resources/list, resources/templates/list
// or prompts/list to the Features pane (a first page replaces the list).
func (w *watchState) watchListed(a askedReq, result json.RawMessage) {
	l := &w.listed
	var ok bool
	switch a.method {
	case mcp.MethodResourcesList:
		ok = appendPage(&l.Resources, result, "resources", a.cursor)
	case mcp.MethodResourceTemplatesList:
		ok = appendPage(&l.Templates, result, "resourceTemplates", a.cursor)
	case mcp.MethodPromptsList:
		ok = appendPage(&l.Prompts, result, "prompts", a.cursor)
	}
	if !ok {
		return
	}
	l.HasResources = l.HasResources || len(l.Resources)+len(l.Templates) > 0 || w.caps.Resources != nil
	l.HasPrompts = l.HasPrompts || len(l.Prompts) > 0 || w.caps.Prompts != nil
	l.HasCompletions = w.caps.Completions != nil
	w.m.features.SetLists(*l)
}

// appendPage adds the array under key of a list's page to *all (replacing
// it for a first page); ok is false for a page without it.
func appendPage[T any](all *[]T, result json.RawMessage, key string, more bool) bool {
	var page map[string]json.RawMessage
	var items []T
	if json.Unmarshal(result, &page) != nil || json.Unmarshal(page[key], &items) != nil {
		return false
	}
	if !more {
		*all = nil
	}
	*all = append(*all, items...)
	return true
}
