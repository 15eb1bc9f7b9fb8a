package timeouts

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// events writes a session as the client tells it, at offsets from t0.
type events []client.Event

func (e *events) at(d int) time.Time { return t0.Add(ms(d)) }

func (e *events) start(d int) {
	*e = append(*e, client.Event{Time: e.at(d), Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart, Pid: 7}})
}

func (e *events) req(d int, id int64, method, tool string, st client.State, timeout time.Duration) {
	*e = append(*e, client.Event{Time: e.at(d), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(id), Method: method, Tool: tool, State: st, Timeout: timeout}})
}

func (e *events) answer(d int, id int64, v client.Verdict) {
	raw := `{"jsonrpc":"2.0","id":` + jsonrpc.Int(id).String() + `,"result":{}}`
	f := client.Frame{Dir: client.In, Time: e.at(d), Raw: []byte(raw), Msg: jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(id), Result: json.RawMessage(`{}`)}}
	*e = append(*e, client.Event{Time: e.at(d), Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f, Verdict: v}})
}

// call is a tools/call sent at d, with progress at the given offsets
// (from d), answered after answer ms and ending so.
func (e *events) call(d int, id int64, tool string, answer int, progress ...int) {
	e.req(d, id, "tools/call", tool, client.StateQueued, 30*time.Second)
	e.req(d, id, "tools/call", tool, client.StateSent, 0)
	for _, p := range progress {
		e.req(d+p, id, "tools/call", tool, client.StateProgress, 0)
	}
	e.answer(d+answer, id, client.VerdictResolved)
	e.req(d+answer, id, "tools/call", tool, client.StateResolved, 0)
}

// sample is a session of four calls and a restart: one quick, one slow
// with progress, one that sonde timed out and whose answer came late, one
// that never got an answer (the server exited), then, in a new process,
// a quick one again under the same id.
func sample() events {
	var e events
	e.start(0)
	e.call(10, 1, "echo", 5)
	e.call(20, 2, "progress", 70_000, 20_000, 55_000, 60_000)
	e.req(30, 3, "tools/call", "slow", client.StateQueued, 30*time.Second)
	e.req(30, 3, "tools/call", "slow", client.StateSent, 0)
	e.req(30_030, 3, "tools/call", "slow", client.StateTimeout, 0)
	e.answer(45_030, 3, client.VerdictLate)
	e.req(40, 4, "tools/call", "hang", client.StateQueued, 30*time.Second)
	e.req(40, 4, "tools/call", "hang", client.StateSent, 0)
	e.req(100_000, 4, "tools/call", "hang", client.StateExited, 0)
	e.start(100_100)
	e.call(100_200, 1, "echo", 5)
	return e
}

func collect(e events, policies ...string) Report {
	var ps []Policy
	for _, s := range policies {
		p, err := ParsePolicy(s)
		if err != nil {
			panic(err)
		}
		ps = append(ps, p)
	}
	c := NewCollector(t0, ps)
	slices.SortStableFunc(e, func(a, b client.Event) int { return a.Time.Compare(b.Time) }) // the stream's order
	for _, ev := range e {
		c.Add(ev)
	}
	return c.Finish()
}

