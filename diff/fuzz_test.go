package diff

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// FuzzCollector feeds a tools/list answer and a tools/call answer of any
// bytes: the collector must not panic, keep what is valid JSON valid, and
// compare what it read with itself as equal.
func FuzzCollector(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a","annotations":{"readOnlyHint":true}}]}`), []byte(`{"content":[],"isError":true}`))
	f.Add([]byte(`{"tools":[{"name":"a"},{"name":"a"},3,null],"nextCursor":""}`), []byte(`null`))
	f.Add([]byte(`[`), []byte(`{"isError":"yes"}`))
	f.Fuzz(func(t *testing.T, list, result []byte) {
		c := NewCollector()
		t0 := time.Unix(0, 0)
		seq := uint64(0)
		frame := func(dir client.Direction, raw string) {
			seq++
			msg, err := jsonrpc.Decode([]byte(raw))
			c.Add(client.Event{Seq: seq, Time: t0, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: transport.Frame{Dir: dir, Raw: []byte(raw), Msg: msg, Err: err}, Verdict: client.VerdictResolved}})
		}
		frame(client.Out, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		frame(client.In, `{"jsonrpc":"2.0","id":1,"result":`+string(list)+`}`)
		frame(client.Out, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","arguments":{"x":1}}}`)
		frame(client.In, `{"jsonrpc":"2.0","id":2,"result":`+string(result)+`}`)
		seq++
		c.Add(client.Event{Seq: seq, Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(2), Method: "tools/call", State: client.StateResolved}})
		s := c.Shown()
		for _, it := range s.Tools {
			if !json.Valid(it.Def) {
				t.Fatalf("tool %q: invalid definition %q", it.Key, it.Def)
			}
		}
		if rep := Compare(s, s, DefaultThresholds); rep.Differs() {
			t.Fatalf("a session differs from itself: %+v", rep)
		}
		Costs(s)
	})
}

// FuzzCompareItems compares any two definitions: no panic, and a
// definition compared with itself shows no change.
func FuzzCompareItems(f *testing.F) {
	f.Add([]byte(`{"annotations":{"readOnlyHint":true},"inputSchema":{"required":["a"]}}`), []byte(`{"annotations":7}`))
	f.Add([]byte(`[1,{"a":null}]`), []byte(`"x"`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		CompareItems(SectionTool, []Item{{Key: "t", Def: a}}, []Item{{Key: "t", Def: b}}, NormalizeTool)
		RugPull(a, b)
		if ch := CompareItems(SectionTool, []Item{{Key: "t", Def: a}}, []Item{{Key: "t", Def: a}}, NormalizeTool); len(ch) != 0 {
			t.Fatalf("%q differs from itself: %+v", a, ch)
		}
	})
}
