package pending

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/timeouts"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// answer is the response frame to sonde's request id at ms.
func answer(ms int, id int64) client.Event {
	msg := jsonrpc.Message{Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(id), Result: json.RawMessage(`{}`)}
	return client.Event{Time: at(ms), Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.In, Time: at(ms), Msg: msg}, Verdict: client.VerdictResolved}}
}

// call is a tools/call queued and sent at ms, with progress at the given
// times.
func call(ms int, id int64, tool string, progressAt ...int) []client.Event {
	evs := []client.Event{queued(ms, id, "tools/call", tool, 300_000), out(ms, id, "tools/call", client.StateSent)}
	for i, p := range progressAt {
		evs = append(evs, progress(p, id, float64(i+1), nil, "step"))
	}
	return evs
}

// answered is request id's answer and outcome at ms, latency after from.
func answered(from, ms int, id int64) []client.Event {
	return []client.Event{answer(ms, id), settle(out(ms, id, "tools/call", client.StateResolved), time.Duration(ms-from)*time.Millisecond, nil)}
}

func presets(t *testing.T, names ...string) []timeouts.Policy {
	t.Helper()
	var ps []timeouts.Policy
	for _, n := range names {
		p, err := timeouts.ParsePolicy(n)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// policyScene is seen at 70s under ts-sdk (60s), inspector (60s, reset on
// progress) and python-sdk (none): id 2 sends progress (inspector keeps
// waiting), id 3 none (both gave up), id 4 answered at once, id 5
// answered after 67s (too late for both), id 6 just sent.
func policyScene(t *testing.T, m *Model) {
	m.SetPolicies(presets(t, "ts-sdk", "inspector", "python-sdk"))
	var evs []client.Event
	evs = append(evs, call(0, 2, "slow", 30_000, 55_000)...)
	evs = append(evs, call(1000, 3, "hang")...)
	evs = append(evs, call(2000, 5, "export")...)
	evs = append(evs, call(68_000, 4, "echo")...)
	evs = append(evs, answered(68_000, 68_500, 4)...)
	evs = append(evs, answered(2000, 69_000, 5)...)
	evs = append(evs, call(69_500, 6, "echo")...)
	m.Apply(evs)
	m.SetNow(at(70_000))
}

func TestPolicies(t *testing.T) {
	m := newModel(Options{})
	m.SetSize(118, 20)
	policyScene(t, m)
	got := map[string]string{}
	for _, e := range m.Entries() {
		var s []string
		for _, v := range e.Policies {
			s = append(s, string(v.Result))
		}
		got[e.ID.String()] = strings.Join(s, " ")
	}
	want := map[string]string{
		"2": "fail pending pending", // progress at 55s moved inspector's deadline to 1m55s
		"3": "fail fail pending",
		"4": "pass pass pass",
		"5": "fail fail pass",
		"6": "pending pending pending",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("id %s: %q, want %q", id, got[id], w)
		}
	}
	v := ansi.Strip(m.View())
	for _, s := range []string{"POLICY", "✗ts-sdk ✗inspector", "✓ all", "✗ts-sdk ✗inspector ✓python-sdk"} {
		if !strings.Contains(v, s) {
			t.Errorf("view lacks %q:\n%s", s, v)
		}
	}
	// Its next progress keeps it under inspector; none and ts-sdk still
	// fails (no reset), and the clock past inspector's deadline fails it.
	m.Apply([]client.Event{progress(100_000, 2, 3, nil, "step")})
	m.SetNow(at(150_000))
	if e := m.Entries()[0]; e.ID.String() != "2" || e.Policies[1].Result != timeouts.ResultPending || e.Policies[1].At != 160*time.Second {
		t.Errorf("after progress at 1m40s: %+v", e)
	}
	m.SetNow(at(160_000))
	if e := m.Entries()[0]; e.Policies[1].Result != timeouts.ResultFail {
		t.Errorf("at 2m40s inspector has given up: %+v", e.Policies[1])
	}
	// In history, the verdicts stay.
	m.SetNow(at(400_000))
	m.Update(press("h"))
	if v := ansi.Strip(m.View()); !strings.Contains(v, "✗ts-sdk ✗inspector ✓python-sdk") {
		t.Errorf("history lacks id 5's verdicts:\n%s", v)
	}
}

// TestNoPoliciesNoColumn: without SetPolicies the pane is as before.
func TestNoPoliciesNoColumn(t *testing.T) {
	m := newModel(Options{})
	m.Apply(call(0, 2, "slow"))
	m.SetNow(at(70_000))
	if v := ansi.Strip(m.View()); strings.Contains(v, "POLICY") || m.Entries()[0].Policies != nil {
		t.Errorf("a policy column without policies:\n%s", v)
	}
}

// TestPoliciesPerServer: with several servers (each numbering its own
// requests from 1), each row follows its own server's request.
func TestPoliciesPerServer(t *testing.T) {
	m := newModel(Options{})
	m.SetPolicies(presets(t, "ts-sdk"))
	m.SetTag("a")
	m.Apply(call(0, 1, "slow"))
	m.SetTag("b")
	m.Apply(append(call(50_000, 1, "echo"), answered(50_000, 50_100, 1)...))
	m.SetNow(at(61_000))
	for _, e := range m.Entries() {
		want := timeouts.ResultFail
		if e.Tool == "echo" {
			want = timeouts.ResultPass
		}
		if len(e.Policies) != 1 || e.Policies[0].Result != want {
			t.Errorf("%s: %+v, want %s", e.Tool, e.Policies, want)
		}
	}
}

func TestPoliciesGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		for _, hist := range []bool{false, true} {
			m := New(theme.New(theme.NoColor()), Options{})
			m.SetSize(size[0], size[1])
			m.SetNow(t0)
			policyScene(t, m)
			name := fmt.Sprintf("policies_live_%dx%d", size[0], size[1])
			if hist {
				m.SetNow(at(80_000))
				m.Update(press("h"))
				name = fmt.Sprintf("policies_history_%dx%d", size[0], size[1])
			}
			golden.Assert(t, name, ansi.Strip(m.View()))
		}
	}
}

