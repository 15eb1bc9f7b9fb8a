package tap

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// TestHTTPInject: a request injected into the host's session over HTTP
// (JSON and SSE answers) gets its answer with the caller's id; the host's
// client sees nothing of it and goes on; the recording has the injected
// request noted and resolved.
func TestHTTPInject(t *testing.T) {
	for _, json := range []bool{true, false} {
		fp := newFaultProxy(t, json)
		if _, err := fp.p.Inject(context.Background(), []byte(`{"jsonrpc":"2.0","id":"x","method":"ping"}`)); err != nil {
			t.Fatalf("json %v: ping: %v", json, err)
		}
		a, err := fp.p.Inject(context.Background(), []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"value":"injected"}}}`))
		if err != nil || !strings.Contains(string(a), `"id":7`) || !strings.Contains(string(a), "injected") {
			t.Fatalf("json %v: %s %v", json, a, err)
		}
		if got, err := fp.echo("host", 0, 0); err != nil || got != "host" {
			t.Fatalf("json %v: the host's call after: %q %v", json, got, err)
		}
		if s := fp.c.Stats(); s.Unknown+s.Malformed+s.Duplicate != 0 {
			t.Errorf("json %v: the host saw something: %+v", json, s)
		}
		var noted, resolved int
		for _, ev := range fp.done() {
			if ev.Kind == client.EvNote && strings.Contains(ev.Note, "sonde inject: request ") {
				noted++
			}
			if ev.Kind == client.EvRequest && ev.Req.State == client.StateResolved && strings.HasPrefix(ev.Req.ID.String(), `"sonde-inject-`) {
				resolved++
			}
		}
		if noted != 2 || resolved != 2 {
			t.Errorf("json %v: %d injected requests noted, %d resolved, want 2 and 2", json, noted, resolved)
		}
	}
	p := NewProxy(ProxyOptions{})
	defer p.Close()
	if _, err := p.Inject(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); !errors.Is(err, ErrNoSession) {
		t.Errorf("before the host's session: %v", err)
	}
}
