package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/surface"
)

func TestMain(m *testing.M) { capturetest.Main(m) }

func item(key, def string) Item { return Item{Key: key, Def: json.RawMessage(def)} }

func session(tools ...Item) *Shown {
	return &Shown{Known: surface.Known{Tools: tools, Listed: map[string]bool{"tools": true}}}
}

// TestAnnotationDefaults: a hint left out equals the hint at the spec's
// default; a change of a hint is a field change, and one toward harm is
// named.
func TestAnnotationDefaults(t *testing.T) {
	plain := `{"name":"t","inputSchema":{"type":"object"}}`
	for _, same := range []string{
		`{"name":"t","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"openWorldHint":true}}`,
		`{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"idempotentHint":false},"execution":{"taskSupport":"forbidden"}}`,
		"{\n  \"inputSchema\": {\"type\": \"object\"},\n  \"name\": \"t\"\n}",
	} {
		if ch := CompareItems(SectionTool, []Item{item("t", plain)}, []Item{item("t", same)}, NormalizeTool); len(ch) != 0 {
			t.Errorf("%s: %+v", same, ch)
		}
	}
	for _, tc := range []struct{ old, new, field, note string }{
		{`{"annotations":{"readOnlyHint":true}}`, `{}`, "annotations.readOnlyHint", NoteTurnedDestructive},
		{`{"annotations":{"readOnlyHint":true,"destructiveHint":false}}`, `{"annotations":{"destructiveHint":false}}`, "annotations.readOnlyHint", NoteNoLongerReadOnly},
		{`{"annotations":{"destructiveHint":false}}`, `{}`, "annotations.destructiveHint", NoteNowDestructive},
		{`{}`, `{"annotations":{"readOnlyHint":true}}`, "annotations.readOnlyHint", ""},
		{`{"description":"a"}`, `{"description":"b"}`, "description", ""},
		{`{"inputSchema":{"properties":{"q":{"type":"string"}}}}`, `{"inputSchema":{"properties":{"q":{"type":"number"}}}}`, "inputSchema.properties.q.type", ""},
		{`{"inputSchema":{"required":["a"]}}`, `{"inputSchema":{"required":["b"]}}`, "inputSchema.required[0]", ""},
	} {
		ch := CompareItems(SectionTool, []Item{item("t", tc.old)}, []Item{item("t", tc.new)}, NormalizeTool)
		if len(ch) != 1 || ch[0].Field != tc.field || ch[0].Note != tc.note || ch[0].Key != "t" || ch[0].Section != SectionTool {
			t.Errorf("%s → %s: %+v, want %s (%q)", tc.old, tc.new, ch, tc.field, tc.note)
		}
		if got := RugPull(json.RawMessage(tc.old), json.RawMessage(tc.new)); got != tc.note {
			t.Errorf("RugPull %s → %s: %q", tc.old, tc.new, got)
		}
	}
	ch := CompareItems(SectionTool, []Item{item("a", `{}`), item("b", `{}`)}, []Item{item("b", `{}`), item("c", `{}`)}, NormalizeTool)
	if len(ch) != 2 || ch[0].Kind != Removed || ch[0].Key != "a" || ch[1].Kind != Added || ch[1].Key != "c" {
		t.Errorf("added and removed: %+v", ch)
	}
}

