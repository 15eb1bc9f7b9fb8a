package tools

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// MCP Apps (the io.modelcontextprotocol/ui extension, SEP-1865): a tool's
// _meta.ui names the UI resource that renders its results (resourceUri)
// and who may call it (visibility: "model", the agent; "app", the UI). The
// resource's CSP comes with its resources/read result (_meta.ui.csp); the
// pane keeps the last one seen for each ui:// uri, so the tool's detail
// shows what the app may reach.

// maxAppCSPs bounds the ui:// resources whose CSP the pane remembers.
const maxAppCSPs = 256

// appMeta is a tool's _meta.ui, as read for the detail.
type appMeta struct {
	uri        string
	visibility []string // nil: absent (the default, model and app)
	problem    string   // what is malformed ("" for nothing)
	visBad     bool     // visibility is there but not a list of strings
}

// readAppMeta reads a tool's _meta.ui (ok false when it has none).
func readAppMeta(meta json.RawMessage) (appMeta, bool) {
	if len(meta) == 0 || !bytes.Contains(meta, []byte(`"ui"`)) {
		return appMeta{}, false
	}
	var m struct {
		UI json.RawMessage `json:"ui"`
	}
	if json.Unmarshal(meta, &m) != nil || len(m.UI) == 0 || string(m.UI) == "null" {
		return appMeta{}, false
	}
	var ui map[string]json.RawMessage
	if json.Unmarshal(m.UI, &ui) != nil {
		return appMeta{problem: "_meta.ui is not an object"}, true
	}
	var a appMeta
	var bad []string
	if raw, ok := ui["resourceUri"]; ok && json.Unmarshal(raw, &a.uri) != nil {
		bad = append(bad, "resourceUri is not a string")
	}
	if raw, ok := ui["visibility"]; ok {
		if json.Unmarshal(raw, &a.visibility) != nil {
			a.visBad = true
			bad = append(bad, "visibility is not a list of strings")
		} else if a.visibility == nil {
			a.visibility = []string{}
		}
	}
	a.problem = strings.Join(bad, "; ")
	return a, true
}

// appCSPs are the CSPs the server declared for its ui:// resources, by
// uri: a line per kind of domain.
type appCSPs map[string][]string

// fold keeps the CSP of each ui:// resource a resources/read result holds.
func (c appCSPs) fold(f *client.FrameInfo) {
	if f == nil || f.Dir != client.In || f.Msg.Kind != jsonrpc.KindResponse || !bytes.Contains(f.Msg.Result, []byte(`"ui://`)) {
		return
	}
	var r struct {
		Contents []struct {
			URI  string `json:"uri"`
			Meta struct {
				UI struct {
					CSP map[string]json.RawMessage `json:"csp"`
				} `json:"ui"`
			} `json:"_meta"`
		} `json:"contents"`
	}
	if json.Unmarshal(f.Msg.Result, &r) != nil {
		return
	}
	for _, ct := range r.Contents {
		if !strings.HasPrefix(ct.URI, "ui://") {
			continue
		}
		if _, ok := c[ct.URI]; !ok && len(c) >= maxAppCSPs {
			clear(c)
		}
		c[ct.URI] = cspLines(ct.Meta.UI.CSP)
	}
}

// cspKinds are the CSP lists of SEP-1865, in the order shown.
var cspKinds = []struct{ key, label string }{
	{"connectDomains", "connect"}, {"resourceDomains", "resources"}, {"frameDomains", "frames"}, {"baseUriDomains", "base-uri"},
}

// cspLines says a declared CSP, a line per kind of domain.
func cspLines(csp map[string]json.RawMessage) []string {
	if len(csp) == 0 {
		return []string{"none declared: the host's restrictive default (no connections, no outside resources)"}
	}
	var parts []string
	for _, k := range cspKinds {
		raw, ok := csp[k.key]
		if !ok {
			continue
		}
		var domains []string
		if json.Unmarshal(raw, &domains) != nil {
			parts = append(parts, k.label+" (not a list of strings)")
			continue
		}
		for i := range domains {
			domains[i] = textfmt.Clean(domains[i])
		}
		if len(domains) == 0 {
			domains = []string{"none"}
		}
		parts = append(parts, k.label+" "+strings.Join(domains, ", "))
	}
	if len(parts) == 0 {
		return []string{"no domains declared"}
	}
	return parts
}

// visibilityLine says who may call the tool.
func visibilityLine(v []string) string {
	if v == nil {
		return "model, app (the default)"
	}
	model, app := false, false
	labels := make([]string, len(v))
	for i, who := range v {
		labels[i] = textfmt.Clean(who)
		model = model || who == "model"
		app = app || who == "app"
	}
	s := strings.Join(labels, ", ")
	switch {
	case model && app:
	case app:
		s += ": app only, hidden from the model"
	case model:
		s += ": model only, the app may not call it"
	default:
		s = "[" + s + "]: neither the model nor the app may call it"
	}
	return s
}

// appLines describes a tool's MCP App for the detail (nil for a tool
// without _meta.ui), each line cut to w.
func (m *Model) appLines(e *entry, w int) []string {
	a, ok := readAppMeta(e.tool.Meta)
	if !ok {
		return nil
	}
	st := m.st
	out := []string{st.Header.Render("app") + st.Subtle.Render(" (MCP Apps, io.modelcontextprotocol/ui)")}
	if a.problem != "" {
		out = append(out, "  "+st.Warn.Render(textfmt.Clean(a.problem)))
	}
	uri := "none (no resourceUri)"
	if a.uri != "" {
		uri = textfmt.Clean(a.uri)
	}
	out = append(out, "  "+st.Subtle.Render("resource   ")+st.Accent.Render(uri))
	vis := visibilityLine(a.visibility)
	if a.visBad {
		vis = "unreadable (see above)"
	}
	out = append(out, "  "+st.Subtle.Render("visibility ")+st.Text.Render(vis))
	csp, seen := m.csps[a.uri]
	switch {
	case a.uri == "":
	case seen:
		for i, l := range csp {
			label := "csp        "
			if i > 0 {
				label = "           "
			}
			out = append(out, "  "+st.Subtle.Render(label)+st.Text.Render(l))
		}
	default:
		out = append(out, "  "+st.Subtle.Render("csp        not read yet (it comes with resources/read of the resource)"))
	}
	for i := range out {
		out[i] = textfmt.Fit(out[i], w)
	}
	return out
}
