package tap

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// TestHostSessionsBounded: the sessions kept for injection are bounded
// (the oldest forgotten first), an ended one is forgotten, and a session
// it does not know is ErrSessionGone, while "" is the latest POST's.
func TestHostSessionsBounded(t *testing.T) {
	var s hostSessions
	post := func(sid string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp?x="+sid, nil)
		r.Header.Set("Mcp-Session-Id", sid)
		return r
	}
	for i := range maxHostSessions + 1 {
		sid := "s" + strconv.Itoa(i)
		s.learn(post(sid), sid)
	}
	if len(s.by) != maxHostSessions || len(s.order) != maxHostSessions {
		t.Fatalf("kept %d sessions (%d in order), want %d", len(s.by), len(s.order), maxHostSessions)
	}
	if _, _, _, err := s.target("s0"); !errors.Is(err, ErrSessionGone) {
		t.Errorf("the oldest: %v, want ErrSessionGone", err)
	}
	path, h, _, err := s.target("s1")
	if err != nil || path != "/mcp?x=s1" || h.Get("Mcp-Session-Id") != "s1" {
		t.Errorf("s1: %q %v %v", path, h, err)
	}
	s.forget("s1")
	if _, _, _, err := s.target("s1"); !errors.Is(err, ErrSessionGone) {
		t.Errorf("an ended session: %v, want ErrSessionGone", err)
	}
	last := "s" + strconv.Itoa(maxHostSessions)
	if _, h, id, err := s.target(""); err != nil || h.Get("Mcp-Session-Id") != last || len(id) == 0 {
		t.Errorf("the latest POST's session: %v %s %v", h, id, err)
	}
}
