package main

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
)

// inFlight matches the --trace line of the first tools/call going out.
const inFlight = `-> id 2 +tools/call `

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
			errLine: "sonde: MCP_ABORTED: tools/call id 2: cancelled by caller",
			stdout:  `^$`,
		},
		{
			name:    "call json",
			sub:     []string{"call", "echo", "--json", "--args", `{"value":"x"}`},
			errLine: "sonde: MCP_ABORTED: tools/call id 2: cancelled by caller",
			stdout:  `^\{"error":\{"code":"MCP_ABORTED","message":"tools/call id 2: cancelled by caller"\},"ok":false\}\n$`,
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
			f := newFixture(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			watch := inFlight
			fault := "never-respond"
			if tc.name == "check" {
				watch, fault = `-> id 1 +initialize `, "no-initialize-response"
			}
			stderr := watchBuffer(watch)
			go func() {
				select {
				case <-stderr.hit:
					cancel()
				case <-ctx.Done():
				}
			}()
			args := f.cmd(append(tc.sub, "--trace"), "--fault", fault)
			r := runSondeWith(t, ctx, strings.NewReader(tc.stdin), stderr, args...)
			if r.code != exitInterrupted {
				t.Errorf("exit %d, want %d\nstderr:\n%s", r.code, exitInterrupted, r.stderr)
			}
			if got := sondeLine(r.stderr); got != tc.errLine {
				t.Errorf("stderr line %q, want %q", got, tc.errLine)
			}
			if !regexp.MustCompile(tc.stdout).MatchString(r.stdout) {
				t.Errorf("stdout does not match %s:\n%s", tc.stdout, r.stdout)
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
			f := newFixture(t)
			var fixtureArgs []string
			for _, fault := range tc.faults {
				fixtureArgs = append(fixtureArgs, "--fault", fault)
			}
			sub := append([]string{"call", "echo", "--args", `{"value":"x"}`, "--trace"}, tc.flags...)
			cmd := exec.Command(os.Args[0], f.cmd(sub, fixtureArgs...)...)
			cmd.Env = append(os.Environ(), childEnv()...)
			var stdout syncBuffer
			stderr := watchBuffer(inFlight)
			cmd.Stdout, cmd.Stderr = &stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			stopped := false
			defer func() {
				if !stopped {
					_ = cmd.Process.Kill()
					<-waited
				}
			}()

			select {
			case <-stderr.hit:
			case err := <-waited:
				stopped = true
				t.Fatalf("sonde ended before the call was sent: %v\nstderr:\n%s", err, stderr.String())
			case <-time.After(20 * time.Second):
				t.Fatalf("the call was not sent within 20s; stderr:\n%s", stderr.String())
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-waited:
				stopped = true
				var xe *exec.ExitError
				if err != nil && !errors.As(err, &xe) {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("sonde did not exit within 20s of %v; stderr:\n%s", tc.sig, stderr.String())
			}

			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Errorf("exit status %d (%v), want %d", code, cmd.ProcessState, exitInterrupted)
			}
			line := sondeLine(stderr.String())
			if line != "sonde: MCP_ABORTED: tools/call id 2: cancelled by caller" {
				t.Errorf("stderr line %q, want the aborted call\nstderr:\n%s", line, stderr.String())
			}
			if stdout.String() != "" {
				t.Errorf("stdout = %q", stdout.String())
			}
			for _, re := range tc.trace {
				if !regexp.MustCompile(re).MatchString(stderr.String()) {
					t.Errorf("trace does not match %s:\n%s", re, stderr.String())
				}
			}
			want := 1
			if strings.Contains(tc.name, "grandchild") {
				want = 2
			}
			f.assertStarted(want)
		})
	}
}

// TestSecondInterruptKills: a server that ignores stdin EOF and SIGTERM,
// with --kill-after 30s, would keep sonde waiting a minute after the first
// SIGINT; a second SIGINT kills it at once (SIGKILL without SIGTERM first).
func TestSecondInterruptKills(t *testing.T) {
	f := newFixture(t)
	sub := []string{"call", "echo", "--args", `{"value":"x"}`, "--trace", "--kill-after", "30s"}
	cmd := exec.Command(os.Args[0], f.cmd(sub, "--fault", "never-respond", "--fault", "ignore-sigterm")...)
	cmd.Env = append(os.Environ(), childEnv()...)
	var stdout syncBuffer
	stderr := watchBuffer(inFlight)
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-waited
		}
	}()
	select {
	case <-stderr.hit:
	case <-time.After(20 * time.Second):
		t.Fatalf("the call was not sent within 20s; stderr:\n%s", stderr.String())
	}
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
	select {
	case <-waited:
	case <-time.After(20 * time.Second): // far below the 60s of grace periods
		t.Fatalf("sonde did not exit after the second interrupt; stderr:\n%s", stderr.String())
	}
	out := stderr.String()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit status %d, want %d", code, exitInterrupted)
	}
	if !strings.Contains(out, "sonde: interrupted again: killing the server now") ||
		!regexp.MustCompile(`process \d+ sent SIGKILL`).MatchString(out) || strings.Contains(out, "sent SIGTERM") {
		t.Errorf("want a SIGKILL with no SIGTERM before it:\n%s", out)
	}
	f.assertStarted(1)
}

// `sonde fixture` is a server, not a client: SIGTERM ends it at once, as
// docs/fixtures.md says, instead of being taken as sonde's "stop the
// server cleanly" interrupt.
func TestFixtureDiesOnSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0], "fixture")
	cmd.Env = append(os.Environ(), childEnv()...)
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
	base := fixtureHTTP(t, "--fault", "http-unauthorized")
	cmd := exec.Command(os.Args[0], "call", "echo", "--url", base+"/mcp", "--oauth", "--oauth-timeout", "2m")
	cmd.Env = append(os.Environ(), childEnv()...)
	stderr := watchBuffer("open this URL to authorize sonde")
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-waited
		}
	}()
	select {
	case <-stderr.hit:
	case <-time.After(20 * time.Second):
		t.Fatalf("no authorization URL within 20s; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatalf("sonde still waits after SIGINT; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit status %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
}