// TestPoliciesLateAnswer: sonde gives up on a call at 2s; a 5s policy
// cannot tell (?) until the answer comes late at 3s: then it passes.
func TestPoliciesLateAnswer(t *testing.T) {
	m := newModel(Options{})
	m.SetPolicies(presets(t, "timeout=5s"))
	timeout := &client.Error{Code: client.CodeTimeout, Message: "no answer after 2s"}
	m.Apply(append(call(0, 2, "slow"), settle(out(2000, 2, "tools/call", client.StateTimeout), 2*time.Second, timeout)))
	m.SetNow(at(2100))
	if v := ansi.Strip(m.View()); !strings.Contains(v, "?timeout=5s") {
		t.Errorf("before the late answer:\n%s", v)
	}
	late := answer(3000, 2)
	late.Frame.Verdict = client.VerdictLate
	m.Apply([]client.Event{late})
	if v := ansi.Strip(m.View()); !strings.Contains(v, "✓timeout=5s") {
		t.Errorf("after the late answer:\n%s", v)
	}
}

// TestFitVerdicts: a narrow POLICY column keeps whole names, then counts.
func TestFitVerdicts(t *testing.T) {
	parts := []string{"✗timeout=2s", "✗timeout=2s,reset-on-progress", "✓python-sdk"}
	for _, tc := range []struct {
		w    int
		want string
	}{
		{80, "✗timeout=2s ✗timeout=2s,reset-on-progress ✓python-sdk"},
		{20, "✗timeout=2s +2"},
		{11, "✗2 ✓1"},
		{5, "✗2 ✓1"},
		{3, "✗2"},
	} {
		if got := strings.TrimRight(fitVerdicts(parts, tc.w), " "); got != tc.want {
			t.Errorf("width %d: %q, want %q", tc.w, got, tc.want)
		}
	}
}
