package timeouts

import (
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestStanding: a request in flight under a policy, moment by moment:
// pending with the deadline in force, failed once it has come, moved by
// progress with reset-on-progress, and Evaluate's verdict once answered.
func TestStanding(t *testing.T) {
	r := req(-1, 0, "", 500, 900)
	r.Ended = time.Time{} // in flight
	for _, tc := range []struct {
		name, policy string
		now          int // ms
		result       Result
		reason       Reason
		at           int // ms
	}{
		{"before the deadline", "timeout=1s", 800, ResultPending, "", 1000},
		{"at the deadline", "timeout=1s", 1000, ResultFail, ReasonDeadline, 1000},
		{"past it", "timeout=1s", 1500, ResultFail, ReasonDeadline, 1000},
		{"progress not yet seen moves nothing", "timeout=1s,reset-on-progress", 400, ResultPending, "", 1000},
		{"progress restarts it", "timeout=1s,reset-on-progress", 1500, ResultPending, "", 1900},
		{"until it comes", "timeout=1s,reset-on-progress", 1900, ResultFail, ReasonDeadline, 1900},
		{"the cap", "timeout=1s,reset-on-progress,max-total=1200ms", 1300, ResultFail, ReasonMaxTotal, 1200},
		{"no deadline", "timeout=none", 90000, ResultPending, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Standing(mustPolicy(t, tc.policy), r, t0.Add(ms(tc.now)))
			if v.Result != tc.result || v.Reason != tc.reason || v.At != ms(tc.at) {
				t.Errorf("%s at %dms: %+v, want %s %s at %dms", tc.policy, tc.now, v, tc.result, tc.reason, tc.at)
			}
		})
	}
	r.Answered = t0.Add(ms(1500))
	if v := Standing(mustPolicy(t, "timeout=1s,reset-on-progress"), r, t0.Add(ms(9000))); v.Result != ResultPass || *v.Margin != ms(400) {
		t.Errorf("answered: %+v, want Evaluate's pass with 400ms to spare", v)
	}
}

// TestLive: the record Live returns follows the request's events (its
// progress, its timeout, then its late answer), a restart starts a new id
// space, and an answered request is forgotten while its record stays.
func TestLive(t *testing.T) {
	var e events
	e.start(0)
	e.req(10, 1, "tools/call", "slow", client.StateQueued, 30*time.Second)
	e.req(10, 1, "tools/call", "slow", client.StateSent, 0)
	l := NewLive()
	for _, ev := range e {
		l.Add(ev)
	}
	r := l.Request(jsonrpc.Int(1))
	if r == nil || r.Tool != "slow" || r.Timeout != 30*time.Second {
		t.Fatalf("in flight: %+v", r)
	}
	ts := mustPolicy(t, "ts-sdk")
	if v := Standing(ts, r, t0.Add(ms(59_000))); v.Result != ResultPending {
		t.Errorf("at 59s: %+v", v)
	}
	e = nil
	e.req(20_010, 1, "tools/call", "slow", client.StateProgress, 0)
	e.req(30_010, 1, "tools/call", "slow", client.StateTimeout, 0)
	for _, ev := range e {
		l.Add(ev)
	}
	if len(r.Progress) != 1 || r.Outcome != client.StateTimeout || l.Request(jsonrpc.Int(1)) != r {
		t.Errorf("after its timeout it waits for a late answer: %+v", r)
	}
	if v := Standing(ts, r, t0.Add(ms(90_000))); v.Result != ResultUnknown {
		t.Errorf("timed out by sonde at 30s, no answer: ts-sdk cannot tell: %+v", v)
	}
	e = nil
	e.answer(75_010, 1, client.VerdictLate)
	e.start(80_000)
	e.req(80_010, 1, "ping", "", client.StateQueued, time.Second)
	for _, ev := range e {
		l.Add(ev)
	}
	if v := Standing(ts, r, t0.Add(ms(90_000))); v.Result != ResultFail || !v.Late || v.At != time.Minute {
		t.Errorf("its late answer at 75s: ts-sdk fails it at 1m: %+v", v)
	}
	if n := l.Request(jsonrpc.Int(1)); n == nil || n == r || n.Method != "ping" {
		t.Errorf("after the restart, id 1 is the new process's: %+v", n)
	}
	if got := len(l.c.rep.Rows); got != 0 {
		t.Errorf("Live keeps no report rows, has %d", got)
	}
}
