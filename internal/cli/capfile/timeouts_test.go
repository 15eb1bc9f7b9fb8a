package capfile_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// timing is what a capture recorded of one request of sonde's (or the
// host's): when it was sent, its progress, when its answer came.
type timing struct {
	sent, answered time.Duration
	progress       []time.Duration
}

// recordedTiming reads the timing of request id (its JSON text) straight
// from the capture's records, apart from the code under test.
func recordedTiming(t *testing.T, path, id string) timing {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tm timing
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Type, Dir, State, Verdict string
			T                         int64
			ID                        json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || string(rec.ID) != id {
			continue
		}
		at := time.Duration(rec.T)
		switch {
		case rec.Type == "request" && rec.State == "sent":
			tm.sent = at
		case rec.Type == "request" && rec.State == "progress":
			tm.progress = append(tm.progress, at)
		case rec.Type == "frame" && rec.Dir == "in" && (rec.Verdict == "resolved" || rec.Verdict == "late"):
			tm.answered = at
		}
	}
	if tm.sent == 0 || tm.answered == 0 {
		data, _ := os.ReadFile(path)
		t.Fatalf("%s: request %s has no sent or answer record:\n%s", path, id, data)
	}
	return tm
}

// longestGap is the longest interval between the send, each progress
// and the answer.
func (tm timing) longestGap() time.Duration {
	prev, g := tm.sent, time.Duration(0)
	for _, p := range append(tm.progress, tm.answered) {
		g, prev = max(g, p-prev), p
	}
	return g
}

// timeoutsReport is sonde timeouts --json.
type timeoutsReport struct {
	Requests int
	Summary  []struct {
		Policy struct {
			Name string
		}
		Requests, Passed, Failed, Unknown, Late int
		LongGaps                                int            `json:"long_gaps"`
		WorstMargin                             *time.Duration `json:"worst_margin"`
	}
	Rows []struct {
		ID       json.RawMessage
		Method   string
		Tool     string
		Latency  time.Duration
		Progress int
		Verdicts []struct {
			Result, Reason string
			At             time.Duration
			Margin         *time.Duration
			Late           bool
			Gaps           int `json:"long_gaps"`
		}
	}
}

func runTimeoutsJSON(t *testing.T, args ...string) timeoutsReport {
	t.Helper()
	r := clitest.RunSonde(t, "", append([]string{"timeouts", "--json"}, args...)...)
	var rep timeoutsReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 0 {
		t.Fatalf("timeouts --json %q: %d %v\n%s%s", args, r.Code, err, r.Stdout, r.Stderr)
	}
	return rep
}

// TestTimeoutsProgressCapture: a real call with progress, recorded against
// the fixture, under three policies chosen from its recorded times: one it
// passes, one it fails, and the same one rescued by reset-on-progress. The
// verdicts and margins are computed here from the records.
func TestTimeoutsProgressCapture(t *testing.T) {
	path := recordOK(t, []string{"call", "progress", "--args", `{"steps":5,"interval_ms":150}`})
	tm := recordedTiming(t, path, "2")
	lat, gap := tm.answered-tm.sent, tm.longestGap()
	if gap >= lat || len(tm.progress) != 5 {
		t.Fatalf("recorded: latency %v, longest gap %v, %d progress", lat, gap, len(tm.progress))
	}
	between := (gap + lat) / 2 // over every gap, under the latency
	pass, fail, rescued := "timeout="+(2*lat).String(), "timeout="+between.String(), "timeout="+between.String()+",reset-on-progress"
	rep := runTimeoutsJSON(t, "--policy", pass, "--policy", fail, "--policy", rescued, path)
	var row = -1
	for i, r := range rep.Rows {
		if r.Tool == "progress" {
			row = i
		}
	}
	if row < 0 || rep.Rows[row].Progress != 5 || rep.Rows[row].Latency != lat || len(rep.Rows[row].Verdicts) != 3 {
		t.Fatalf("rows: %+v", rep.Rows)
	}
	v := rep.Rows[row].Verdicts
	lastProgress := tm.progress[len(tm.progress)-1]
	want := []struct {
		result string
		margin time.Duration
	}{
		{"pass", 2*lat - lat},
		{"fail", between - lat},
		{"pass", lastProgress - tm.sent + between - lat},
	}
	for i, w := range want {
		if v[i].Result != w.result || v[i].Margin == nil || *v[i].Margin != w.margin {
			t.Errorf("policy %d: %+v (margin %v), want %s margin %v", i, v[i], v[i].Margin, w.result, w.margin)
		}
	}
	if v[1].At != between || v[1].Reason != "deadline" || !v[1].Late || v[0].Late || v[2].Late {
		t.Errorf("the fail: %+v", v[1])
	}
	if s := rep.Summary[1]; s.Failed != 1 || s.Late != 1 || *s.WorstMargin != between-lat || s.Policy.Name != fail {
		t.Errorf("summary of %s: %+v", fail, s)
	}

	r := clitest.RunSonde(t, "", "timeouts", "--policy", pass, "--fail-on-policy", fail, path)
	clitest.CheckRun(t, r, 1, "sonde: policy "+fail+" failed a request (--fail-on-policy)\n")
	// The policy column is as wide as the longest name: the spaces after
	// it depend on the recorded durations' lengths.
	if !regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(fail)+` +fail at `).MatchString(r.Stdout) || !strings.Contains(r.Stdout, "its answer would have been thrown away as late") ||
		!strings.Contains(r.Stdout, "\npolicy ") || !strings.Contains(r.Stdout, "worst margin\n") {
		t.Errorf("text:\n%s", r.Stdout)
	}
	r = clitest.RunSonde(t, "", "timeouts", "--fail-on-policy", rescued, "--fail-on-policy", pass, path)
	clitest.CheckRun(t, r, 0, "")
}