func TestCollectorPairsByID(t *testing.T) {
	rep := collect(sample(), "ts-sdk", "ts-sdk-reset", "python-sdk", "sonde")
	if rep.Requests != 5 || len(rep.Rows) != 5 || rep.Open != 0 {
		t.Fatalf("requests %d rows %d open %d", rep.Requests, len(rep.Rows), rep.Open)
	}
	want := map[string][4]Result{ // by tool and session
		"echo 1":     {ResultPass, ResultPass, ResultPass, ResultPass},
		"progress 1": {ResultFail, ResultPass, ResultPass, ResultFail},
		"slow 1":     {ResultPass, ResultPass, ResultPass, ResultFail},
		"hang 1":     {ResultFail, ResultFail, ResultUnknown, ResultFail},
		"echo 2":     {ResultPass, ResultPass, ResultPass, ResultPass},
	}
	for _, row := range rep.Rows {
		key := row.Tool + " " + map[int]string{1: "1", 2: "2"}[row.Session]
		w, ok := want[key]
		if !ok {
			t.Errorf("unexpected row %s", key)
			continue
		}
		for i, v := range row.Verdicts {
			if v.Result != w[i] {
				t.Errorf("%s under %s: %s, want %s", key, rep.Summary[i].Policy.Name, v.Result, w[i])
			}
		}
		delete(want, key)
	}
	// The late answer of id 3 came 45s after it was sent: sonde (30s)
	// failed it, and threw that answer away as late.
	i := slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Tool == "slow" })
	slow := rep.Rows[max(i, 0)]
	if slow.Tool != "slow" || slow.Latency != 45*time.Second || !slow.Verdicts[3].Late || *slow.Verdicts[3].Margin != -15*time.Second {
		t.Errorf("the late answer: %+v", slow)
	}
	if s := rep.Summary[0]; s.Failed != 2 || s.Late != 1 || s.WorstMargin == nil || *s.WorstMargin != -10*time.Second || s.WorstID != jsonrpc.Int(2) {
		t.Errorf("ts-sdk summary: %+v", s)
	}
	if !rep.Fails("ts-sdk") || rep.Fails("python-sdk") {
		t.Error("Fails")
	}
}

func TestCollectorText(t *testing.T) {
	rep := collect(sample(), "ts-sdk", "ts-sdk-reset", "inspector-v1", "python-sdk", "timeout=30s,reset-on-progress,max-total=50s")
	var b strings.Builder
	if err := rep.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "sample", b.String())
	b.Reset()
	rep.Drop("inspector-v1")
	if err := rep.WriteText(&b, true); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "sample-all", b.String())
}

// TestCollectorOpenAndRejected: a request refused before it was sent is
// no client's; one still in flight at the end is counted, not evaluated.
func TestCollectorOpenAndRejected(t *testing.T) {
	var e events
	e.start(0)
	e.req(5, 1, "tools/call", "x", client.StateRejected, 0)
	e.req(10, 2, "tools/call", "y", client.StateQueued, time.Second)
	e.req(10, 2, "tools/call", "y", client.StateSent, 0)
	rep := collect(e, "ts-sdk")
	if rep.Requests != 0 || rep.Open != 1 || len(rep.Rows) != 0 || rep.Summary[0].Requests != 0 {
		t.Errorf("%+v", rep)
	}
}

// TestReportJSON: the shape of sonde timeouts --json, held by a golden.
func TestReportJSON(t *testing.T) {
	rep := collect(sample(), "ts-sdk", "inspector-v1")
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "sample-json", string(b)+"\n")
}

// TestCollectorWaitingBounded: requests that timed out wait for a late
// answer, but no more of them than the client remembers; the oldest are
// evaluated without one, and every request is counted once.
func TestCollectorWaitingBounded(t *testing.T) {
	var e events
	e.start(0)
	n := client.DefaultRetiredIDs + 100
	for i := 1; i <= n; i++ {
		e.req(i, int64(i), "tools/call", "slow", client.StateQueued, time.Millisecond)
		e.req(i, int64(i), "tools/call", "slow", client.StateSent, 0)
		e.req(i+2, int64(i), "tools/call", "slow", client.StateTimeout, 0)
	}
	e.answer(n+10, int64(n), client.VerdictLate) // the newest still waits: its late answer counts
	c := NewCollector(t0, []Policy{mustPolicy(t, "timeout=none")})
	for _, ev := range e {
		c.Add(ev)
		if len(c.waiting) > client.DefaultRetiredIDs {
			t.Fatalf("%d waiting", len(c.waiting))
		}
	}
	rep := c.Finish()
	if rep.Requests != n || rep.Summary[0].Passed != 1 || rep.Summary[0].Unknown != n-1 {
		t.Errorf("requests %d, summary %+v", rep.Requests, rep.Summary[0])
	}
}
