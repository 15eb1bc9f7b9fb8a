package lint

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// withResult returns the events of a sample with the result of the
// response at seq replaced by result (the frame's bytes and message both).
func withResult(t *testing.T, sample string, seq uint64, result string) []client.Event {
	t.Helper()
	return withResults(t, sample, map[uint64]string{seq: result})
}

// withResults replaces the results of several responses, by seq.
func withResults(t *testing.T, sample string, results map[uint64]string) []client.Event {
	t.Helper()
	evs := capturetest.Events(t, "../testdata/captures/lint/"+sample)
	for i, ev := range evs {
		result, ok := results[ev.Seq]
		if !ok {
			continue
		}
		seq := ev.Seq
		if ev.Frame == nil || ev.Frame.Msg.Kind != jsonrpc.KindResponse {
			t.Fatalf("%s seq %d is not a response", sample, seq)
		}
		raw := []byte(`{"jsonrpc":"2.0","id":` + ev.Frame.Msg.ID.String() + `,"result":` + result + `}`)
		msg, err := jsonrpc.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		fr := *ev.Frame
		fr.Raw, fr.Msg = raw, msg
		evs[i].Frame = &fr
		delete(results, seq)
	}
	if len(results) != 0 {
		t.Fatalf("%s has no response at %v", sample, results)
	}
	return evs
}

// TestCacheHint: the modern tools/list result of a real session (sample
// cache-hint.jsonl, seq 10) with its hints present, missing or ill-typed;
// its server/discover result (seq 5) likewise.
func TestCacheHint(t *testing.T) {
	const tools = `"resultType":"complete","tools":[]`
	cases := []struct {
		name   string
		seq    uint64
		result string
		want   string // in the detail; "" for no finding
	}{
		{"present", 10, `{` + tools + `,"ttlMs":60000,"cacheScope":"connection"}`, ""},
		{"zero-ttl", 10, `{` + tools + `,"ttlMs":0,"cacheScope":"x"}`, ""},
		{"integral-float", 10, `{` + tools + `,"ttlMs":1e3,"cacheScope":"x"}`, ""},
		{"both-missing", 10, `{` + tools + `}`, "no ttlMs, no cacheScope; Claude Code drops a whole tools/list without them"},
		{"ttl-string", 10, `{` + tools + `,"ttlMs":"60000","cacheScope":"connection"}`, "ttlMs is a string, not a number"},
		{"ttl-negative", 10, `{` + tools + `,"ttlMs":-1,"cacheScope":"connection"}`, "ttlMs is -1, not a non-negative integer"},
		{"ttl-fraction", 10, `{` + tools + `,"ttlMs":1.5,"cacheScope":"connection"}`, "ttlMs is 1.5"},
		{"ttl-null", 10, `{` + tools + `,"ttlMs":null,"cacheScope":"connection"}`, "ttlMs is a null"},
		{"scope-number", 10, `{` + tools + `,"ttlMs":5,"cacheScope":1}`, "cacheScope is a number, not a string"},
		{"scope-missing", 10, `{` + tools + `,"ttlMs":5}`, "no cacheScope"},
		{"discover-missing", 5, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}`, "server/discover result (2026-07-28): no ttlMs, no cacheScope"},
		{"discover-ill-typed", 5, `{"resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":{},"cacheScope":[]}`, "ttlMs is an object, not a number, cacheScope is an array"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := withResult(t, "cache-hint.jsonl", tc.seq, tc.result)
			if tc.seq == 5 { // the sample's own tools/list has no hints: give it some
				evs = withResults(t, "cache-hint.jsonl", map[uint64]string{5: tc.result, 10: `{"resultType":"complete","tools":[],"ttlMs":1,"cacheScope":"s"}`})
			}
			fs := lintAll(evs)
			if tc.want == "" {
				if len(fs) != 0 {
					t.Fatalf("findings %v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Rule != RuleCacheHint || fs[0].Seq != tc.seq || !strings.Contains(fs[0].Detail, tc.want) {
				t.Fatalf("findings %+v, want one cache-hint at seq %d saying %q", fs, tc.seq, tc.want)
			}
		})
	}
}

// TestCacheHintLegacy: a legacy session's list results need no hints
// (the clean sessions of TestFixtureFaults list tools without them), and
// neither does an error answering a modern tools/list.
func TestCacheHintLegacy(t *testing.T) {
	evs := capturetest.Events(t, "../testdata/captures/lint/list-item-type.jsonl")
	if got := names(lintAll(evs)); slices.Contains(got, RuleCacheHint) {
		t.Errorf("a legacy tools/list was held to cache hints: %v", got)
	}
	evs = capturetest.Events(t, "../testdata/captures/lint/cache-hint.jsonl")
	for i, ev := range evs {
		if ev.Seq == 10 {
			raw := []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}`)
			msg, _ := jsonrpc.Decode(raw)
			fr := *ev.Frame
			fr.Raw, fr.Msg = raw, msg
			evs[i].Frame = &fr
		}
	}
	if fs := lintAll(evs); len(fs) != 0 {
		t.Errorf("an error answer was held to cache hints: %v", fs)
	}
}