// TestCompareSessions: the server, capabilities, an unfetched list and the
// field-change cap.
func TestCompareSessions(t *testing.T) {
	a := session(item("t", `{"name":"t"}`))
	b := session(item("t", `{"name":"t"}`))
	a.Server.Version, b.Server.Version = "1", "2"
	a.Capabilities, b.Capabilities = json.RawMessage(`{"tools":{}}`), json.RawMessage(`{"tools":{"listChanged":true},"prompts":{}}`)
	b.Prompts = []Item{item("p", `{"name":"p"}`)} // a never listed prompts
	rep := Compare(a, b, DefaultThresholds)
	want := []string{"server version 1→2", "capabilities prompts {}", "capabilities tools.listChanged true"}
	var got []string
	for _, c := range rep.Changes {
		switch c.Section {
		case SectionServer:
			got = append(got, "server "+c.Field+" "+c.Old+"→"+c.New)
		default:
			got = append(got, c.Section+" "+c.Field+" "+c.New)
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") || !rep.Differs() {
		t.Errorf("changes %q, want %q", got, want)
	}
	var big, big2 []string
	for i := range 60 {
		big = append(big, fmt.Sprintf(`"f%02d":1`, i))
		big2 = append(big2, fmt.Sprintf(`"f%02d":2`, i))
	}
	ch := CompareItems(SectionPrompt, []Item{item("p", "{"+strings.Join(big, ",")+"}")}, []Item{item("p", "{"+strings.Join(big2, ",")+"}")}, nil)
	if len(ch) != maxFieldChanges+1 || ch[maxFieldChanges].Note != "10 more fields differ" {
		t.Errorf("%d changes, last %+v", len(ch), ch[len(ch)-1])
	}
	if rep := Compare(session(), session(), DefaultThresholds); rep.Differs() {
		t.Errorf("empty sessions differ: %+v", rep)
	}
}

func group(tool, args string, lat time.Duration, outcomes map[string]int) *CallGroup {
	return &CallGroup{Tool: tool, Args: args, Outcomes: outcomes, Latencies: []time.Duration{lat}}
}

// TestCompareCalls: calls match by tool and arguments; an outcome change,
// a shift past both thresholds (and not one past only one), calls on one
// side only.
func TestCompareCalls(t *testing.T) {
	ok := map[string]int{"resolved": 2}
	a := []*CallGroup{
		group("echo", `{"v":1}`, 100*time.Millisecond, ok),
		group("echo", `{"v":2}`, 100*time.Millisecond, ok),
		group("echo", `{"v":3}`, 100*time.Millisecond, ok),
		group("echo", `{"v":4}`, 1000*time.Millisecond, ok),
		group("echo", `{"v":5}`, 10*time.Millisecond, ok),
		group("gone", `{}`, time.Millisecond, ok),
	}
	b := []*CallGroup{
		group("echo", `{"v":1}`, 100*time.Millisecond, map[string]int{"tool-error": 2}),
		group("echo", `{"v":2}`, 400*time.Millisecond, ok),  // +300ms, 4x: slower
		group("echo", `{"v":3}`, 50*time.Millisecond, ok),   // -50ms: under 100ms
		group("echo", `{"v":4}`, 1200*time.Millisecond, ok), // +200ms but 1.2x
		group("echo", `{"v":5}`, 5*time.Millisecond, ok),
		group("new", `{}`, time.Millisecond, ok),
	}
	got := compareCalls(a, b, DefaultThresholds)
	var kinds []string
	for _, c := range got {
		kinds = append(kinds, c.Args+" "+c.Kind)
	}
	want := []string{`{"v":1} status`, `{"v":2} slower`, `{} only-a`, `{} only-b`}
	if strings.Join(kinds, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", kinds, want)
	}
	if got[0].Old != "resolved×2" || got[0].New != "tool-error×2" {
		t.Errorf("status change %+v", got[0])
	}
	if got := compareCalls(b[1:2], a[1:2], DefaultThresholds); len(got) != 1 || got[0].Kind != CallFaster {
		t.Errorf("faster: %+v", got)
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		``:                           `{}`,
		`null`:                       `{}`,
		` {"b":1, "a":[1,2]} `:       `{"a":[1,2],"b":1}`,
		`{"n":12345678901234567890}`: `{"n":12345678901234567890}`,
		`not json`:                   `not json`,
	} {
		if got := Canonical(json.RawMessage(in)); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefCost(t *testing.T) {
	def := `{"name":"t", "description":"héllo", "inputSchema": {"type": "object"}, "outputSchema":{"type":"string"}}`
	c := DefCost("t", json.RawMessage(def))
	want := ToolCost{Name: "t", Def: len(`{"name":"t","description":"héllo","inputSchema":{"type":"object"},"outputSchema":{"type":"string"}}`),
		Description: 6, InputSchema: len(`{"type":"object"}`), OutputSchema: len(`{"type":"string"}`)}
	if c != want {
		t.Errorf("%+v, want %+v", c, want)
	}
	s := session(item("t", def))
	s.Groups = []*CallGroup{{Tool: "t", Outcomes: map[string]int{"resolved": 2}, ResultBytes: 40}, {Tool: "u", Outcomes: map[string]int{"error": 1}}}
	costs := Costs(s)
	if len(costs) != 2 || costs[0].Calls != 2 || costs[0].Results != 40 || costs[1].Name != "u" || costs[1].Def != 0 {
		t.Errorf("costs %+v", costs)
	}
	if tot := TotalCost(costs); tot.Def != want.Def || tot.Calls != 3 || tot.Results != 40 {
		t.Errorf("total %+v", tot)
	}
}

// TestCollectorRealSession: a real session against the fixture, its tools
// listed over pages of 3: the listing is joined, the capabilities and
// server read, calls with the same arguments in another key order grouped,
// a tool error told apart, result bytes counted, the outcome of each call
// reported as it ends.
func TestCollectorRealSession(t *testing.T) {
	var names []string
	path := capturetest.Record(t, capturetest.Options{Fixture: []string{"--page-size", "3"}}, func(ctx context.Context, c *client.Client) {
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		tools, err := c.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			names = append(names, tool.Name)
		}
		for _, args := range []string{`{"a":1,"b":2}`, `{"b":2, "a":1}`} {
			if _, _, err := c.CallTool(ctx, "add", json.RawMessage(args), client.CallOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := c.CallTool(ctx, "tool-error", json.RawMessage(`{"message":"x"}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	c := NewCollector()
	var done []*Done
	for _, ev := range capturetest.Events(t, path) {
		if d := c.Add(ev); d != nil {
			done = append(done, d)
		}
	}
	s := c.Shown()
	if len(s.Tools) != len(names) || len(names) < 4 || !s.Listed["tools"] || s.Listed["prompts"] || s.Server.Name != "sonde-fixture" || s.Protocol == "" || !strings.Contains(string(s.Capabilities), `"tools"`) {
		t.Fatalf("session: %d tools of %d, %+v", len(s.Tools), len(names), s)
	}
	for i, it := range s.Tools {
		if it.Key != names[i] || !json.Valid(it.Def) || it.Seq == 0 {
			t.Errorf("tool %d: %+v", i, it)
		}
	}
	if len(s.Groups) != 2 || s.Groups[0].Args != `{"a":1,"b":2}` || s.Groups[0].Outcomes["resolved"] != 2 || s.Groups[0].ResultBytes == 0 || s.Groups[1].Outcomes[OutcomeToolError] != 1 {
		t.Errorf("groups: %+v %+v", s.Groups[0], s.Groups)
	}
	if len(done) != 3 || !done[2].ToolError || done[0].ToolError || done[0].FrameSeq == 0 || done[0].Latency <= 0 {
		t.Errorf("done: %+v", done)
	}
}

func TestBoundArgs(t *testing.T) {
	short := `{"a":"` + strings.Repeat("x", 100) + `"}`
	if boundArgs(short) != short {
		t.Error("short arguments changed")
	}
	long1 := `{"a":"` + strings.Repeat("é", MaxArgs) + `1"}`
	long2 := `{"a":"` + strings.Repeat("é", MaxArgs) + `2"}`
	b1, b2 := boundArgs(long1), boundArgs(long2)
	if b1 == b2 || len(b1) > 256+80 || !strings.HasPrefix(b1, `{"a":"éé`) || !strings.Contains(b1, "…sha256:") || b1 != boundArgs(long1) || !utf8.ValidString(b1) {
		t.Errorf("%q %q", b1, b2)
	}
}

// TestToolCollectorCountsEveryCall: grouped by tool alone, calls with more
// distinct arguments than MaxCallGroups are all counted (the arguments
// collector drops those beyond), with the same tool errors and results; the
// tool is named by the outcome, or else by the params.
func TestToolCollectorCountsEveryCall(t *testing.T) {
	n := MaxCallGroups + 5
	byArgs, byTool := NewCollector(), NewToolCollector()
	var doneArgs, doneTool int
	for i := range n {
		id := jsonrpc.Int(int64(i + 1))
		params := fmt.Sprintf(`{"name":"echo","arguments":{"value":"v%d"}}`, i)
		result := `{"content":[{"type":"text","text":"x"}]}`
		if i == 7 {
			result = `{"content":[],"isError":true}`
		}
		evs := []client.Event{
			{Seq: uint64(3*i + 1), Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.Out,
				Msg: jsonrpc.Message{Kind: jsonrpc.KindRequest, ID: id, Method: "tools/call", Params: json.RawMessage(params)}}, Verdict: client.VerdictSent}},
			{Seq: uint64(3*i + 2), Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.In,
				Msg: jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: id, Result: json.RawMessage(result)}}, Verdict: client.VerdictResolved}},
			{Seq: uint64(3*i + 3), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: id, Method: "tools/call", Tool: "echo", State: client.StateResolved}},
		}
		if i == 3 {
			evs[2].Req.Tool = "" // read from the params then
		}
		for _, ev := range evs {
			if d := byArgs.Add(ev); d != nil {
				doneArgs++
			}
			if d := byTool.Add(ev); d != nil {
				doneTool++
				if d.Tool != "echo" || d.Args != "" || d.ToolError != (i == 7) || d.FrameSeq != uint64(3*i+2) {
					t.Fatalf("call %d: %+v", i, d)
				}
			}
		}
	}
	if doneArgs != n || doneTool != n {
		t.Fatalf("done: %d and %d of %d", doneArgs, doneTool, n)
	}
	a, b := byArgs.Shown(), byTool.Shown()
	if len(a.Groups) != MaxCallGroups || a.CallsDropped != 5 {
		t.Errorf("by arguments: %d groups, %d dropped", len(a.Groups), a.CallsDropped)
	}
	if len(b.Groups) != 1 || b.Groups[0].Calls() != n || b.Groups[0].Outcomes[OutcomeToolError] != 1 || b.CallsDropped != 0 {
		t.Errorf("by tool: %+v", b.Groups)
	}
	if c := Costs(b); len(c) != 1 || c[0].Calls != n || c[0].Results != (n-1)*len(`{"content":[{"type":"text","text":"x"}]}`)+len(`{"content":[],"isError":true}`) {
		t.Errorf("costs: %+v", c)
	}
}

// TestHintDrift: each of the four hints, both ways; other fields and
// non-boolean values have no direction.
func TestHintDrift(t *testing.T) {
	for _, tc := range []struct {
		field, old, new, want string
	}{
		{"annotations.readOnlyHint", "false", "true", DriftLoosened},
		{"annotations.readOnlyHint", "true", "false", DriftTightened},
		{"annotations.destructiveHint", "true", "false", DriftLoosened},
		{"annotations.destructiveHint", "false", "true", DriftTightened},
		{"annotations.idempotentHint", "false", "true", DriftLoosened},
		{"annotations.openWorldHint", "true", "false", DriftLoosened},
		{"annotations.openWorldHint", "false", "true", DriftTightened},
		{"annotations.title", `"a"`, `"b"`, ""},
		{"annotations.readOnlyHint", `"true"`, "false", ""},
		{"description", "true", "false", ""},
	} {
		if got := hintDrift(Change{Kind: Changed, Field: tc.field, Old: tc.old, New: tc.new}); got != tc.want {
			t.Errorf("%s %s → %s: %q, want %q", tc.field, tc.old, tc.new, got, tc.want)
		}
	}
	chs := CompareItems(SectionTool, []Item{{Key: "t", Def: json.RawMessage(`{"annotations":{"readOnlyHint":false}}`)}},
		[]Item{{Key: "t", Def: json.RawMessage(`{"annotations":{"readOnlyHint":true}}`)}}, NormalizeTool)
	if len(chs) != 1 || chs[0].Drift != DriftLoosened {
		t.Errorf("CompareItems: %+v", chs)
	}
}
