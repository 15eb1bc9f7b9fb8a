package cli_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestInterruptInProcess cancels run's context (what SIGINT does) while a
// call is in flight: exit 130, a line saying what was interrupted, and the
// server stopped.
func TestInterruptInProcess(t *testing.T) {
	cases := []struct {
		name    string
		sub     []string
		stdin   string
		errLine string
		stdout  string // regexp
	}{
		{
			name:    "call",
			sub:     []string{"call", "echo", "--args", `{"value":"x"}`},
			errLine: "sonde: MCP_ABORTED: tools/call id 2: cancelled by caller (execution uncertain: the tool is not read-only and may have run; check before calling it again)",
			stdout:  `^$`,
		},
		{
			name:    "call json",
			sub:     []string{"call", "echo", "--json", "--args", `{"value":"x"}`},
			errLine: "sonde: MCP_ABORTED: tools/call id 2: cancelled by caller (execution uncertain: the tool is not read-only and may have run; check before calling it again)",
			stdout:  `^\{"error":\{"code":"MCP_ABORTED","message":"tools/call id 2: cancelled by caller","uncertain":true\},"ok":false\}\n$`,
		},
		{
			name:    "script",
			sub:     []string{"script", "-"},
			stdin:   `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"x"}}}` + "\n",
			errLine: "sonde: script interrupted",
			stdout:  `^\{"index":0,"id":2,"method":"tools/call","ok":false,"error":\{"code":"MCP_ABORTED",.*\n$`,
		},
		{
			name:    "bench",
			sub:     []string{"bench", "echo", "--args", `{"value":"x"}`, "-n", "5", "-c", "1"},
			errLine: "sonde: bench interrupted",
			stdout:  `(?m)^  errors   MCP_ABORTED x1$`,
		},
		{
			name:    "check",
			sub:     []string{"check"},
			errLine: "sonde: MCP_ABORTED: initialize: stopped waiting (the exchange goes on)",
			stdout:  `^sonde check: FAILED\n  FAIL start\+initialize`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.NewFixture(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			watch := clitest.InFlight
			fault := "never-respond"
			if tc.name == "check" {
				watch, fault = `-> id 1 +initialize `, "no-initialize-response"
			}
			stderr := clitest.WatchBuffer(watch)
			go func() {
				select {
				case <-stderr.Hit():
					cancel()
				case <-ctx.Done():
				}
			}()
			args := f.Cmd(append(tc.sub, "--trace"), "--fault", fault)
			r := clitest.RunSondeWith(t, ctx, strings.NewReader(tc.stdin), stderr, args...)
			if r.Code != cmdutil.ExitInterrupted {
				t.Errorf("exit %d, want %d\nstderr:\n%s", r.Code, cmdutil.ExitInterrupted, r.Stderr)
			}
			if got := clitest.SondeLine(r.Stderr); got != tc.errLine {
				t.Errorf("stderr line %q, want %q", got, tc.errLine)
			}
			if !regexp.MustCompile(tc.stdout).MatchString(r.Stdout) {
				t.Errorf("stdout does not match %s:\n%s", tc.stdout, r.Stdout)
			}
		})
	}
}

// TestSignal runs sonde as a real process (the test binary with
// SONDE_TEST_MAIN=1) and sends it SIGINT while a call is in flight: it exits
// 130, says it was interrupted, and leaves no server process behind, even
// one that ignores SIGTERM or left a grandchild holding its stdout.
func TestSignal(t *testing.T) {
	cases := []struct {
		name   string
		sig    os.Signal
		flags  []string
		faults []string
		trace  []string // regexps the trace must match after the signal
	}{
		{
			// The server ends on its own once its stdin is closed.
			name: "SIGINT", sig: os.Interrupt,
			flags: []string{"--kill-after", "10s"}, faults: []string{"never-respond"},
			trace: []string{`process \d+ ended: exit code 0`},
		},
		{
			name: "SIGTERM", sig: syscall.SIGTERM,
			flags: []string{"--kill-after", "10s"}, faults: []string{"never-respond"},
			trace: []string{`process \d+ ended: exit code 0`},
		},
		{
			name: "SIGINT, server ignores SIGTERM", sig: os.Interrupt,
			flags: []string{"--kill-after", "200ms"}, faults: []string{"never-respond", "ignore-sigterm"},
			trace: []string{`process \d+ sent SIGTERM`, `process \d+ sent SIGKILL`, `process \d+ ended: `},
		},
		{
			name: "SIGINT, grandchild holds stdout", sig: os.Interrupt,
			flags: []string{"--kill-after", "200ms"}, faults: []string{"never-respond", "grandchild-holds-stdout"},
			trace: []string{`process \d+ ended: `},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.NewFixture(t)
			var fixtureArgs []string
			for _, fault := range tc.faults {
				fixtureArgs = append(fixtureArgs, "--fault", fault)
			}
			sub := append([]string{"call", "echo", "--args", `{"value":"x"}`, "--trace"}, tc.flags...)
			p := startSonde(t, clitest.InFlight, f.Cmd(sub, fixtureArgs...)...)
			p.waitWatch(t, "the call sent")
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if !p.exited(t, 20*time.Second) {
				t.Fatalf("sonde did not exit within 20s of %v; stderr:\n%s", tc.sig, p.stderr.String())
			}

			if code := p.cmd.ProcessState.ExitCode(); code != cmdutil.ExitInterrupted {
				t.Errorf("exit status %d (%v), want %d", code, p.cmd.ProcessState, cmdutil.ExitInterrupted)
			}
			line := clitest.SondeLine(p.stderr.String())
			if line != "sonde: MCP_ABORTED: tools/call id 2: cancelled by caller (execution uncertain: the tool is not read-only and may have run; check before calling it again)" {
				t.Errorf("stderr line %q, want the aborted call\nstderr:\n%s", line, p.stderr.String())
			}
			if p.stdout.String() != "" {
				t.Errorf("stdout = %q", p.stdout.String())
			}
			for _, re := range tc.trace {
				if !regexp.MustCompile(re).MatchString(p.stderr.String()) {
					t.Errorf("trace does not match %s:\n%s", re, p.stderr.String())
				}
			}
			want := 1
			if strings.Contains(tc.name, "grandchild") {
				want = 2
			}
			f.AssertStarted(want)
		})
	}
}

