package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// slowTimeout is the --timeout of tests that wait for a request to time
// out. --timeout also bounds initialize, which is sent as soon as the server
// is started: a race-enabled test binary on a busy machine can take longer
// than a few hundred milliseconds to answer it.
const slowTimeout = "4s"

// runBound bounds one in-process run of sonde: its context is cancelled
// then, and the test fails if run has not returned shortly after. It only
// guards against a hang; it is not a speed claim.
const runBound = 30 * time.Second

// TestMain runs sonde (and so, with the "fixture" subcommand, the fixture
// server) when the test binary was re-executed as it.
func TestMain(m *testing.M) { fixturetest.Main(m, runWithSignals) }

// fixture is one fixture server that sonde starts: the test binary itself
// run as `sonde fixture`, recording its pid (and any grandchild's) in a pid
// file. The test's cleanup proves none of those processes is left.
type fixture struct {
	t       *testing.T
	pidFile string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, pidFile: filepath.Join(t.TempDir(), "pids")}
	t.Cleanup(func() { proctest.AssertGone(t, f.pidFile) })
	return f
}

// argv is the server command line: `sonde fixture --pid-file P` plus args.
func (f *fixture) argv(args ...string) []string {
	return append([]string{os.Args[0], "fixture", "--pid-file", f.pidFile}, args...)
}

// cmd is sonde's command line: sub (the subcommand, its arguments and
// flags), the --env flags of childEnv, then "--" and the fixture's argv
// with fixtureArgs.
func (f *fixture) cmd(sub []string, fixtureArgs ...string) []string {
	args := append([]string(nil), sub...)
	for _, kv := range childEnv() {
		args = append(args, "--env", kv)
	}
	args = append(args, "--")
	return append(args, f.argv(fixtureArgs...)...)
}

// childEnv is what a re-executed test binary needs in its environment to
// act as sonde (fixturetest.ChildEnv).
func childEnv() []string { return fixturetest.ChildEnv() }

// pids returns the pids the fixture recorded so far.
func (f *fixture) pids() []int { return proctest.ReadPIDs(f.t, f.pidFile) }

// assertStarted checks how many fixture processes recorded their pid: 0
// proves sonde started nothing (a usage error is reported before spawning).
func (f *fixture) assertStarted(want int) {
	f.t.Helper()
	if got := f.pids(); len(got) != want {
		f.t.Errorf("fixture processes started: %v, want %d", got, want)
	}
}

// result is the outcome of one run of sonde.
type result struct {
	code   int
	stdout string
	stderr string
}

// runSonde runs sonde in-process with stdin and returns what it did.
func runSonde(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runSondeWith(t, context.Background(), strings.NewReader(stdin), &syncBuffer{}, args...)
}

// runSondeWith runs sonde in-process with a given context and stderr
// buffer (a watched one, to react to --trace output).
func runSondeWith(t *testing.T, ctx context.Context, stdin *strings.Reader, stderr *syncBuffer, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, runBound)
	defer cancel()
	var stdout syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, stdin, &stdout, stderr) }()
	select {
	case code := <-done:
		if ctx.Err() == context.DeadlineExceeded {
			t.Fatalf("sonde %q ran into the test bound of %v (exit %d)\nstdout:\n%s\nstderr:\n%s", args, runBound, code, stdout.String(), stderr.String())
		}
		return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	case <-time.After(runBound + 15*time.Second):
		t.Fatalf("sonde %q did not return %v after its context ended\nstdout:\n%s\nstderr:\n%s", args, 15*time.Second, stdout.String(), stderr.String())
	}
	panic("unreachable")
}

// syncBuffer is a goroutine-safe buffer. With watch set, hit is closed the
// first time the written text matches it.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	watch *regexp.Regexp
	hit   chan struct{}
	seen  bool
}

func watchBuffer(re string) *syncBuffer {
	return &syncBuffer{watch: regexp.MustCompile(re), hit: make(chan struct{})}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if s.watch != nil && !s.seen && s.watch.Match(s.b.Bytes()) {
		s.seen = true
		close(s.hit)
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// checkRun compares the exit status and the stderr line of r. errLine is
// the exact stderr ("" for none) unless it ends in "...", then it is a
// prefix of the single line on stderr.
func checkRun(t *testing.T, r result, code int, errLine string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	checkErrLine(t, r.stderr, errLine)
}

func checkErrLine(t *testing.T, stderr, errLine string) {
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

// checkOrder checks that text matches the regexps of each chain one after
// the other: each one after the end of the previous match. Lines written
// by different goroutines (a request frame is traced once its write
// returned; its response, by the reader, can come first) are put in
// different chains.
func checkOrder(t *testing.T, text string, chains ...[]string) {
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

// sondeLine returns the last line of stderr that starts with "sonde: ".
func sondeLine(stderr string) string {
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "sonde: ") {
			return lines[i]
		}
	}
	return ""
}

// decodeJSON decodes text (one JSON value) or fails the test.
func decodeJSON(t *testing.T, text string) any {
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

// sameJSON reports whether two JSON texts are the same value.
func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	g, w := decodeJSON(t, got), decodeJSON(t, want)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}
