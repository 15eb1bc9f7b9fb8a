package lint

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// TestPassingSamples: the passing twins of the hand-written samples
// (testdata/captures/lint/pass) lint clean.
func TestPassingSamples(t *testing.T) {
	files, err := filepath.Glob("../testdata/captures/lint/pass/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no passing samples: %v", err)
	}
	for _, file := range files {
		if fs := lintAll(capturetest.Events(t, file)); len(fs) != 0 {
			t.Errorf("%s: %+v", file, fs)
		}
	}
}

// TestCacheFreshness: re-fetching and changed answers are judged per page
// and per uri, and a result without a TTL (0) is never fresh.
func TestCacheFreshness(t *testing.T) {
	evs := capturetest.Events(t, "../testdata/captures/lint/cache-refetch.jsonl")
	fs := lintAll(evs)
	if len(fs) != 1 || fs[0].Rule != RuleCacheRefetch || fs[0].Seq != 6 || !strings.Contains(fs[0].Detail, "tools/list asked again 1.0ms after the result at event 5, whose ttlMs 60000 had 1m0s to run") {
		t.Fatalf("findings %+v", fs)
	}
	// The second request for another page is not a re-fetch.
	evs = withFrames(t, "cache-refetch.jsonl", map[uint64]string{
		6: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"p2","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`})
	if fs := lintAll(evs); len(fs) != 0 {
		t.Errorf("another page: %+v", fs)
	}
	// ttlMs 0: nothing to re-fetch.
	evs = withFrames(t, "cache-refetch.jsonl", map[uint64]string{
		5: `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"private"}}`})
	if fs := lintAll(evs); len(fs) != 0 {
		t.Errorf("ttlMs 0: %+v", fs)
	}
	fs = lintAll(capturetest.Events(t, "../testdata/captures/lint/cache-changed.jsonl"))
	if len(fs) != 1 || fs[0].Rule != RuleCacheChanged || fs[0].Seq != 7 {
		t.Fatalf("cache-changed: %+v", fs)
	}
}

// TestCacheFaults lints real modern sessions that list the tools twice
// against the fixture with cache hints: a TTL makes the second list a
// re-fetch (sonde's own client does not cache), the cache-changed fault
// makes its answer differ too, and with ttlMs 0 neither is a finding.
func TestCacheFaults(t *testing.T) {
	twice := func(ctx context.Context, c *client.Client) {
		initialize(t, ctx, c)
		for range 2 {
			if _, err := c.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"x"}`), client.CallOptions{})
		t.Logf("echo: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--cache-ttl-ms", "0"}, nil},
		{[]string{"--cache-ttl-ms", "0", "--fault", "cache-changed"}, nil},
		{[]string{"--cache-ttl-ms", "600000"}, []string{RuleCacheRefetch}},
		{[]string{"--cache-ttl-ms", "600000", "--fault", "cache-changed"}, []string{RuleCacheChanged, RuleCacheRefetch}},
	} {
		o := capturetest.Options{Fixture: append([]string{"--era", "modern"}, tc.args...), Era: client.EraModern}
		fs := lintAll(capturetest.Events(t, capturetest.Record(t, o, twice)))
		if got := names(fs); !slices.Equal(got, tc.want) {
			for _, f := range fs {
				t.Logf("%s seq %d: %s", f.Rule, f.Seq, f.Detail)
			}
			t.Errorf("%v: rules %v, want %v", tc.args, got, tc.want)
		}
	}
}
