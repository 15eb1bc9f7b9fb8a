package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// appTools are tools of an MCP Apps server (as sonde fixture --apps lists
// them), one with a hostile resourceUri.
func appTools() []mcp.Tool {
	meta := func(ui string) json.RawMessage { return json.RawMessage(`{"ui":` + ui + `}`) }
	return append(fixtureTools(),
		mcp.Tool{Name: "show_chart", Description: "Shows a chart in the app.", InputSchema: json.RawMessage(`{"type":"object"}`),
			Meta: meta(`{"resourceUri":"ui://fixture/chart.html","visibility":["model","app"]}`)},
		mcp.Tool{Name: "refresh_chart", Description: "Refreshes the chart's data.", InputSchema: json.RawMessage(`{"type":"object"}`),
			Meta: meta(`{"resourceUri":"ui://fixture/chart.html\u001b]0;x\u0007","visibility":["app"]}`)},
		mcp.Tool{Name: "odd_app", Meta: meta(`{"resourceUri":7,"visibility":"model"}`)},
	)
}

// uiRead is the resources/read result of the chart's UI resource.
func uiRead(seq uint64) client.Event {
	result := `{"contents":[{"uri":"ui://fixture/chart.html","mimeType":"text/html;profile=mcp-app","text":"<html></html>",` +
		`"_meta":{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com","https://*.cdn.example"]}}}}]}`
	raw := `{"jsonrpc":"2.0","id":4,"result":` + result + `}`
	return client.Event{Seq: seq, Kind: client.EvFrame, Frame: &client.FrameInfo{
		Frame:   client.Frame{Dir: client.In, Raw: []byte(raw), Msg: jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(4), Result: json.RawMessage(result)}},
		Verdict: client.VerdictResolved}}
}

// TestAppDetail: the detail of an MCP Apps tool shows its resource, its
// visibility and, once the resource was read, its CSP; before that, that
// it was not read; a malformed _meta.ui says what is wrong; server text
// is escaped.
func TestAppDetail(t *testing.T) {
	for _, sc := range []struct{ name, tool string }{{"app_csp", "show_chart"}, {"app_only", "refresh_chart"}, {"app_malformed", "odd_app"}} {
		for _, sz := range sizes {
			name := fmt.Sprintf("%s_%dx%d", sc.name, sz.w, sz.h)
			t.Run(name, func(t *testing.T) {
				m := newModel(t, sz.w, sz.h)
				m.SetTools(appTools())
				if sc.name == "app_csp" {
					m.Apply([]client.Event{uiRead(9)})
				}
				m.Update(press('/'))
				typeText(m, sc.tool)
				v := view(t, m)
				if strings.ContainsRune(v, 0x1b) {
					t.Errorf("an escape reached the screen:\n%q", v)
				}
				golden.Assert(t, name, v)
			})
		}
	}
}

func TestVisibilityLine(t *testing.T) {
	for _, c := range []struct {
		v    []string
		want string
	}{
		{nil, "model, app (the default)"},
		{[]string{"model", "app"}, "model, app"},
		{[]string{"app"}, "app: app only, hidden from the model"},
		{[]string{"model"}, "model: model only, the app may not call it"},
		{[]string{}, "[]: neither the model nor the app may call it"},
	} {
		if got := visibilityLine(c.v); got != c.want {
			t.Errorf("%v: %q, want %q", c.v, got, c.want)
		}
	}
}
