// Package clitest is what the tests of sonde's command line share: a
// fixture server started by sonde (the test binary itself, re-executed), an
// in-process run of the whole command line (RunSonde), and checks of its
// exit status and output. Only tests import it.
package clitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// InFlight matches the --trace line of the first tools/call going out.
const InFlight = `-> id 2 +tools/call `

// Main is the body of the TestMain of a package that runs sonde: the test
// binary re-executed with fixturetest.Env runs sonde's command line (and so,
// with the "fixture" subcommand, the fixture server).
//
// What sonde keeps per user (the failure report of a failed call, the
// servers' records) goes to a folder of the tests' own
// ($TMPDIR/sonde-test-state) unless XDG_STATE_HOME is set: a test's failed
// call never writes in the real home. HostHome gives a test a home of its
// own.
func Main(m *testing.M) {
	if os.Getenv("XDG_STATE_HOME") == "" {
		os.Setenv("XDG_STATE_HOME", filepath.Join(os.TempDir(), "sonde-test-state"))
	}
	fixturetest.Main(m, cli.Main)
}

// SlowTimeout is the --timeout of tests that wait for a request to time
// out. --timeout also bounds initialize, which is sent as soon as the server
// is started: a race-enabled test binary on a busy machine can take longer
// than a few hundred milliseconds to answer it.
const SlowTimeout = "4s"

// RunBound bounds one in-process run of sonde: its context is cancelled
// then, and the test fails if run has not returned shortly after. It only
// guards against a hang; it is not a speed claim.
const RunBound = 30 * time.Second

// Fixture is one fixture server that sonde starts: the test binary itself
// run as `sonde fixture`, recording its pid (and any grandchild's) in a pid
// file. The test's cleanup proves none of those processes is left.
type Fixture struct {
	t *testing.T
	// PIDFile is where the fixture processes record their pids.
	PIDFile string
}

// NewFixture is a fixture server for the test t; t's cleanup proves none of
// its processes is left.
func NewFixture(t *testing.T) *Fixture {
	t.Helper()
	f := &Fixture{t: t, PIDFile: filepath.Join(t.TempDir(), "pids")}
	t.Cleanup(func() { proctest.AssertGone(t, f.PIDFile) })
	return f
}

// Argv is the server command line: `sonde fixture --pid-file P` plus args.
func (f *Fixture) Argv(args ...string) []string {
	return append([]string{os.Args[0], "fixture", "--pid-file", f.PIDFile}, args...)
}

// Cmd is sonde's command line: sub (the subcommand, its arguments and
// flags), the --env flags of ChildEnv, then "--" and the fixture's argv
// with fixtureArgs.
func (f *Fixture) Cmd(sub []string, fixtureArgs ...string) []string {
	args := append([]string(nil), sub...)
	for _, kv := range ChildEnv() {
		args = append(args, "--env", kv)
	}
	args = append(args, "--")
	return append(args, f.Argv(fixtureArgs...)...)
}

// ChildEnv is what a re-executed test binary needs in its environment to
// act as sonde (fixturetest.ChildEnv).
func ChildEnv() []string { return fixturetest.ChildEnv() }

// PIDs returns the pids the fixture recorded so far.
func (f *Fixture) PIDs() []int { return proctest.ReadPIDs(f.t, f.PIDFile) }

// AssertStarted checks how many fixture processes recorded their pid: 0
// proves sonde started nothing (a usage error is reported before spawning).
func (f *Fixture) AssertStarted(want int) {
	f.t.Helper()
	if got := f.PIDs(); len(got) != want {
		f.t.Errorf("fixture processes started: %v, want %d", got, want)
	}
}

// RunChecked runs sonde with stdin and the command line Cmd(sub,
// fixtureArgs...), checks its exit status and stderr line as CheckRun does,
// and returns what it did.
func (f *Fixture) RunChecked(stdin string, sub, fixtureArgs []string, code int, errLine string) Result {
	f.t.Helper()
	r := RunSonde(f.t, stdin, f.Cmd(sub, fixtureArgs...)...)
	CheckRun(f.t, r, code, errLine)
	return r
}

// CheckRefused runs sonde sub (with stdin) against a fresh fixture, checks
// the exit status and stderr line as CheckRun does, and that sonde started
// no fixture process: the command was refused before spawning.
func CheckRefused(t *testing.T, stdin string, sub []string, code int, errLine string) Result {
	t.Helper()
	f := NewFixture(t)
	r := f.RunChecked(stdin, sub, nil, code, errLine)
	f.AssertStarted(0)
	return r
}

// Result is the outcome of one run of sonde.
type Result struct {
	Code   int
	Stdout string
	Stderr string
}

// RunSonde runs sonde in-process with stdin and returns what it did.
func RunSonde(t *testing.T, stdin string, args ...string) Result {
	t.Helper()
	return RunSondeWith(t, context.Background(), strings.NewReader(stdin), &SyncBuffer{}, args...)
}

