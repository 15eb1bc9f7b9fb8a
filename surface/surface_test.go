package surface

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// step is one exchange: sonde's request and the server's answer.
type step struct {
	id     int64
	method string
	params string
	result string
}

// feed applies each step's request frame, answer frame and outcome.
func feed(k *Known, steps []step) {
	seq := uint64(0)
	for _, s := range steps {
		id := jsonrpc.Int(s.id)
		seq++
		k.Apply(client.Event{Kind: client.EvFrame, Seq: seq, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.Out,
			Msg: jsonrpc.Message{Kind: jsonrpc.KindRequest, ID: id, Method: s.method, Params: json.RawMessage(s.params)}}}})
		seq++
		k.Apply(client.Event{Kind: client.EvFrame, Seq: seq, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.In,
			Msg: jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: id, Result: json.RawMessage(s.result)}}, Verdict: client.VerdictResolved}})
		seq++
		k.Apply(client.Event{Kind: client.EvRequest, Seq: seq, Req: &client.ReqInfo{Dir: client.Out, ID: id, Method: s.method, State: client.StateResolved}})
	}
}

func keys(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Key)
	}
	return out
}

// TestKnown: each list kind, a listing in pages, an unfinished listing,
// and a second initialize replacing the first's server, protocol and
// capabilities.
func TestKnown(t *testing.T) {
	init1 := step{1, "initialize", `{}`, `{"protocolVersion":"2025-06-18","serverInfo":{"name":"a","version":"1"},"capabilities":{"tools": {}}}`}
	cases := []struct {
		name     string
		steps    []step
		list     func(*Known) []Item
		want     []string
		listed   string
		server   string
		protocol string
		caps     string
	}{
		{name: "tools", steps: []step{init1, {2, "tools/list", `{}`, `{"tools":[{"name":"x"},{"name":"y"}]}`}},
			list: func(k *Known) []Item { return k.Tools }, want: []string{"x", "y"}, listed: Tools, server: "a", protocol: "2025-06-18", caps: `{"tools":{}}`},
		{name: "prompts", steps: []step{{2, "prompts/list", `{}`, `{"prompts":[{"name":"p"}]}`}},
			list: func(k *Known) []Item { return k.Prompts }, want: []string{"p"}, listed: Prompts},
		{name: "resources", steps: []step{{2, "resources/list", `{}`, `{"resources":[{"uri":"file:///r"}]}`}},
			list: func(k *Known) []Item { return k.Resources }, want: []string{"file:///r"}, listed: Resources},
		{name: "templates", steps: []step{{2, "resources/templates/list", `{}`, `{"resourceTemplates":[{"uriTemplate":"file:///{x}"}]}`}},
			list: func(k *Known) []Item { return k.Templates }, want: []string{"file:///{x}"}, listed: Templates},
		{name: "pages joined", steps: []step{
			{2, "tools/list", `{}`, `{"tools":[{"name":"x"}],"nextCursor":"c1"}`},
			{3, "tools/list", `{"cursor":"c1"}`, `{"tools":[{"name":"y"}]}`},
		}, list: func(k *Known) []Item { return k.Tools }, want: []string{"x", "y"}, listed: Tools},
		{name: "a first page restarts a listing", steps: []step{
			{2, "tools/list", `{}`, `{"tools":[{"name":"x"}]}`},
			{3, "tools/list", `{}`, `{"tools":[{"name":"old"}],"nextCursor":"c1"}`},
			{4, "tools/list", `{}`, `{"tools":[{"name":"z"}]}`},
		}, list: func(k *Known) []Item { return k.Tools }, want: []string{"z"}, listed: Tools},
		{name: "an unfinished listing is not listed", steps: []step{
			{2, "prompts/list", `{}`, `{"prompts":[{"name":"p"}],"nextCursor":"c1"}`},
		}, list: func(k *Known) []Item { return k.Prompts }},
		{name: "a second initialize resets the server", steps: []step{init1,
			{5, "initialize", `{}`, `{"protocolVersion":"2025-11-25","serverInfo":{"name":"b","version":"2"}}`},
		}, list: func(k *Known) []Item { return k.Tools }, server: "b", protocol: "2025-11-25"},
		{name: "discover", steps: []step{{1, "server/discover", `{}`, `{"supportedVersions":["v2","v1"],"capabilities":{"prompts":{}}}`}},
			list: func(k *Known) []Item { return k.Tools }, protocol: "v2", caps: `{"prompts":{}}`},
		{name: "other methods are not read", steps: []step{{2, "tools/call", `{"name":"x"}`, `{"tools":[{"name":"x"}]}`}},
			list: func(k *Known) []Item { return k.Tools }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var k Known
			feed(&k, c.steps)
			if got := keys(c.list(&k)); !slices.Equal(got, c.want) {
				t.Errorf("items %q, want %q", got, c.want)
			}
			if c.listed != "" && !k.Listed[c.listed] || c.listed == "" && len(k.Listed) != 0 {
				t.Errorf("listed %v, want %q", k.Listed, c.listed)
			}
			if k.Server.Name != c.server || k.Protocol != c.protocol || string(k.Capabilities) != c.caps {
				t.Errorf("server %q %q %s, want %q %q %s", k.Server.Name, k.Protocol, k.Capabilities, c.server, c.protocol, c.caps)
			}
			if len(k.pending) != 0 {
				t.Errorf("%d requests still pending after their outcomes", len(k.pending))
			}
		})
	}
}

