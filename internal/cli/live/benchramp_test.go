package live_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/live"
)

// decodeRamp decodes the --ramp-to-failure JSON report, strictly.
func decodeRamp(t *testing.T, stdout string) live.RampReport {
	t.Helper()
	var rep live.RampReport
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("stdout is not the ramp report: %v\n%s", err, stdout)
	}
	return rep
}

// TestBenchRampConverges: against the fixture with a known ceiling (2
// slots of 50ms: 40 calls/s), searched from 10/s to 100/s under a loose
// p99<1s, the lowest rate holds and the highest fails whatever the load
// beside the test (at 2.5× the ceiling a 2 s step ends 3 s behind), and
// the steps between are a bisection whose ceiling is the best that held.
// How close it lands to 40/s is BenchmarkBenchRampCeiling: the steps
// between are judged on latencies, which CPU hogs move.
func TestBenchRampConverges(t *testing.T) {
	fx := clitest.NewFixture(t)
	r := fx.RunChecked("", []string{"bench", "echo", "--args", `{"value":"x"}`, "--ramp-to-failure", "--rate", "100/s",
		"--ramp-step", "2s", "--ramp-steps", "5", "-c", "64", "--check-echo", "value",
		"--assert", "p99<1s", "--assert", "mismatched==0", "--json"}, []string{"--capacity", "2/50ms"}, cmdutil.ExitOK, "")
	rep := decodeRamp(t, r.Stdout)
	if !rep.OK || rep.AtHighest || len(rep.Steps) != 5 || rep.Lowest != 10 || rep.Highest != 100 || rep.StepSeconds != 2 {
		t.Fatalf("report: %+v", rep)
	}
	if !rep.Steps[0].Holds || rep.Steps[1].Holds || rep.Steps[0].Calls != 20 || rep.Steps[1].Calls != 200 {
		t.Errorf("lowest and highest steps: %+v", rep.Steps[:2])
	}
	if rep.Steps[1].Unfinished == 0 {
		t.Errorf("at 100/s against a 40/s server, no call was left unfinished: %+v", rep.Steps[1])
	}
	if rep.Ceiling < rep.Lowest || rep.Ceiling >= rep.Highest {
		t.Errorf("ceiling %v outside [%v, %v)", rep.Ceiling, rep.Lowest, rep.Highest)
	}
	checkBisection(t, rep)
}

// BenchmarkBenchRampCeiling: the ramp against the fixture's 40 calls/s
// ceiling (2 slots of 50ms) lands within 20% of it. Above the ceiling the
// backlog grows by (rate/ceiling - 1) s of wait a second, so a 4 s step
// at 1.2x ends near 800ms behind, over p99<500ms; below it the p99 is
// near the 50ms service time on a quiet machine.
func BenchmarkBenchRampCeiling(b *testing.B) {
	const ceiling = 40.0
	args := []string{"bench", "echo", "--args", `{"value":"x"}`, "--ramp-to-failure", "--rate", "100/s",
		"--ramp-step", "4s", "--ramp-steps", "8", "-c", "64", "--assert", "p99<500ms", "--json"}
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "--env", kv)
	}
	args = append(args, "--", os.Args[0], "fixture", "--capacity", "2/50ms")
	for b.Loop() {
		var out, errb strings.Builder
		if code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		var rep live.RampReport
		if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rep.Ceiling, "ceiling/s")
		if rep.Ceiling < ceiling*0.8 || rep.Ceiling > ceiling*1.2 {
			b.Errorf("ceiling %v, want within 20%% of %v; steps %+v", rep.Ceiling, ceiling, rep.Steps)
		}
	}
}

