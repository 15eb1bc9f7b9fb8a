package filter

import (
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// FuzzLiveRequests feeds a live index a stream of request outcomes,
// responses and process starts read from the input: it never holds more
// than its limit, its order and its map agree, and a response of a
// request still held has that request's method.
func FuzzLiveRequests(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6}, uint8(2))
	f.Add([]byte{0, 0, 0, 255, 1, 1, 128, 7}, uint8(1))
	f.Add([]byte{9, 9, 9, 9}, uint8(5))
	f.Fuzz(func(t *testing.T, ops []byte, limit uint8) {
		r := NewLiveRequests(int(limit))
		states := []client.State{client.StateSent, client.StateResolved, client.StateCancelled, client.StateTimeout}
		for _, op := range ops {
			id := jsonrpc.Int(int64(op % 16))
			switch op >> 6 {
			case 0, 1:
				r.Learn(client.Event{Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: id, Method: "tools/call", Tool: "t", State: states[op%4]}})
			case 2:
				fr := client.FrameInfo{}
				fr.Dir, fr.Msg.Kind, fr.Msg.ID = client.In, jsonrpc.KindResponse, id
				ev := client.Event{Kind: client.EvFrame, Frame: &fr}
				r.Learn(ev)
				it, ok := r.ItemAt(ev, r.Gen())
				_, held := r.reqs[reqKey{r.Gen(), client.Out, id.String()}]
				if !ok || held && it.Method != "tools/call" {
					t.Fatalf("response of held id %s: %+v", id, it)
				}
			default:
				r.Learn(client.Event{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart}})
			}
			if len(r.reqs) > max(int(limit), 1) || len(r.order) != len(r.reqs) {
				t.Fatalf("holds %d (order %d), limit %d", len(r.reqs), len(r.order), limit)
			}
		}
	})
}