// TestListItemType: the tools/list result of a real legacy session
// (list-item-type.jsonl, seq 11) with values of each type, and the other
// lists' shapes through listTypeErrors.
func TestListItemType(t *testing.T) {
	cases := []struct {
		name, result string
		want         []string // in the detail, in order; nil for no finding
	}{
		{"clean", `{"tools":[{"name":"a","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"title":"A"}}],"nextCursor":"c"}`, nil},
		{"read-only-string", `{"tools":[{"name":"a","inputSchema":{},"annotations":{"readOnlyHint":"true"}}]}`, []string{`tools[0] ("a").annotations.readOnlyHint is a string ("true"), not a boolean`, "TS SDK 1.32.1", "Go SDK 1.8.0", "Claude Code"}},
		{"schema-string", `{"tools":[{"name":"a","inputSchema":"{}"}]}`, []string{`tools[0] ("a").inputSchema is a string ("{}"), not an object`}},
		{"name-number", `{"tools":[{"name":"a","inputSchema":{}},{"name":7,"inputSchema":{}}]}`, []string{"tools[1].name is a number (7), not a string"}},
		{"item-not-object", `{"tools":["echo"]}`, []string{"tools[0] is a string, not an object"}},
		{"list-not-array", `{"tools":{}}`, []string{"tools is an object, not an array"}},
		{"cursor-number", `{"tools":[],"nextCursor":2}`, []string{"nextCursor is a number, not a string"}},
		{"many", `{"tools":[{"name":1},{"name":2},{"name":3},{"name":4},{"name":5}]}`, []string{"tools[2].name", "(and 2 more)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := lintAll(withResult(t, "list-item-type.jsonl", 11, tc.result))
			if tc.want == nil {
				if len(fs) != 0 {
					t.Fatalf("findings %v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Rule != RuleListItemType || fs[0].Seq != 11 {
				t.Fatalf("findings %+v, want one list-item-type at seq 11", fs)
			}
			for _, w := range tc.want {
				if !strings.Contains(fs[0].Detail, w) {
					t.Errorf("detail %q does not say %q", fs[0].Detail, w)
				}
			}
		})
	}
}

// TestListShapes: resources, resource templates and prompts are checked
// against their own shapes.
func TestListShapes(t *testing.T) {
	cases := []struct{ method, result, want string }{
		{"resources/list", `{"resources":[{"uri":"file:///a","name":"a","size":"12"}]}`, `resources[0] ("a").size is a string ("12"), not a number`},
		{"resources/list", `{"resources":[{"uri":"file:///a","name":"a","annotations":{"priority":"high"}}]}`, `resources[0] ("a").annotations.priority is a string ("high"), not a number`},
		{"resources/templates/list", `{"resourceTemplates":[{"uriTemplate":5,"name":"t"}]}`, `resourceTemplates[0] ("t").uriTemplate is a number (5), not a string`},
		{"prompts/list", `{"prompts":[{"name":"p","arguments":[{"name":"x","required":"yes"}]}]}`, `prompts[0] ("p").arguments[0].required is a string ("yes"), not a boolean`},
		{"prompts/list", `{"prompts":[{"name":"p","arguments":[{"name":"x","required":true}],"icons":[{"src":"https://x/i.png"}]}]}`, ""},
	}
	for _, tc := range cases {
		key, shape := listShape(tc.method)
		got := listTypeErrors(json.RawMessage(tc.result), key, shape)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s %s: %v, want none", tc.method, tc.result, got)
		case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
			t.Errorf("%s %s: %q, want %q", tc.method, tc.result, got, tc.want)
		}
	}
	if _, shape := listShape("tools/call"); shape != nil {
		t.Error("tools/call has a list shape")
	}
}

// FuzzListTypes: listTypeErrors and cacheHintProblem never panic on any
// result, and stay bounded.
func FuzzListTypes(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"a","annotations":{"readOnlyHint":"true"}}]}`,
		`{"tools":[{"name":"a","icons":[{"src":1}]}],"nextCursor":1,"ttlMs":-1,"cacheScope":2}`,
		`{"prompts":[{"arguments":[1,{"required":"x"}]}]}`, `[]`, `null`, `{"tools":"x"}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
			key, shape := listShape(m)
			if got := listTypeErrors(b, key, shape); len(got) > maxErrors {
				t.Fatalf("%d errors", len(got))
			}
		}
		cacheHintProblem(b)
	})
}

// TestCacheHintLive: the same rule on a live session's events (no
// capture in between: sonde's own frames carry their params only in their
// bytes) against `sonde fixture --era modern`, whose server/discover
// carries the hints and whose tools/list does not.
func TestCacheHintLive(t *testing.T) {
	c := client.New(client.Options{Timeout: 5 * time.Second, Era: client.EraModern})
	var mu sync.Mutex
	var evs []client.Event
	follow := client.FollowN(context.Background(), c, 1024, client.SinkFunc(func(ev client.Event) {
		mu.Lock()
		evs = append(evs, ev)
		mu.Unlock()
	}))
	if err := c.Connect(client.Stdio(capturetest.Stdio(t, "--era", "modern"))); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	follow.Wait()
	mu.Lock()
	defer mu.Unlock()
	fs := lintAll(evs)
	if len(fs) != 1 || fs[0].Rule != RuleCacheHint || fs[0].Method != "" || !strings.HasPrefix(fs[0].Detail, "tools/list result") {
		t.Fatalf("findings %+v, want one cache-hint on the tools/list result", fs)
	}
}
