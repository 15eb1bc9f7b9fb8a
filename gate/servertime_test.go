package gate

import (
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestServerTime: --max-server-duration holds an MRTR chain to the time
// its server worked, not to the time the client's user took between its
// rounds; a single request to its latency; the rounds of a chain are not
// held one by one.
func TestServerTime(t *testing.T) {
	c := Contracts{MaxServerDuration: time.Second}
	user := Chain{Method: "tools/call", Tool: "confirm", Rounds: 2, Server: 20 * time.Millisecond, Waiting: time.Hour, Outcome: "resolved"}
	if r, ok := c.SlowChain(user); ok {
		t.Errorf("a chain whose user took an hour failed: %+v", r)
	}
	slow := user
	slow.Server = 3 * time.Second
	r, ok := c.SlowChain(slow)
	if !ok || r.Rule != RuleMaxServerDuration || !strings.HasPrefix(r.Message, "tools/call confirm (MRTR chain, 2 rounds, resolved): the server worked 3s while the client and its user took 1h0m0s") {
		t.Errorf("slow chain: %v %+v", ok, r)
	}
	ev := func(state client.State, lat time.Duration, retryOf jsonrpc.ID) client.Event {
		return client.Event{Kind: client.EvRequest, Seq: 7, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(3), Method: "tools/call", Tool: "echo", State: state, Latency: lat, RetryOf: retryOf}}
	}
	if r, ok := c.SlowServer(ev(client.StateResolved, 2*time.Second, jsonrpc.ID{}), 4); !ok || r.Seq != 7 || r.Line != 4 || !strings.HasPrefix(r.Message, "tools/call echo id 3: the server took 2s") {
		t.Errorf("slow request: %v %+v", ok, r)
	}
	for _, e := range []client.Event{
		ev(client.StateResolved, 10*time.Millisecond, jsonrpc.ID{}),
		ev(client.StateRetried, 2*time.Second, jsonrpc.ID{}),    // a chain's round: SlowChain's
		ev(client.StateResolved, 2*time.Second, jsonrpc.Int(2)), // the chain's last round
		ev(client.StateSent, 2*time.Second, jsonrpc.ID{}),
	} {
		if r, ok := c.SlowServer(e, 0); ok {
			t.Errorf("%+v: %+v", e.Req, r)
		}
	}
	if _, ok := (&Contracts{}).SlowChain(slow); ok {
		t.Error("no bound set, yet a result")
	}
}
