package clients_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/clients"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// at is a time of the synthetic sessions below: t0 plus ms milliseconds.
func at(ms int) time.Time {
	return time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
}

// frame is an event of a line going dir at ms.
func frame(dir client.Direction, ms int, line string) client.Event {
	m, err := jsonrpc.Decode([]byte(line))
	return client.Event{Kind: client.EvFrame, Time: at(ms), Frame: &client.FrameInfo{Frame: client.Frame{Dir: dir, Time: at(ms), Raw: []byte(line), Msg: m, Err: err}}}
}

func result(id int, result string) string {
	return `{"jsonrpc":"2.0","id":` + jsonInt(id) + `,"result":` + result + `}`
}

// TestRefetchInTTL: a list (or resource) asked for again while its last
// result's ttlMs runs is a re-fetch; not after the TTL, not after the
// server said the list changed (or the resource was updated), not for a
// result with ttlMs 0 or none, and not for another page. The times are
// the frames' (a tap records the wire's), so they are fixed here.
func TestRefetchInTTL(t *testing.T) {
	const list = `{"tools":[],"ttlMs":60000,"cacheScope":"connection"}`
	evs := []client.Event{
		{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart}},
		frame(client.Out, 0, initialize(1, "host-t", "1", "2026-07-28", `{}`)),
		frame(client.In, 1, result(1, `{"protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)),
		frame(client.Out, 10, request(2, "tools/list", `{}`)),
		frame(client.In, 20, result(2, list)),                                                        // fresh until 60020
		frame(client.Out, 10020, request(3, "tools/list", `{}`)),                                     // 50 s left: a re-fetch
		frame(client.In, 10030, result(3, list)),                                                     // fresh until 70030
		frame(client.Out, 10040, request(4, "tools/list", `{"cursor":"page2"}`)),                     // another page: not cached
		frame(client.In, 10050, result(4, `{"tools":[],"ttlMs":0}`)),                                 // ttlMs 0: not cached
		frame(client.Out, 10060, request(5, "tools/list", `{"cursor":"page2"}`)),                     // no
		frame(client.In, 10070, result(5, `{"tools":[]}`)),                                           // no hint: not cached
		frame(client.In, 20000, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`),     // stale now
		frame(client.Out, 20010, request(6, "tools/list", `{}`)),                                     // no
		frame(client.In, 20020, result(6, list)),                                                     // fresh until 80020
		frame(client.Out, 80020, request(7, "tools/list", `{}`)),                                     // the TTL ran out: no
		frame(client.In, 80030, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"down"}}`), // an error: nothing cached
		frame(client.Out, 80040, request(8, "tools/list", `{}`)),                                     // no
		frame(client.Out, 90000, request(9, "resources/read", `{"uri":"file:///a"}`)),
		frame(client.In, 90010, result(9, `{"contents":[],"ttlMs":1000.5}`)),           // fresh until 91010.5
		frame(client.Out, 90500, request(10, "resources/read", `{"uri":"file:///a"}`)), // a re-fetch, 510.5 ms left
		frame(client.In, 90600, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}`),
		frame(client.Out, 90700, request(11, "resources/read", `{"uri":"file:///a"}`)), // updated: no
	}
	f := clients.New()
	for _, ev := range evs {
		f.Apply(ev)
	}
	got := f.Sessions()
	if len(got) != 1 {
		t.Fatalf("%d sessions", len(got))
	}
	s := got[0]
	want := []clients.Refetch{
		{Method: "tools/list", ID: "3", Left: 50 * time.Second},
		{Method: "resources/read", Key: "file:///a", ID: "10", Left: 510*time.Millisecond + 500*time.Microsecond},
	}
	if s.Refetches != 2 || s.Cached != 4 || !reflect.DeepEqual(s.Refetched, want) {
		t.Errorf("refetches %d, cached %d, %+v; want 2, 4, %+v", s.Refetches, s.Cached, s.Refetched, want)
	}
}

// TestSessionsOfOneCapture: a capture with two process starts holds two
// sessions; a start before the host sent anything begins none; sonde's
// own injected requests are not the host's.
func TestSessionsOfOneCapture(t *testing.T) {
	start := client.Event{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart}}
	f := clients.New()
	for _, ev := range []client.Event{
		start, start,
		frame(client.Out, 0, initialize(1, "first", "1", "2025-06-18", `{}`)),
		frame(client.Out, 1, `{"jsonrpc":"2.0","id":"sonde-42-1","method":"tools/list"}`),
		start,
		frame(client.Out, 2, initialize(1, "second", "1", "2025-06-18", `{}`)),
		frame(client.Out, 3, request(2, "ping", `{}`)),
	} {
		f.Apply(ev)
	}
	got := f.Sessions()
	if len(got) != 2 || got[0].Host != "first" || got[0].Requests != 1 || got[1].Host != "second" || got[1].Requests != 2 || got[1].MaxInFlight != 2 {
		t.Fatalf("sessions %+v", got)
	}
}

// TestHTTPSession: a session over Streamable HTTP (sonde's own client
// against the fixture, recorded) folds as a stdio one: its frames are the
// host's and the server's whatever the transport.
func TestHTTPSession(t *testing.T) {
	path := capturetest.Record(t, capturetest.Options{HTTP: true}, func(ctx context.Context, c *client.Client) {
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"x"}`), client.CallOptions{Tool: "echo", ProgressToken: true}); err != nil {
			t.Fatal(err)
		}
	})
	got := foldFile(t, path)
	if len(got) != 1 || got[0].Host != "sonde" || got[0].Opens != "initialize" || got[0].Requests != 3 || got[0].Progress != 1 || len(got[0].Revisions) != 1 {
		t.Fatalf("sessions %+v", got)
	}
}
