package report_test

import (
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/report"
)

// TestRetryChain: a modern-era call continued after input_required is one
// chain on the waterfall: the retry names the request it continues, the
// time the client took to answer between them, and the server's share
// (the chain's latencies without that wait).
func TestRetryChain(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	req := func(seq uint64, at int, id int64, st client.State, lat int, retryOf jsonrpc.ID) client.Event {
		return client.Event{Seq: seq, Time: ms(at), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(id),
			Method: "tools/call", Tool: "confirm", State: st, Latency: time.Duration(lat) * time.Millisecond, RetryOf: retryOf}}
	}
	b := report.New(capture.Header{Start: t0, Transport: "stdio"}, report.Options{File: "x"})
	for _, ev := range []client.Event{
		req(1, 0, 1, client.StateQueued, 0, jsonrpc.ID{}),
		req(2, 10, 1, client.StateRetried, 10, jsonrpc.ID{}),
		req(3, 30, 2, client.StateQueued, 0, jsonrpc.Int(1)),
		req(4, 38, 2, client.StateRetried, 8, jsonrpc.ID{}),
		req(5, 40, 3, client.StateQueued, 0, jsonrpc.Int(2)),
		req(6, 45, 3, client.StateResolved, 5, jsonrpc.ID{}),
	} {
		b.Add(ev)
	}
	m := b.Model()
	if len(m.Spans) != 3 {
		t.Fatalf("spans: %+v", m.Spans)
	}
	last := m.Spans[2]
	if last.RetryOf != "2" || last.Chain != "1" || last.ClientWait != 2*time.Millisecond || last.ServerShare != 23*time.Millisecond ||
		m.Spans[1].ClientWait != 20*time.Millisecond || m.Spans[0].Chain != "" {
		t.Errorf("chain: %+v", m.Spans)
	}
}
