package observe

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// FuzzFold: whatever lines go by in either direction, in a sonde session
// or a tapped one, the folder neither panics nor loses a request that had
// an outcome, and every span it makes is named and ended.
func FuzzFold(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"isError":true}}`,
		`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"m"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"r"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x","_meta":{"traceparent":"garbage"}}}`,
		`not json`,
	} {
		f.Add(s, s, false)
	}
	f.Fuzz(func(t *testing.T, out, in string, tap bool) {
		exp := tracetest.NewInMemoryExporter()
		tel := NewWith(keep{exp}, nil, Config{})
		o := FoldOptions{}
		if tap {
			o.Mode = ModeTap
		}
		fold := NewFolder(tel.tracer, nil, o)
		at := time.Unix(1700000000, 0)
		for i, line := range []string{out, in, out} {
			dir := client.Out
			if i == 1 {
				dir = client.In
			}
			fr := client.NewInFrame([]byte(line), at)
			fr.Dir = dir
			v := client.VerdictSent
			if dir == client.In {
				v = client.VerdictResolved
			}
			fold.Apply(client.Event{Time: at, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: fr, Verdict: v}})
			if fr.Msg.Kind == jsonrpc.KindRequest {
				fold.Apply(client.Event{Time: at, Kind: client.EvRequest, Req: &client.ReqInfo{Dir: dir, ID: fr.Msg.ID, Method: fr.Msg.Method, State: client.StateQueued}})
				fold.Apply(client.Event{Time: at, Kind: client.EvRequest, Req: &client.ReqInfo{Dir: dir, ID: fr.Msg.ID, Method: fr.Msg.Method, State: client.StateResolved}})
			}
			at = at.Add(time.Millisecond)
		}
		fold.End(at)
		tel.Shutdown(context.Background())
		for _, s := range exp.GetSpans() {
			if s.Name == "" || s.EndTime.Before(s.StartTime) {
				t.Fatalf("span %+v", s)
			}
		}
	})
}
