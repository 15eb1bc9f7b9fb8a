package capture

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestHoldRoundTrip: each step of a held frame is written in a 1.5 file
// (its frames redacted like a frame's raw, base64 when not UTF-8) and
// read back whole.
func TestHoldRoundTrip(t *testing.T) {
	steps := []*client.Hold{
		{Handle: "h1", Breakpoint: 1, Action: client.HoldHeld, Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(3), Method: "tools/call"},
		{Handle: "h1", Breakpoint: 1, Action: client.HoldEdited, By: client.HoldBySocket, Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(3), Method: "tools/call",
			Original: []byte(`{"jsonrpc":"2.0","id":3,"result":{"token":"s3cret"}}`), Frame: []byte(`{"jsonrpc":"2.0","id":3,"result":{}}`), Held: 1500 * time.Millisecond},
		{Handle: "h2", Breakpoint: 2, Action: client.HoldReleased, By: client.HoldByTimeout, Dir: client.Out, Kind: jsonrpc.KindRequest, ID: jsonrpc.String("a"), Held: time.Second, Order: 2},
		{Handle: "h3", Breakpoint: 2, Action: client.HoldDropped, By: client.HoldByUI, Dir: client.Out, Original: []byte("\xff not utf-8"), Held: 1},
	}
	red, err := NewRedactor(nil, []string{"s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, Options{Redact: red})
	if err != nil {
		t.Fatal(err)
	}
	o := client.NewObserver(0)
	rec.Follow(o)
	for _, h := range steps {
		o.Hold("a step", h, time.Now())
	}
	o.Note("a note", time.Now())
	o.Close()
	rec.Close()
	if strings.Contains(buf.String(), "s3cret") || !strings.Contains(buf.String(), `"version":"1.5"`) {
		t.Fatalf("not redacted, or not 1.5:\n%s", buf.String())
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []*client.Hold
	for rec, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		if ev, ok, err := r.Header().Event(rec); err == nil && ok && ev.Kind == client.EvNote {
			got = append(got, ev.Hold)
		}
	}
	if len(got) != len(steps)+1 || got[len(steps)] != nil {
		t.Fatalf("read back %d notes: %+v", len(got), got)
	}
	steps[1].Original = []byte(`{"jsonrpc":"2.0","id":3,"result":{"token":"«redacted»"}}`)
	for i, want := range steps {
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("step %d:\n got %+v\nwant %+v", i, got[i], want)
		}
	}
}