// TestSecondInterruptKills: a server that ignores stdin EOF and SIGTERM,
// with --kill-after 30s, would keep sonde waiting a minute after the first
// SIGINT; a second SIGINT kills it at once (SIGKILL without SIGTERM first).
func TestSecondInterruptKills(t *testing.T) {
	f := clitest.NewFixture(t)
	sub := []string{"call", "echo", "--args", `{"value":"x"}`, "--trace", "--kill-after", "30s"}
	p := startSonde(t, clitest.InFlight, f.Cmd(sub, "--fault", "never-respond", "--fault", "ignore-sigterm")...)
	p.waitWatch(t, "the call sent")
	cmd, stderr := p.cmd, p.stderr
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// Wait until the first interrupt has been handled (the call is aborted
	// and the close has begun), then interrupt again.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "tools/call") || !regexp.MustCompile(`cancelled|aborted`).MatchString(stderr.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the first interrupt was not handled; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if !p.exited(t, 20*time.Second) { // far below the 60s of grace periods
		t.Fatalf("sonde did not exit after the second interrupt; stderr:\n%s", stderr.String())
	}
	out := stderr.String()
	if code := cmd.ProcessState.ExitCode(); code != cmdutil.ExitInterrupted {
		t.Errorf("exit status %d, want %d", code, cmdutil.ExitInterrupted)
	}
	if !strings.Contains(out, "sonde: interrupted again: killing the server now") ||
		!regexp.MustCompile(`process \d+ sent SIGKILL`).MatchString(out) || strings.Contains(out, "sent SIGTERM") {
		t.Errorf("want a SIGKILL with no SIGTERM before it:\n%s", out)
	}
	f.AssertStarted(1)
}

// `sonde fixture` is a server, not a client: SIGTERM ends it at once, as
// docs/fixtures.md says, instead of being taken as sonde's "stop the
// server cleanly" interrupt.
func TestFixtureDiesOnSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0], "fixture")
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// It answers a ping, so it is serving.
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	if n, err := stdout.Read(buf); err != nil || !strings.Contains(string(buf[:n]), `"id":1`) {
		t.Fatalf("no answer to ping: %q %v", buf[:n], err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Fatalf("want death by SIGTERM, got %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the fixture outlived SIGTERM by 10s")
	}
}

// SIGINT while --oauth waits for the redirect: sonde stops waiting at
// once (exit 130), far before --oauth-timeout.
func TestInterruptOAuthWait(t *testing.T) {
	base := clitest.FixtureHTTP(t, "--fault", "http-unauthorized")
	p := startSonde(t, "open this URL to authorize sonde", "call", "echo", "--url", base+"/mcp", "--oauth", "--oauth-timeout", "2m")
	p.waitWatch(t, "the authorization URL")
	cmd, stderr := p.cmd, p.stderr
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if !p.exited(t, 10*time.Second) {
		t.Fatalf("sonde still waits after SIGINT; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != cmdutil.ExitInterrupted {
		t.Errorf("exit status %d, want %d\n%s", code, cmdutil.ExitInterrupted, stderr.String())
	}
}

// sondeProc is sonde running as a real process (the test binary with
// childEnv), its stderr watched for a pattern; the test's cleanup kills it
// if it is still running.
type sondeProc struct {
	cmd    *exec.Cmd
	stdout clitest.SyncBuffer
	stderr *clitest.SyncBuffer
	waited chan error
	done   bool
}

// startSonde starts sonde with args, watching its stderr for watch.
func startSonde(t *testing.T, watch string, args ...string) *sondeProc {
	t.Helper()
	p := &sondeProc{cmd: exec.Command(os.Args[0], args...), stderr: clitest.WatchBuffer(watch), waited: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.waited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if !p.done {
			_ = p.cmd.Process.Kill()
			<-p.waited
		}
	})
	return p
}

// waitWatch waits up to 20s for the watched pattern on stderr; what names
// it in the failure.
func (p *sondeProc) waitWatch(t *testing.T, what string) {
	t.Helper()
	select {
	case <-p.stderr.Hit():
	case err := <-p.waited:
		p.done = true
		t.Fatalf("sonde ended before %s: %v\nstderr:\n%s", what, err, p.stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s within 20s; stderr:\n%s", what, p.stderr.String())
	}
}

// exited reports whether sonde exited within d; an error of Wait other
// than an exit status fails the test.
func (p *sondeProc) exited(t *testing.T, d time.Duration) bool {
	t.Helper()
	select {
	case err := <-p.waited:
		p.done = true
		var xe *exec.ExitError
		if err != nil && !errors.As(err, &xe) {
			t.Fatal(err)
		}
		return true
	case <-time.After(d):
		return false
	}
}
