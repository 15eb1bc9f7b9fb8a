package ui

import (
	"encoding/json"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/surface"
)

// What the watch mode shows of the server from the session's fold
// (surface.Known): its name, version and protocol in the status bar, its
// tools in the Tools pane, its resources, templates and prompts in the
// Features pane.

// showKnown gives the status bar and the panes what the fold learnt since
// they were last given it (a listing reaches its pane once complete).
func (w *watchState) showKnown() {
	k := &w.known
	if k.Server != (mcp.Implementation{}) || k.Protocol != "" {
		// The status bar shows them: escaped, as every server text.
		srv := k.Server
		srv.Name, srv.Version = textfmt.Escape(srv.Name), textfmt.Escape(srv.Version)
		w.m.conn.server, w.m.conn.protocol = srv, textfmt.Escape(k.Protocol)
		w.m.instr.set(k.Instructions)
	}
	if w.shown == nil {
		w.shown = map[string]surface.Listing{}
	}
	if at, ok := k.At[surface.Tools]; ok && at != w.shown[surface.Tools] {
		w.shown[surface.Tools] = at
		w.m.tools.SetToolsAsOf(defs[mcp.Tool](k.Tools), at.Asked)
	}
	changed := false
	for _, list := range []string{surface.Resources, surface.Templates, surface.Prompts} {
		if at, ok := k.At[list]; ok && at != w.shown[list] {
			w.shown[list], changed = at, true
		}
	}
	if changed {
		w.showListed()
	}
}

// showListed gives the Features pane the resources, templates and prompts
// the session listed.
func (w *watchState) showListed() {
	k, l := &w.known, &w.listed
	l.Resources = defs[mcp.Resource](k.Resources)
	l.Templates = defs[mcp.ResourceTemplate](k.Templates)
	l.Prompts = defs[mcp.Prompt](k.Prompts)
	caps, _ := w.caps()
	l.HasResources = l.HasResources || len(l.Resources)+len(l.Templates) > 0 || caps.Resources != nil
	l.HasPrompts = l.HasPrompts || len(l.Prompts) > 0 || caps.Prompts != nil
	l.HasCompletions = caps.Completions != nil
	w.m.features.SetLists(*l)
}

// caps are the server's capabilities from the session's handshake, and
// whether it was seen.
func (w *watchState) caps() (mcp.ServerCapabilities, bool) {
	var caps mcp.ServerCapabilities
	known := json.Unmarshal(w.known.Capabilities, &caps) == nil
	return caps, known
}

// defs decodes the items of a listing as T (one that is not is left out).
func defs[T any](items []surface.Item) []T {
	out := make([]T, 0, len(items))
	for _, it := range items {
		var v T
		if json.Unmarshal(it.Def, &v) == nil {
			out = append(out, v)
		}
	}
	return out
}