// RunSondeWith runs sonde in-process with a given context and stderr
// buffer (a watched one, to react to --trace output).
func RunSondeWith(t *testing.T, ctx context.Context, stdin *strings.Reader, stderr *SyncBuffer, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, RunBound)
	defer cancel()
	var stdout SyncBuffer
	done := make(chan int, 1)
	go func() { done <- cli.Run(ctx, args, stdin, &stdout, stderr) }()
	select {
	case code := <-done:
		if ctx.Err() == context.DeadlineExceeded {
			t.Fatalf("sonde %q ran into the test bound of %v (exit %d)\nstdout:\n%s\nstderr:\n%s", args, RunBound, code, stdout.String(), stderr.String())
		}
		return Result{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
	case <-time.After(RunBound + 15*time.Second):
		t.Fatalf("sonde %q did not return %v after its context ended\nstdout:\n%s\nstderr:\n%s", args, 15*time.Second, stdout.String(), stderr.String())
	}
	panic("unreachable")
}

// SyncBuffer is a goroutine-safe buffer (proctest.Buffer).
type SyncBuffer = proctest.Buffer

// WatchBuffer is a SyncBuffer watching for re.
func WatchBuffer(re string) *SyncBuffer { return proctest.WatchBuffer(re) }

// CheckRun compares the exit status and the stderr line of r. errLine is
// the exact stderr ("" for none) unless it ends in "...", then it is a
// prefix of the single line on stderr.
func CheckRun(t *testing.T, r Result, code int, errLine string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, code, r.Stdout, r.Stderr)
	}
	CheckErrLine(t, r.Stderr, errLine)
}

// CheckErrLine checks stderr as CheckRun does.
func CheckErrLine(t *testing.T, stderr, errLine string) {
	t.Helper()
	if prefix, ok := strings.CutSuffix(errLine, "..."); ok {
		if !strings.HasPrefix(stderr, prefix) || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("stderr = %q, want one line starting with %q", stderr, prefix)
		}
		return
	}
	if stderr != errLine {
		t.Errorf("stderr = %q, want %q", stderr, errLine)
	}
}

// CheckOrder checks that text matches the regexps of each chain one after
// the other: each one after the end of the previous match. Lines written
// by different goroutines (a request frame is traced once its write
// returned; its response, by the reader, can come first) are put in
// different chains.
func CheckOrder(t *testing.T, text string, chains ...[]string) {
	t.Helper()
	for _, chain := range chains {
		pos := 0
		for i, re := range chain {
			loc := regexp.MustCompile(re).FindStringIndex(text[pos:])
			if loc == nil {
				after := "in"
				if i > 0 {
					after = "after a match of " + chain[i-1] + " in"
				}
				t.Errorf("no match of %s %s:\n%s", re, after, text)
				return
			}
			pos += loc[1]
		}
	}
}

// SondeLine returns the last line of stderr that starts with "sonde: ".
func SondeLine(stderr string) string {
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "sonde: ") {
			return lines[i]
		}
	}
	return ""
}

// DecodeJSON decodes text (one JSON value) or fails the test.
func DecodeJSON(t *testing.T, text string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value:\n%s", text)
	}
	return v
}

// SameJSON reports whether two JSON texts are the same value.
func SameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	g, w := DecodeJSON(t, got), DecodeJSON(t, want)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}

// FixtureHTTP runs `sonde fixture --http 127.0.0.1:0 ARGS` as a real
// subprocess (the test binary acting as sonde) and returns its base URL.
// The cleanup closes its stdin, which stops it, and waits for it.
func FixtureHTTP(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"fixture", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), ChildEnv()...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("fixture --http did not stop on stdin EOF")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go io.Copy(io.Discard, stdout)
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("fixture --http: %q %v\n%s", line, err, stderr.String())
	}
	return base
}

// HostHome points sonde at a home folder and a project folder (HOME, the
// XDG variables, the working directory) for the rest of the test.
func HostHome(t *testing.T, home, project string) {
	t.Helper()
	t.Setenv("HOME", home)
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "CODEX_HOME"} {
		t.Setenv(k, "")
	}
	t.Chdir(project)
}

// TempHostHome points sonde at a new, empty home folder and project
// folder (HostHome) and returns them.
func TempHostHome(t *testing.T) (home, project string) {
	t.Helper()
	home, project = t.TempDir(), t.TempDir()
	HostHome(t, home, project)
	return home, project
}

// WriteTestFile writes text to path, creating its folders.
func WriteTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// EverythingStdio returns the argv of the reference server over stdio
// (installed by make peers), or skips.
func EverythingStdio(t *testing.T) []string {
	return []string{"--", peertest.Everything(t)}
}

// MarkedEntry is a host config stdio entry (command, args, env) of a
// shell that touches marker, then becomes the fixture fx: the marker
// proves the server was started. It needs sh.
func MarkedEntry(fx *Fixture, marker string) map[string]any {
	args := append([]string{"-c", `touch "$1"; shift; exec "$@"`, "sh", marker}, fx.Argv()...)
	env := map[string]string{}
	for _, kv := range ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return map[string]any{"command": "sh", "args": args, "env": env}
}

// Markers skips the test where MarkedEntry's servers cannot run (Windows:
// they are sh scripts) and returns where the server named name leaves its
// marker, in a folder of the test's own.
func Markers(t *testing.T) func(name string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the marker servers are sh scripts")
	}
	dir := t.TempDir()
	return func(name string) string { return filepath.Join(dir, name) }
}

// Started reports whether the server of MarkedEntry that touches marker
// was started.
func Started(marker string) bool {
	_, err := os.Stat(marker)
	return err == nil
}

// WriteTestJSON writes v as JSON to path, creating its folders.
func WriteTestJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	WriteTestFile(t, path, string(b))
}
