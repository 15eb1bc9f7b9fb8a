package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

// The MCP Apps rule (the io.modelcontextprotocol/ui extension, SEP-1865):
// app-tool-visibility. A tool's _meta.ui.visibility says who may call it:
// "model" (the agent) and "app" (the UI the host renders). The host proxies
// an app's tools/call to the server like any other, so the wire does not
// say who made a call; it does say when no app can have made it: the
// client did not declare the extension, so it renders no app.

// extensionUI is the MCP Apps extension's identifier.
const extensionUI = "io.modelcontextprotocol/ui"

// maxAppTools bounds the tools whose visibility a Linter remembers.
const maxAppTools = 1024

// learnApps keeps the visibility of the tools of a tools/list result that
// set one (at most maxAppTools; a later list replaces a tool's).
func (l *Linter) learnApps(result json.RawMessage) {
	if !bytes.Contains(result, []byte(`"visibility"`)) {
		return
	}
	var r struct {
		Tools []struct {
			Name string `json:"name"`
			Meta struct {
				UI struct {
					Visibility *[]string `json:"visibility"`
				} `json:"ui"`
			} `json:"_meta"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	for _, t := range r.Tools {
		v := t.Meta.UI.Visibility
		if v == nil {
			delete(l.appVis, t.Name)
			continue
		}
		if _, ok := l.appVis[t.Name]; !ok && len(l.appVis) >= maxAppTools {
			continue
		}
		l.appVis[t.Name] = slices.Clone(*v)
	}
}

// appTools learns the visibilities from the result of a tools/list.
func (l *Linter) appTools(ev client.Event) {
	if p, ok := l.answered(ev); ok && p.method == mcp.MethodToolsList {
		l.learnApps(ev.Frame.Msg.Result)
	}
}

// appCall: app-tool-visibility, on a request of the client's; an
// initialize tells whether the client declared the extension.
func (l *Linter) appCall(ev client.Event) {
	f := ev.Frame
	params := requestParams(f)
	switch f.Msg.Method {
	case mcp.MethodInitialize:
		var p struct {
			Capabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		}
		_ = json.Unmarshal(params, &p)
		_, l.clientUI = p.Capabilities.Extensions[extensionUI]
		l.initSeen = true
		return
	case mcp.MethodToolsCall:
	default:
		return
	}
	name := target(f.Msg.Method, params)
	vis, ok := l.appVis[name]
	if !ok {
		return
	}
	model, app := slices.Contains(vis, "model"), slices.Contains(vis, "app")
	what := fmt.Sprintf("tools/call %q: its _meta.ui.visibility is [%s]", bounded(name, 64), bounded(strings.Join(vis, ", "), 64))
	switch {
	case !model && !app:
		l.add(ev, RuleAppVisibility, what+": neither the model nor the app may call it")
	case model:
	case modernRequest(f):
		if !slices.Contains(clientExts(params), extensionUI) {
			l.add(ev, RuleAppVisibility, what+" (hidden from the model), and the request's client capabilities do not declare "+extensionUI+": no app can have made this call, so the host offered the agent a tool meant for the app only")
		}
	case l.started && l.initSeen && !l.clientUI:
		l.add(ev, RuleAppVisibility, what+" (hidden from the model), and the client's initialize did not declare "+extensionUI+": no app can have made this call, so the host offered the agent a tool meant for the app only")
	}
}
