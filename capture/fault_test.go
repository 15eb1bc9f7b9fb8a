package capture

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestLegacyFault: the words sonde 1.3 wrote for each action read back as
// the fields a 1.4 file records.
func TestLegacyFault(t *testing.T) {
	for _, tc := range []struct {
		note string
		want *client.Fault
	}{
		{"fault rule 1 (drop:to-host,tool=echo,id=3) dropped the response to id 3 (tools/call echo) to-host",
			&client.Fault{Rule: 1, Action: "drop", Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(3), Method: "tools/call"}},
		{`fault rule 2 (close:to-host) closed the host's stdout instead of forwarding the response to id "a b" (tools/call echo) to-host`,
			&client.Fault{Rule: 2, Action: "close", Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.String("a b"), Method: "tools/call"}},
		{"fault rule 3 (error:to-server,tool=delete,code=-32603,message=x) boom) answered the request id 9 (tools/call delete) with error -32603 \"x) boom\" instead of forwarding it to-server",
			&client.Fault{Rule: 3, Action: "error", Dir: client.Out, Kind: jsonrpc.KindRequest, ID: jsonrpc.Int(9), Method: "tools/call"}},
		{"fault rule 4 (stall:to-host,method=notifications/progress,ms=50) stalled to-host for 50ms after a notification (notifications/progress)",
			&client.Fault{Rule: 4, Action: "stall", Dir: client.In, Kind: jsonrpc.KindNotification}},
		{"fault rule 5 (noise:to-server) wrote a noise line to the host (at the request id 1 (initialize) to-server)",
			&client.Fault{Rule: 5, Action: "noise", Dir: client.Out, Kind: jsonrpc.KindRequest, ID: jsonrpc.Int(1), Method: "initialize"}},
		{"fault rule 1: drop:to-host,tool=echo", nil},
		{"fault rules on (--seed 7): frames are recorded as the host sent and received them", nil},
		{"sonde tap: stopped after 3 requests", nil},
	} {
		got := legacyFault(tc.note)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.note, got, tc.want)
		}
	}
}

// TestFaultRoundTrip: a note's Fault is written in a 1.4 file and read
// back whole; a note without one stays without.
func TestFaultRoundTrip(t *testing.T) {
	f := &client.Fault{Rule: 2, Action: "drop", Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.String("7"), Method: "tools/call"}
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := client.NewObserver(0)
	rec.Follow(o)
	now := time.Now()
	o.Fault("fault rule 2 (drop) dropped it", f, now)
	o.Note("fault rule 9 (drop:to-host) dropped the response to id 1 to-host", now)
	o.Close()
	rec.Close()
	if !strings.Contains(buf.String(), `"fault":{"rule":2,"action":"drop","dir":"in","kind":"response","id":"7","method":"tools/call"}`) {
		t.Fatalf("no fault record:\n%s", buf.String())
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []*client.Fault
	for rec, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		if ev, ok, err := r.Header().Event(rec); err == nil && ok && ev.Kind == client.EvNote {
			got = append(got, ev.Fault)
		}
	}
	// The second note, in a 1.4 file, is a note: its words are not read.
	if len(got) != 2 || got[0] == nil || *got[0] != *f || got[1] != nil {
		t.Fatalf("read back %+v", got)
	}
}

// FuzzLegacyFault: any note reads without a panic, and a fault it finds
// names a rule and an action.
func FuzzLegacyFault(f *testing.F) {
	f.Add("fault rule 1 (drop:to-host,tool=echo,id=3) dropped the response to id 3 (tools/call echo) to-host")
	f.Add(`fault rule 2 (x) closed the host's stdout instead of forwarding the response to id "a (b" to-host`)
	f.Add("fault rule 3 () answered the request id (")
	f.Fuzz(func(t *testing.T, note string) {
		if fl := legacyFault(note); fl != nil && (fl.Action == "" || !strings.HasPrefix(note, "fault rule ")) {
			t.Fatalf("%q: %+v", note, fl)
		}
	})
}
