// Package fixturetest is the TestMain fork trick of sonde's tests, in one
// place: a test binary that starts a server re-executes itself, and the
// copy, told so by its environment, runs the program instead of the tests
// (the fixture server, or the whole sonde command line, whose `sonde
// fixture` is the fixture). No second binary is built.
package fixturetest

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// Env, set to 1 in the environment of a re-executed test binary, makes Main
// run the program given to it instead of the tests.
const Env = "SONDE_TEST_MAIN"

// Program is what a re-executed test binary runs: fixtures.Main, or sonde's
// command line. It returns the exit status.
type Program func(args []string, in io.Reader, out, errw io.Writer) int

// Main is the body of TestMain. It first performs the fixture's helper
// role when the binary was started as one (fixtures.RunRole: the fixture
// re-executes its own binary, here the test binary, for the grandchild of
// some faults); then, when Env is 1, it runs run (nil: none) with the
// binary's arguments and exits with its status; otherwise it runs the tests
// and fails them if goroutines are left running (goleak).
func Main(m *testing.M, run Program) {
	if fixtures.RunRole() {
		os.Exit(0)
	}
	if run != nil && os.Getenv(Env) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// ChildEnv is what a re-executed test binary needs in its environment: Env
// to run the program, and not to sleep at exit. A binary built with -race
// sleeps 1s before exiting (GORACE atexit_sleep_ms), which would make every
// stop of a server a second long.
func ChildEnv() []string {
	return []string{Env + "=1", "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")}
}

// Argv is the command line of the fixture run on stdio as a child of this
// test binary (with ChildEnv in its environment), args after its
// --pid-file: the file, also returned, where the fixture writes its pid and
// its children's. At the end of the test it fails if one of them is still
// running (proctest.AssertGone); call Argv before registering the cleanup
// that closes the session, so that the check runs after it.
func Argv(t testing.TB, args ...string) (argv []string, pidFile string) {
	t.Helper()
	pidFile = filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() { proctest.AssertGone(t, pidFile) })
	return append([]string{os.Args[0], "--pid-file", pidFile}, args...), pidFile
}

// ServeHTTPOn runs the fixture's HTTP mode in this process on ln until the
// test ends; the cleanup stops it and fails the test if it failed.
func ServeHTTPOn(t testing.TB, ln net.Listener, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fixtures.ServeHTTP(ctx, ln, args, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("fixture over HTTP: %v", err)
		}
	})
}

// ServeHTTP runs the fixture's HTTP mode in this process on a new loopback
// socket until the test ends and returns its origin (http://127.0.0.1:PORT;
// the MCP endpoint is its /mcp).
func ServeHTTP(t testing.TB, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ServeHTTPOn(t, ln, args...)
	return "http://" + ln.Addr().String()
}