// TestKnownErrorAnswer: an error answer lists nothing.
func TestKnownErrorAnswer(t *testing.T) {
	var k Known
	id := jsonrpc.Int(1)
	k.Apply(client.Event{Kind: client.EvFrame, Seq: 1, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.Out,
		Msg: jsonrpc.Message{Kind: jsonrpc.KindRequest, ID: id, Method: "tools/list"}}}})
	k.Apply(client.Event{Kind: client.EvFrame, Seq: 2, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.In,
		Msg: jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: id, Error: &jsonrpc.Error{Code: -1, Message: "no"}}}, Verdict: client.VerdictRemoteError}})
	if k.Listed[Tools] {
		t.Fatal("an error answer listed the tools")
	}
}

// TestKnownLate: an answer after its request was cancelled lists the tools
// only for a Known that takes late answers (a watched session's), and a
// duplicate never does; At says when the listing came and was asked for.
func TestKnownLate(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	lateTools := func(k *Known, v client.Verdict) {
		id := jsonrpc.Int(7)
		k.Apply(client.Event{Kind: client.EvFrame, Seq: 1, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.Out, Time: at(10),
			Msg: jsonrpc.Message{Kind: jsonrpc.KindRequest, ID: id, Method: "tools/list"}}}})
		k.Apply(client.Event{Kind: client.EvRequest, Seq: 2, Req: &client.ReqInfo{Dir: client.Out, ID: id, Method: "tools/list", State: client.StateCancelled}})
		k.Apply(client.Event{Kind: client.EvFrame, Seq: 3, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.In, Time: at(50),
			Msg: jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: id, Result: json.RawMessage(`{"tools":[{"name":"x"}]}`)}}, Verdict: v}})
	}
	cases := []struct {
		name string
		late bool
		v    client.Verdict
		want []string
	}{
		{"late, taken", true, client.VerdictLate, []string{"x"}},
		{"late, not taken", false, client.VerdictLate, nil},
		{"duplicate", true, client.VerdictDuplicate, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := Known{Late: c.late}
			lateTools(&k, c.v)
			if got := keys(k.Tools); !slices.Equal(got, c.want) {
				t.Fatalf("tools %q, want %q", got, c.want)
			}
			if c.want != nil && k.At[Tools] != (Listing{Seq: 3, Asked: at(10)}) {
				t.Errorf("at %+v", k.At[Tools])
			}
			if c.want != nil && len(k.pending) != 0 {
				t.Errorf("%d requests still pending after their answer", len(k.pending))
			}
		})
	}
}
