package frames

import (
	"context"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// fixtureSession runs a real session against the fixture server: the
// handshake, then one echo call that takes 1.2s. It returns every event
// the client emitted, and the call's id.
func fixtureSession(t *testing.T) ([]client.Event, jsonrpc.ID) {
	t.Helper()
	cfg := capturetest.Stdio(t)
	c := client.New(client.Options{})
	sub := c.Subscribe(4096)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Connect(client.Stdio(cfg)); err != nil {
		c.Close()
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx); err != nil {
		c.Close()
		t.Fatal(err)
	}
	call := c.GoTool(ctx, "echo", []byte(`{"value":"hello","delay_ms":1200}`), client.CallOptions{})
	if _, err := call.Wait(); err != nil {
		c.Close()
		t.Fatal(err)
	}
	c.Close()
	var evs []client.Event
	for ev := range sub.C {
		evs = append(evs, ev)
	}
	return evs, call.ID
}

// TestFilterJudgesFramesByRequest: on a real session, tool:, a plain word
// and duration: each find the call's request and its response (a frame
// is judged by its request, as on the command line's --filter).
func TestFilterJudgesFramesByRequest(t *testing.T) {
	evs, id := fixtureSession(t)
	var want []uint64
	for _, ev := range evs {
		if ev.Kind == client.EvFrame && ev.Frame.Msg.ID == id && ev.Frame.Msg.Kind != jsonrpc.KindNotification {
			want = append(want, ev.Seq)
		}
	}
	if len(want) != 2 {
		t.Fatalf("the call's frames: %v", want)
	}
	for _, q := range []string{"tool:echo", "echo", "duration:>1s", "tool:echo duration:>1s dir:in"} {
		t.Run(q, func(t *testing.T) {
			m := New(theme.New(theme.NoColor()), Options{})
			m.SetSize(120, 40)
			m.Apply(evs)
			press(m, "/")
			typeText(m, q)
			got := seqs(m)
			for _, w := range want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found && !(q == "tool:echo duration:>1s dir:in" && w == want[0]) {
					t.Errorf("%q: rows %v lack frame %d (the call's frames are %v)", q, got, w, want)
				}
			}
			if q != "echo" {
				// The field queries find the call's frames alone.
				n := len(want)
				if q == "tool:echo duration:>1s dir:in" {
					n = 1
				}
				if len(got) != n {
					t.Errorf("%q: rows %v, want the call's %v", q, got, want)
				}
			}
		})
	}
}

// TestFilterRejudgesWhenARequestSettles: a query typed while the call is in
// flight takes in its request frame once the call settles (its latency is
// known only then).
func TestFilterRejudgesWhenARequestSettles(t *testing.T) {
	evs, id := fixtureSession(t)
	cut := -1
	for i, ev := range evs {
		if ev.Kind == client.EvRequest && ev.Req.ID == id && ev.Req.State.Final() {
			cut = i
		}
	}
	if cut < 0 {
		t.Fatal("the call never settled")
	}
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(120, 40)
	m.Apply(evs[:cut])
	press(m, "/")
	typeText(m, "duration:>1s")
	if n := m.count(); n != 0 {
		t.Fatalf("%d rows before the call settled", n)
	}
	m.Apply(evs[cut:])
	if n := m.count(); n != 2 {
		t.Fatalf("after the call settled: rows %v, want its request and response", seqs(m))
	}
}
