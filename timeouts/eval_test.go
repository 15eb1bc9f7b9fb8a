package timeouts

import (
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// req is a request sent at t0, with progress at the given offsets (ms),
// answered at answer ms (-1: none, ended at end ms with outcome).
func req(answer, end int, outcome client.State, progress ...int) *Request {
	r := &Request{ID: jsonrpc.Int(1), Method: "tools/call", Sent: t0, Outcome: outcome, Ended: t0.Add(ms(end))}
	for _, p := range progress {
		r.Progress = append(r.Progress, t0.Add(ms(p)))
	}
	if answer >= 0 {
		r.Answered = t0.Add(ms(answer))
	}
	return r
}

func mustPolicy(t *testing.T, s string) Policy {
	t.Helper()
	p, err := ParsePolicy(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvaluate(t *testing.T) {
	resolved := client.StateResolved
	for _, tc := range []struct {
		name, policy string
		r            *Request
		result       Result
		reason       Reason
		at, margin   int // ms; margin -1 when none
		late         bool
		gaps         int
	}{
		{"in time", "timeout=1s", req(400, 400, resolved), ResultPass, "", 0, 600, false, 0},
		{"too slow", "timeout=1s", req(1500, 1500, resolved), ResultFail, ReasonDeadline, 1000, -500, true, 0},
		{"at the deadline is too late", "timeout=1s", req(1000, 1000, resolved), ResultFail, ReasonDeadline, 1000, 0, true, 0},
		{"progress without reset moves nothing", "timeout=1s", req(1500, 1500, resolved, 500, 900), ResultFail, ReasonDeadline, 1000, -500, true, 0},
		{"reset rescues it", "timeout=1s,reset-on-progress", req(1500, 1500, resolved, 500, 900), ResultPass, "", 0, 400, false, 0},
		{"progress after the deadline is too late", "timeout=1s,reset-on-progress", req(2500, 2500, resolved, 1200), ResultFail, ReasonDeadline, 1000, -1500, true, 2},
		{"a long gap", "timeout=1s,reset-on-progress", req(3000, 3000, resolved, 500, 900, 2100), ResultFail, ReasonDeadline, 1900, -1100, true, 1},
		{"hard cap", "timeout=1s,reset-on-progress,max-total=1200ms", req(1500, 1500, resolved, 500, 900), ResultFail, ReasonMaxTotal, 1200, -300, true, 0},
		{"cap without reset", "timeout=1s,max-total=700ms", req(800, 800, resolved), ResultFail, ReasonMaxTotal, 700, -100, true, 0},
		// The TypeScript SDK checks the cap when progress arrives: no
		// progress past it, no failure by it.
		{"soft cap, no progress past it", "timeout=1s,reset-on-progress,max-total=600ms,total-on-progress", req(1500, 1500, resolved, 500, 900), ResultFail, ReasonMaxTotal, 900, -600, true, 0},
		{"soft cap, answer before the next progress", "timeout=1s,reset-on-progress,max-total=1200ms,total-on-progress", req(1500, 1500, resolved, 500, 900), ResultPass, "", 0, 400, false, 0},
		{"no deadline", "timeout=none", req(90000, 90000, resolved), ResultPass, "", 0, -1, false, 0},
		{"no answer, deadline first", "timeout=1s", req(-1, 5000, client.StateTimeout), ResultFail, ReasonDeadline, 1000, -1, false, 0},
		{"no answer, ended first", "timeout=10s", req(-1, 5000, client.StateExited), ResultUnknown, "", 0, -1, false, 0},
		{"no answer, no deadline", "timeout=none", req(-1, 5000, client.StateTimeout), ResultUnknown, "", 0, -1, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Evaluate(mustPolicy(t, tc.policy), tc.r)
			if v.Result != tc.result || v.Reason != tc.reason || v.At != ms(tc.at) || v.Late != tc.late || v.Gaps != tc.gaps {
				t.Errorf("%s: %+v, want %s %s at %dms late %v gaps %d", tc.policy, v, tc.result, tc.reason, tc.at, tc.late, tc.gaps)
			}
			switch {
			case tc.margin == -1 && v.Margin != nil:
				t.Errorf("margin %v, want none", *v.Margin)
			case tc.margin != -1 && (v.Margin == nil || *v.Margin != ms(tc.margin)):
				t.Errorf("margin %v, want %dms", v.Margin, tc.margin)
			}
		})
	}
}

// TestEvaluateSession: the sonde preset is each request's own budget.
func TestEvaluateSession(t *testing.T) {
	p := mustPolicy(t, "sonde")
	r := req(1500, 1500, client.StateResolved, 500, 900)
	r.Timeout = time.Second
	if v := Evaluate(p, r); v.Result != ResultFail || v.At != time.Second {
		t.Errorf("no reset: %+v", v)
	}
	r.MaxEnd = t0.Add(ms(1800)) // --timeout-reset-on-progress, its cap
	if v := Evaluate(p, r); v.Result != ResultPass || *v.Margin != ms(300) {
		t.Errorf("reset, capped at 1.8s: %+v", v)
	}
	r.MaxEnd = t0.Add(ms(1200))
	if v := Evaluate(p, r); v.Result != ResultFail || v.Reason != ReasonMaxTotal || v.At != ms(1200) {
		t.Errorf("reset, capped at 1.2s: %+v", v)
	}
}

func TestGapsLongestAndWhere(t *testing.T) {
	v := Evaluate(mustPolicy(t, "timeout=none"), req(5000, 5000, client.StateResolved, 100))
	if v.Gaps != 0 {
		t.Errorf("no timeout, no gap over it: %+v", v)
	}
	v = Evaluate(mustPolicy(t, "timeout=1s,reset-on-progress"), req(5200, 5200, client.StateResolved, 100, 1500, 4000))
	if v.Gaps != 3 || v.LongestGap != ms(2500) || v.GapAt != ms(1500) || v.Result != ResultFail || v.At != ms(1100) {
		t.Errorf("gaps: %+v", v)
	}
}
