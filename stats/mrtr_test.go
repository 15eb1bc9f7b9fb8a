package stats

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/lint"
)

// TestMRTRChain: a real modern session against the fixture's confirm tool
// (input_required, then a retry with the answer) whose "user" takes at
// least 60ms to answer: the chain has two rounds, its waiting time is at
// least the user's, and its server time is the sum of the two rounds'
// latencies. The same capture lints clean of the MRTR rules (sonde echoes
// the requestState).
func TestMRTRChain(t *testing.T) {
	const think = 60 * time.Millisecond
	user := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		time.Sleep(think)
		return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil
	}
	o := capturetest.Options{Fixture: []string{"--era", "modern"}, Era: client.EraModern,
		ServerRequests: client.ServerRequests{Elicitation: true}, Inputs: user}
	evs := capturetest.Events(t, capturetest.Record(t, o, func(ctx context.Context, c *client.Client) {
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.CallTool(ctx, "confirm", json.RawMessage(`{"message":"Ship it?"}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}))
	r := collect(evs)
	if len(r.Chains) != 1 {
		t.Fatalf("chains %+v, want 1", r.Chains)
	}
	ch := r.Chains[0]
	var rounds time.Duration
	for _, ev := range evs {
		if q := ev.Req; q != nil && q.Method == "tools/call" && (q.State == client.StateRetried || q.State == client.StateResolved) {
			rounds += q.Latency
		}
	}
	if ch.Method != "tools/call" || ch.Tool != "confirm" || ch.Rounds != 2 || ch.Outcome != "resolved" || ch.Waiting < think || ch.Server != rounds || ch.Server <= 0 {
		t.Errorf("chain %+v (rounds' latencies %s)", ch, rounds)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), "MRTR chains (input_required, then retries): 1\n  tools/call confirm: 2 rounds, resolved; server worked ") {
		t.Errorf("text:\n%s", b.String())
	}
	l := lint.New()
	for _, ev := range evs {
		for _, f := range l.Check(ev) {
			if f.Rule == lint.RuleRequestState || f.Rule == lint.RuleResultType {
				t.Errorf("sonde's own chain: %s %s", f.Rule, f.Detail)
			}
		}
	}
}
