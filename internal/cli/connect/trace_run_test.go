package connect_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestTrace checks that --trace shows the process, every frame with its
// arrow, and the outcome of each request, on stderr only.
func TestTrace(t *testing.T) {
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "echo", "--args", `{"value":"traced"}`, "--trace", "--kill-after", "10s"}, "--fault", "stdout-noise")...)
	if r.Code != cmdutil.ExitOK || clitest.SondeLine(r.Stderr) != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if r.Stdout != "traced\n" {
		t.Errorf("stdout = %q (the trace must go to stderr)", r.Stdout)
	}
	pids := f.PIDs()
	if len(pids) != 1 {
		t.Fatalf("pids %v", pids)
	}
	pid := strconv.Itoa(pids[0])
	started := `(?m)^ +\+\S+ process started, pid ` + pid + `: \S+ fixture --pid-file \S+ --fault stdout-noise$`
	ended := `(?m)^ +\+\S+ process ` + pid + ` ended: exit code 0$`
	noise := `(?m)^ +\+\S+ <- +invalid +31B  malformed: line on stdout is not JSON: servers must log to stderr  fixture noise: this is not JSON$`
	clitest.CheckOrder(t, r.Stderr,
		// What sonde wrote.
		[]string{
			started,
			`(?m)^ +\+\S+ -> id 1 +initialize +\d+B  sent  \{"jsonrpc":"2\.0","id":1,"method":"initialize"`,
			`(?m)^ +\+\S+ -> +notifications/initialized +\d+B  sent  `,
			`(?m)^ +\+\S+ -> id 2 +tools/call +\d+B  sent  \{"jsonrpc":"2\.0","id":2,"method":"tools/call"`,
			ended,
		},
		// What it read, and the outcome of each request.
		[]string{
			started,
			noise,
			`(?m)^ +\+\S+ <- id 1 +response +\d+B  resolved id 1 after `,
			`(?m)^ +\+\S+ +id 1 +initialize +resolved after `,
			noise,
			`(?m)^ +\+\S+ <- id 2 +response +\d+B  resolved id 2 after \S+  \{"jsonrpc":"2\.0","id":2,"result":`,
			`(?m)^ +\+\S+ +id 2 +tools/call echo +resolved after `,
			ended,
		})
	if n := strings.Count(r.Stderr, "fixture noise: this is not JSON\n"); n != 2 {
		t.Errorf("%d noise lines traced, want 2 (one before each response)", n)
	}
}

// TestTimeoutSnapshot: a call that times out says what the server was
// doing (stderr, and the error object with --json), and --trace counts
// its budget down while it waits.
func TestTimeoutSnapshot(t *testing.T) {
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "echo", "--args", `{"value":"x"}`, "--timeout", "2500ms", "--trace"}, "--fault", "never-respond")...)
	if r.Code != cmdutil.CodeExit("MCP_TIMEOUT") {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, re := range []string{
		`(?m)^ +\+\S+ +id 2 +tools/call echo +pending \S+: \S+ left of 2\.5s$`,
		`(?m)^sonde: MCP_TIMEOUT: tools/call id 2: no response within 2\.5s; sleeping: `,
	} {
		if !regexp.MustCompile(re).MatchString(r.Stderr) {
			t.Errorf("stderr lacks %s:\n%s", re, r.Stderr)
		}
	}

	// 3 s, not 1 s: --timeout is also the handshake's, which took 600 ms
	// in other tests on a loaded machine.
	r = clitest.RunSonde(t, "", f.Cmd([]string{"call", "echo", "--args", `{"value":"x"}`, "--timeout", "3s", "--json"}, "--fault", "never-respond")...)
	clitest.CheckErrLine(t, r.Stderr, "sonde: MCP_TIMEOUT: tools/call id 2: no response within 3s; sleeping: ...")
	if strings.Count(r.Stdout, "\n") != 1 {
		t.Errorf("--json printed %q, want one line", r.Stdout)
	}
	var out struct {
		Error struct {
			Code     string
			Snapshot struct {
				Kind, Written string
				Processes     []struct{ State string }
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	if s := out.Error.Snapshot; out.Error.Code != "MCP_TIMEOUT" || s.Kind != "sleeping" || s.Written != "written" || len(s.Processes) == 0 || s.Processes[0].State != "sleeping" {
		t.Fatalf("--json: %s", r.Stdout)
	}
}

// TestLinger: the late answer of a call that timed out is reported when
// it comes before sonde exits, which --linger waits for. --timeout is also
// the handshake's: 3 s, as a 400 ms one timed the initialize out on a
// loaded machine; the answer comes 2 s after the call's deadline.
func TestLinger(t *testing.T) {
	f := clitest.NewFixture(t)
	args := []string{"call", "echo", "--args", `{"value":"x"}`, "--timeout", "3s"}
	late := []string{"--fault", "late-response", "--late-ms", "5000"}
	r := clitest.RunSonde(t, "", f.Cmd(append(args, "--linger", "10s"), late...)...)
	want := regexp.MustCompile(`(?m)^sonde: late answer: tools/call echo id 2 would have succeeded \S+ after the deadline \(--timeout (\S+) would have been enough\)$`)
	m := want.FindStringSubmatch(r.Stderr)
	if r.Code != cmdutil.CodeExit("MCP_TIMEOUT") || m == nil || !strings.Contains(r.Stderr, "sonde: waiting up to 10s (--linger) for 1 late answer(s)\n") {
		t.Fatalf("exit %d:\n%s", r.Code, r.Stderr)
	}
	if enough, err := time.ParseDuration(m[1]); err != nil || enough < 5*time.Second {
		t.Errorf("--timeout %s would have been enough, for an answer 5s late", m[1])
	}
	// Without --linger sonde exits at the timeout (a server that does
	// not end when its stdin closes is stopped 100ms later): no late answer.
	r = clitest.RunSonde(t, "", f.Cmd(append(args, "--kill-after", "100ms"), late...)...)
	if r.Code != cmdutil.CodeExit("MCP_TIMEOUT") || strings.Contains(r.Stderr, "late answer") {
		t.Fatalf("exit %d:\n%s", r.Code, r.Stderr)
	}
}

// TestLateAnswersCounted: past the first ten, late answers are counted in
// one line rather than printed one by one. Each answer comes 3 s after its
// call's 200 ms deadline (with 100 ms against 500 ms, two answers beat
// their timers once on a loaded machine and were no late answers).
func TestLateAnswersCounted(t *testing.T) {
	f := clitest.NewFixture(t)
	var script strings.Builder
	for range 12 {
		script.WriteString(`{"method":"tools/call","params":{"name":"echo","arguments":{"value":"x"}},"timeout_ms":200}` + "\n")
	}
	r := clitest.RunSonde(t, script.String(), f.Cmd([]string{"script", "-", "--linger", "20s"}, "--fault", "late-response", "--late-ms", "3200")...)
	if n := strings.Count(r.Stderr, "sonde: late answer: tools/call id "); n != 10 || !strings.Contains(r.Stderr, "sonde: and 2 more late answers\n") {
		t.Fatalf("%d late answers printed; stderr:\n%s", n, r.Stderr)
	}
}