// checkBisection checks that the steps are a bisection: the lowest, the
// highest, then each the midpoint of the best holding and the lowest
// failing rate so far, and that the ceiling is the best that held.
func checkBisection(t *testing.T, rep live.RampReport) {
	t.Helper()
	good, bad := rep.Lowest, rep.Highest
	for i, st := range rep.Steps {
		want := (good + bad) / 2
		switch i {
		case 0:
			want = rep.Lowest
		case 1:
			want = rep.Highest
		}
		if st.Rate != want {
			t.Errorf("step %d at %v/s, want %v/s", i+1, st.Rate, want)
		}
		held := st.Unfinished == 0
		for _, th := range st.Thresholds {
			held = held && th.OK
		}
		if held != st.Holds || len(st.Thresholds) != 2 {
			t.Errorf("step %d: holds %v, but thresholds %+v and %d unfinished", i+1, st.Holds, st.Thresholds, st.Unfinished)
		}
		if i > 0 && st.Holds {
			good = st.Rate
		} else if i > 0 {
			bad = st.Rate
		}
	}
	if rep.Ceiling != good {
		t.Errorf("ceiling %v, but the best rate that held is %v", rep.Ceiling, good)
	}
}

// TestBenchRampNothingHolds: when even the lowest rate fails, the ramp
// stops there with exit status 1 and names the threshold.
func TestBenchRampNothingHolds(t *testing.T) {
	fx := clitest.NewFixture(t)
	r := fx.RunChecked("", []string{"bench", "echo", "--args", `{"value":"x"}`, "--ramp-to-failure", "--rate", "20/s",
		"--ramp-step", "500ms", "--assert", "p99<1ms", "--json"}, []string{"--capacity", "1/20ms"}, cmdutil.ExitToolError,
		"sonde: ramp: even the lowest rate, 2.0/s, fails: p99<1ms (p99 is ...")
	rep := decodeRamp(t, r.Stdout)
	if rep.OK || rep.Ceiling != 0 || len(rep.Steps) != 1 || rep.Steps[0].Holds || rep.Steps[0].Rate != 2 {
		t.Errorf("report: %+v", rep)
	}
}

// TestBenchRampText: the text report has a line per step and the ceiling;
// a server faster than the highest rate gives "at least".
func TestBenchRampText(t *testing.T) {
	fx := clitest.NewFixture(t)
	r := fx.RunChecked("", []string{"bench", "echo", "--args", `{"value":"x"}`, "--ramp-to-failure", "--rate", "20/s",
		"--ramp-step", "500ms", "--assert", "p99<1m"}, nil, cmdutil.ExitOK, "")
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "bench echo --ramp-to-failure: 2 steps of 500.0ms, 2.0/s to 20.0/s") ||
		!strings.Contains(lines[1], "2.0/s") || !strings.HasSuffix(lines[2], " ok") || lines[3] != "  ceiling  at least 20.0/s (the highest rate tried held)" {
		t.Errorf("text report:\n%s", r.Stdout)
	}
}

// TestBenchRampRefused: the ramp's flags are checked before any server
// starts.
func TestBenchRampRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--assert", "p99<1s"}, "sonde: --ramp-to-failure needs --rate: the highest rate to try"},
		{[]string{"--rate", "10/s"}, "sonde: --ramp-to-failure needs --assert: the thresholds that must hold"},
		{[]string{"--rate", "10/s", "--assert", "p99<1s", "--duration", "1s"}, "sonde: --ramp-to-failure does not go with --stages, --duration or -n: its steps are --ramp-step long"},
		{[]string{"--rate", "10/s", "--assert", "p99<1s", "--ramp-steps", "1"}, "sonde: --ramp-steps must be from 2 to 20"},
		{[]string{"--rate", "10/s", "--assert", "p99<1s", "--ramp-step", "0s"}, "sonde: --ramp-step must be above 0 and at most 10m0s"},
		{[]string{"--rate", "fast", "--assert", "p99<1s"}, `sonde: --rate "fast": want calls per second above 0, as 200/s`},
	} {
		clitest.CheckRefused(t, "", append([]string{"bench", "echo", "--ramp-to-failure"}, tc.args...), cmdutil.ExitUsage, tc.msg+"\n")
	}
}
