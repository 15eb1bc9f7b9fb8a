package clients_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/clients"
)

// session is a Session with its lists non-nil, as the fold gives them.
func session(s clients.Session) clients.Session {
	for _, l := range []*[]string{&s.Revisions, &s.Capabilities} {
		if *l == nil {
			*l = []string{}
		}
	}
	if s.Refetched == nil {
		s.Refetched = []clients.Refetch{}
	}
	if s.Retried == nil {
		s.Retried = []clients.Retry{}
	}
	return s
}

// TestTappedSessions: real sessions through sonde tap in front of the
// fixture, a host played line by line, folded from the recording: each
// row's measure, on a host that shows it and one that does not.
func TestTappedSessions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture []string
		play    func(h *host)
		want    clients.Session
	}{
		{"legacy, one request at a time, trace context and a progress token on one call", nil, func(h *host) {
			h.send(initialize(1, "host-a", "1.0", "2025-06-18", `{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":false}}`))
			h.await(1)
			h.send(initialized, request(2, "tools/list", `{}`))
			h.await(2)
			h.send(echo(3, "hi", 0, `{"progressToken":"p1","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`))
			h.await(3)
			h.send(echo(4, "hi", 0, `{"progressToken":null,"traceparent":""}`)) // the same call again, answered: no retry
			h.await(4)
		}, clients.Session{Host: "host-a", Version: "1.0", Revisions: []string{"2025-06-18"}, Opens: "initialize",
			Capabilities: []string{"elicitation.form", "roots.listChanged", "sampling"},
			Requests:     4, Traced: 1, Progress: 1, MaxInFlight: 1}},

		{"legacy, calls in parallel, one retried after its cancel and one while unanswered", nil, func(h *host) {
			h.send(initialize(1, "host-b", "2.3", "2025-11-25", `{}`))
			h.await(1)
			h.send(initialized,
				echo(2, "slow", 60000, ""), cancelled(2), echo(3, "slow", 60000, ""), // retried after its cancel
				echo(4, "other", 60000, ""), echo(5, "other", 60000, ""), // retried while unanswered
				echo(6, "slow", 60001, "")) // other arguments: not a retry
		}, clients.Session{Host: "host-b", Version: "2.3", Revisions: []string{"2025-11-25"}, Opens: "initialize",
			Requests: 6, MaxInFlight: 4, Retries: 2, Cancelled: 1, Retried: []clients.Retry{
				{Method: "tools/call", Tool: "echo", ID: "3", Of: "2", After: clients.AfterCancel},
				{Method: "tools/call", Tool: "echo", ID: "5", Of: "4", After: clients.Unanswered},
			}}},

		{"modern: opens with server/discover, identity and capabilities in _meta", []string{"--era", "modern"}, func(h *host) {
			meta := modernMeta("host-m", "0.61.0", `{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/ui":{}}}`)
			h.send(request(1, "server/discover", `{"_meta":`+meta+`}`))
			h.await(1)
			h.send(request(2, "tools/list", `{"_meta":`+meta+`}`))
			h.await(2)
			h.send(request(3, "server/discover", `{"_meta":`+meta+`}`)) // ttlMs 0: not cached, not a re-fetch
			h.await(3)
		}, clients.Session{Host: "host-m", Version: "0.61.0", Revisions: []string{"2026-07-28"}, Opens: "server/discover",
			Capabilities: []string{"elicitation.form", "extensions.io.modelcontextprotocol/ui"},
			Requests:     3, MaxInFlight: 1}},

		{"a probe with server/discover, then initialize against a legacy server", nil, func(h *host) {
			h.send(request(1, "server/discover", `{"_meta":`+modernMeta("host-p", "9", `{}`)+`}`))
			h.await(1)
			h.send(initialize(2, "host-p", "9", "2025-11-25", `{"roots":{}}`))
			h.await(2)
		}, clients.Session{Host: "host-p", Version: "9", Revisions: []string{"2026-07-28", "2025-11-25"}, Opens: "server/discover",
			Fallback: true, Capabilities: []string{"roots"}, Requests: 2, MaxInFlight: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tapHost(t, tc.fixture...)
			tc.play(h)
			got := h.end()
			if len(got) != 1 || !reflect.DeepEqual(got[0], session(tc.want)) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(session(tc.want), "", " ")
				t.Fatalf("sessions:\n%s\nwant one:\n%s", g, w)
			}
		})
	}
}

// TestTappedRefetchInTTL: through a real tap of the fixture serving cache
// hints, a host that lists the tools again inside the first list's ttlMs
// is counted once, by the request that did it, with what was left of the
// TTL (a time of the run: bounded, not compared exactly).
func TestTappedRefetchInTTL(t *testing.T) {
	h := tapHost(t, "--era", "modern", "--cache-ttl-ms", "600000")
	meta := modernMeta("host-c", "1", `{}`)
	h.send(request(1, "server/discover", `{"_meta":`+meta+`}`))
	h.await(1)
	h.send(request(2, "tools/list", `{"_meta":`+meta+`}`))
	h.await(2)
	h.send(request(3, "tools/list", `{"_meta":`+meta+`}`))
	h.await(3)
	got := h.end()
	if len(got) != 1 {
		t.Fatalf("%d sessions", len(got))
	}
	s := got[0]
	if s.Cached < 1 || s.Refetches != 1 || len(s.Refetched) != 1 {
		t.Fatalf("cached %d, refetches %d %+v", s.Cached, s.Refetches, s.Refetched)
	}
	if r := s.Refetched[0]; r.Method != "tools/list" || r.ID != "3" || r.Left <= 0 || r.Left > 600*time.Second {
		t.Fatalf("refetch %+v", r)
	}
}
