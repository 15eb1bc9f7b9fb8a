package lint

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// TestAppVisibilityLive: real sessions against sonde fixture --apps, in
// both eras. sonde declares no MCP Apps extension, so its call of the
// app-only refresh_chart is one no app can have made; its calls of
// show_chart (model and app) and export_chart (model only) are fine.
func TestAppVisibilityLive(t *testing.T) {
	calls := func(tools ...string) func(context.Context, *client.Client) {
		return func(ctx context.Context, c *client.Client) {
			initialize(t, ctx, c)
			if _, err := c.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools {
				if _, _, err := c.CallTool(ctx, tool, json.RawMessage(`{}`), client.CallOptions{}); err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
			}
		}
	}
	for _, era := range []string{"legacy", "modern"} {
		o := capturetest.Options{Fixture: []string{"--apps", "--era", era, "--cache-ttl-ms", "0"}}
		if era == "modern" {
			o.Era = client.EraModern
		}
		fs := lintAll(capturetest.Events(t, capturetest.Record(t, o, calls("show_chart", "export_chart"))))
		if len(fs) != 0 {
			t.Errorf("%s: model tools: %+v", era, fs)
		}
		fs = lintAll(capturetest.Events(t, capturetest.Record(t, o, calls("show_chart", "refresh_chart"))))
		if got := names(fs); len(fs) != 1 || !slices.Equal(got, []string{RuleAppVisibility}) || !strings.Contains(fs[0].Detail, `tools/call "refresh_chart": its _meta.ui.visibility is [app] (hidden from the model)`) {
			t.Errorf("%s: app-only tool: %+v", era, fs)
		}
	}
}

// TestAppVisibilityNeither: a tool whose visibility names neither the
// model nor the app is a finding whoever calls it, even when the client
// declared the extension.
func TestAppVisibilityNeither(t *testing.T) {
	evs := withFrames(t, "pass/app-tool-visibility.jsonl", map[uint64]string{
		5: `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"refresh_chart","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":[]}}}],"ttlMs":0,"cacheScope":"private"}}`})
	fs := lintAll(evs)
	if len(fs) != 1 || fs[0].Rule != RuleAppVisibility || !strings.Contains(fs[0].Detail, "neither the model nor the app may call it") {
		t.Errorf("findings %+v", fs)
	}
}