// TestTimeoutsLateAnswer: sonde's own timeout (a script line's 300 ms)
// gave up on a call whose answer came later (the fixture ignores the
// cancel; the next line keeps the session open): the sonde preset fails
// it and names the late answer, the TypeScript SDK's 60 s passes it.
func TestTimeoutsLateAnswer(t *testing.T) {
	script := `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"a","delay_ms":900,"ignore_cancel":true}},"timeout_ms":300}
{"method":"tools/call","params":{"name":"echo","arguments":{"value":"b","delay_ms":1500}}}
`
	path, r := record(t, script, []string{"script", "-"})
	if r.Code != 1 {
		t.Fatalf("script: %d %s", r.Code, r.Stderr)
	}
	tm := recordedTiming(t, path, "2")
	rep := runTimeoutsJSON(t, "--policy", "ts-sdk", "--policy", "sonde", path)
	for _, row := range rep.Rows {
		if string(row.ID) != "2" {
			continue
		}
		ts, sonde := row.Verdicts[0], row.Verdicts[1]
		if row.Latency != tm.answered-tm.sent || ts.Result != "pass" || sonde.Result != "fail" || !sonde.Late || sonde.At != 300*time.Millisecond || *sonde.Margin != 300*time.Millisecond-row.Latency {
			t.Errorf("late answer: %+v", row)
		}
		return
	}
	t.Errorf("no row for id 2: %+v", rep)
}

// TestTimeoutsTappedSession: a host's session through sonde tap (string
// ids, its own progress token): evaluated the same way; the sonde preset
// is left out, the tap knows no deadline of the host's.
func TestTimeoutsTappedSession(t *testing.T) {
	fx := clitest.NewFixture(t)
	rec := filepath.Join(t.TempDir(), "tapped.jsonl")
	host := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"h1","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"h2","method":"tools/call","params":{"name":"progress","arguments":{"steps":3,"interval_ms":100},"_meta":{"progressToken":"p"}}}`,
	}, "\n") + "\n"
	// The tap as a host runs it: its own process, the host's lines on its
	// stdin, then EOF.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"tap", "--record", rec, "--"}, fx.Argv()...)...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	cmd.Stdin = strings.NewReader(host)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"id":"h2","result"`) {
		t.Fatalf("tap: %v\n%s%s", err, out, stderr.String())
	}
	tm := recordedTiming(t, rec, `"h2"`)
	short := "timeout=" + ((tm.answered - tm.sent) / 2).String()
	rep := runTimeoutsJSON(t, "--policy", "ts-sdk", "--policy", short, rec)
	for _, row := range rep.Rows {
		if string(row.ID) == `"h2"` && (row.Progress != 3 || row.Verdicts[0].Result != "pass" || row.Verdicts[1].Result != "fail" || !row.Verdicts[1].Late) {
			t.Errorf("the host's call: %+v", row)
		}
	}
	if len(rep.Summary) != 2 || len(rep.Rows) != 2 || rep.Summary[0].Failed != 0 || rep.Summary[1].Failed == 0 {
		t.Errorf("summary: %+v", rep.Summary)
	}
	def := runTimeoutsJSON(t, rec)
	for _, s := range def.Summary {
		if s.Policy.Name == "sonde" {
			t.Errorf("the sonde preset on a tapped session: %+v", s)
		}
	}
	if len(def.Summary) != 6 || def.Requests != 2 {
		t.Errorf("every other preset, both requests: %+v", def)
	}
}

func TestTimeoutsUsage(t *testing.T) {
	path := recordCall(t)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"timeouts", "--policy", "timeout=fast", path}, `sonde: "timeout=fast": "fast" is not a duration (60s, 1m30s, none) (see sonde timeouts --help)` + "\n"},
		{[]string{"timeouts", "--fail-on-policy", "nope", path}, `sonde: "nope": unknown part "nope" (want timeout=D, reset-on-progress, max-total=D, total-on-progress, or a preset: ts-sdk, ts-sdk-reset, python-sdk, go-sdk, inspector, inspector-v1, sonde) (see sonde timeouts --help)` + "\n"},
		{[]string{"timeouts"}, "sonde: timeouts takes one capture FILE or SESSION (see sonde timeouts --help)\n"},
		{[]string{"timeouts", filepath.Join(t.TempDir(), "missing.jsonl")}, "sonde: capture ..."},
	} {
		clitest.CheckRun(t, clitest.RunSonde(t, "", tc.args...), 2, tc.err)
	}
}
