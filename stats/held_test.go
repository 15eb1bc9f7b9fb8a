package stats

import (
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestHeldTimeIsNotTheServers: the time a breakpoint held a request's
// answer is taken off its latency, whether the hold's last step is noted
// before the request's outcome or after it; a hold of another id is not.
func TestHeldTimeIsNotTheServers(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	final := func(id int64, lat time.Duration) client.Event {
		return client.Event{Time: t0.Add(lat), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(id),
			Method: "tools/call", Tool: "search", State: client.StateResolved, Latency: lat}}
	}
	release := func(id int64, held time.Duration) client.Event {
		return client.Event{Time: t0, Kind: client.EvNote, Hold: &client.Hold{Handle: "h1", Action: client.HoldReleased,
			Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(id), Held: held}}
	}
	for name, events := range map[string][]client.Event{
		"noted before": {release(1, 4*time.Second), final(1, 5*time.Second)},
		"noted after":  {final(1, 5*time.Second), release(1, 4*time.Second)},
	} {
		c := New(t0)
		for _, ev := range events {
			c.Add(ev)
		}
		c.Add(release(9, time.Hour)) // another id: nothing to take off
		c.Add(final(2, 3*time.Second))
		m := c.Report(0).Methods
		if len(m) != 1 || m[0].Max != 3*time.Second || m[0].P50 != time.Second {
			t.Errorf("%s: %+v, want p50 1s (5s less 4s held) and max 3s", name, m)
		}
	}
}
