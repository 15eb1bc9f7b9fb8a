package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/internal/proctest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// roleEnv makes the re-executed test binary act as a tiny server.
const roleEnv = "SONDE_TRANSPORT_ROLE"

// TestMain runs a role when the test binary was re-executed as one, and the
// tests otherwise (fixturetest.Main). The fixture's helper role comes
// first: the fixture's grandchild inherits roleEnv=fixture.
func TestMain(m *testing.M) {
	if fixtures.RunRole() {
		os.Exit(0)
	}
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	fixturetest.Main(m, nil)
}

func runRole(role string) int {
	switch role {
	case "fixture":
		return fixtures.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "exit7":
		fmt.Fprintln(os.Stderr, "first line\nbye from role")
		return 7
	case "crlf":
		os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r\n")
		return 0
	case "sleep": // ignores stdin EOF; only a signal ends it
		time.Sleep(10 * time.Minute)
		return 0
	case "close-stdout":
		os.Stdout.Close()
		time.Sleep(10 * time.Minute)
		return 0
	case "env":
		wd, _ := os.Getwd()
		b, _ := json.Marshal(map[string]any{"env": os.Environ(), "wd": wd})
		os.Stdout.Write(append(b, '\n'))
		return 0
	}
	return 99
}

func startRole(t *testing.T, role string, extraEnv []string, args ...string) (*Stdio, *eventLog) {
	t.Helper()
	// The race detector sleeps 1s before a race-enabled binary exits; the
	// server must exit on stdin EOF well within the kill grace.
	env, err := BuildEnv(os.Environ(), nil, append([]string{roleEnv + "=" + role, "GORACE=atexit_sleep_ms=0"}, extraEnv...))
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	s, err := StartStdio(StdioConfig{Argv: append([]string{os.Args[0]}, args...), Env: env, KillAfter: time.Second}, log.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, log
}

// awaitStartup sends initialize to the fixture and reads its answer, which
// proves the fixture is past its start-up (where it applies the start-time
// faults: ignoring SIGTERM, starting the grandchild). A test that closes
// sooner races the start-up against the grace period of Close.
func awaitStartup(t *testing.T, s *Stdio) {
	t.Helper()
	if err := s.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Read(); err != nil || f.Msg.ID.String() != "1" {
		t.Fatalf("initialize: %q, %v", f.Raw, err)
	}
}

type eventLog struct {
	mu  sync.Mutex
	evs []Event
}

func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
}

func (l *eventLog) signals() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []string
	for _, ev := range l.evs {
		if ev.Kind == EventSignal {
			s = append(s, ev.Signal)
		}
	}
	return strings.Join(s, ",")
}

// closeWhileReading closes s while its output is read to the end (a
// server's output left unread could hold up its exit), and fails unless
// the server exited 0; it returns how it ended.
func closeWhileReading(t *testing.T, s *Stdio) *ExitError {
	t.Helper()
	done := make(chan *ExitError)
	go func() { _, xe := readUntilExit(t, s); done <- xe }()
	s.Close()
	xe := <-done
	if xe.Exit.Code != 0 {
		t.Fatalf("exit %+v", xe.Exit)
	}
	return xe
}

// readUntilExit reads frames until the terminal error, which it returns.
func readUntilExit(t *testing.T, s *Stdio) ([]Frame, *ExitError) {
	t.Helper()
	var frames []Frame
	for i := 0; i < 10000; i++ {
		f, err := s.Read()
		if err == nil {
			frames = append(frames, f)
			continue
		}
		var xe *ExitError
		if !errors.As(err, &xe) {
			t.Fatalf("terminal error %v is not an ExitError", err)
		}
		return frames, xe
	}
	t.Fatal("no end of stream")
	return nil, nil
}

func TestStdioRoundTrip(t *testing.T) {
	s, log := startRole(t, "fixture", nil)
	if err := s.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	f, err := s.Read()
	if err != nil || f.Err != nil || f.Dir != In || string(f.Raw) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("frame %+v err %v", f, err)
	}
	s.Close()
	_, xe := readUntilExit(t, s)
	if xe.Exit.Code != 0 || !xe.Exit.ByClose || log.signals() != "" {
		t.Fatalf("exit %+v, signals %q", xe.Exit, log.signals())
	}
	if err := s.Write([]byte(`{}`)); !errors.Is(err, ErrStdinClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

func TestStdioExitCodeAndStderrTail(t *testing.T) {
	s, _ := startRole(t, "exit7", nil)
	_, xe := readUntilExit(t, s)
	if xe.Exit.Code != 7 || xe.Exit.ByClose || !strings.Contains(string(xe.Exit.Stderr), "bye from role") {
		t.Fatalf("exit %+v (%s)", xe.Exit, xe.Exit.Stderr)
	}
	if !strings.Contains(xe.Error(), "exit code 7") {
		t.Fatalf("message %q", xe.Error())
	}
}

func TestStdioCRLFFraming(t *testing.T) {
	s, _ := startRole(t, "crlf", nil)
	frames, _ := readUntilExit(t, s)
	if len(frames) != 2 {
		t.Fatalf("%d frames", len(frames))
	}
	for i, f := range frames {
		if f.Err != nil || f.Msg.ID.String() != fmt.Sprint(i+1) || !strings.HasSuffix(string(f.Raw), "}\r") {
			t.Fatalf("frame %d: %q %v", i, f.Raw, f.Err)
		}
	}
}

func TestStdioServerClosesStdout(t *testing.T) {
	s, log := startRole(t, "close-stdout", nil)
	_, xe := readUntilExit(t, s)
	if !xe.Exit.StdoutClosed || xe.Exit.ByClose || !strings.Contains(xe.Error(), "closed its stdout") {
		t.Fatalf("exit %+v: %v", xe.Exit, xe)
	}
	if log.signals() != "SIGTERM" {
		t.Fatalf("signals %q (the role ignores stdin EOF, so SIGTERM ends it)", log.signals())
	}
	if proctest.Alive(s.Pid()) {
		t.Fatal("server still running")
	}
}

func TestStdioIgnoreSigtermGetsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	s, log := startRole(t, "fixture", nil, "--fault", "ignore-sigterm", "--pid-file", pidFile)
	awaitStartup(t, s) // else SIGTERM could come before it is ignored
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, xe := readUntilExit(t, s)
	if xe.Exit.Signal != "SIGKILL" || log.signals() != "SIGTERM,SIGKILL" {
		t.Fatalf("exit %+v, signals %q", xe.Exit, log.signals())
	}
	proctest.AssertGone(t, pidFile)
}

func TestStdioGrandchildHoldingStdout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	s, _ := startRole(t, "fixture", nil, "--fault", "grandchild-holds-stdout", "--pid-file", pidFile)
	awaitStartup(t, s) // else the grace period could end while it starts the grandchild
	xe := closeWhileReading(t, s)
	pids := proctest.ReadPIDs(t, pidFile)
	if len(pids) != 2 {
		t.Fatalf("%d pids recorded", len(pids))
	}
	// The grandchild it left in its group is named (Linux and macOS).
	if left := xe.Exit.Left; (runtime.GOOS == "linux" || runtime.GOOS == "darwin") && (len(left) != 1 || left[0].Pid != pids[1]) {
		t.Errorf("left behind %+v, want the grandchild %d", left, pids[1])
	}
	proctest.AssertGone(t, pidFile)
}

func TestStdioEnvironmentAndDir(t *testing.T) {
	t.Setenv("SONDE_TEST_SECRET", "s3cret")
	t.Setenv("SONDE_TEST_PASSED", "yes")
	dir := t.TempDir()
	env, _ := BuildEnv(os.Environ(), []string{"SONDE_TEST_PASSED"}, []string{roleEnv + "=env", "EXTRA=1"})
	s, err := StartStdio(StdioConfig{Argv: []string{os.Args[0]}, Env: env, Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Env []string
		Wd  string
	}
	if err := json.Unmarshal(f.Raw, &got); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got.Env, "\n")
	if strings.Contains(all, "s3cret") || !strings.Contains(all, "SONDE_TEST_PASSED=yes") || !strings.Contains(all, "EXTRA=1") {
		t.Fatalf("environment:\n%s", all)
	}
	if real, _ := filepath.EvalSymlinks(dir); got.Wd != dir && got.Wd != real {
		t.Fatalf("cwd %s, want %s", got.Wd, dir)
	}
}

func TestStdioKill(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	s, log := startRole(t, "fixture", nil, "--fault", "ignore-sigterm", "--pid-file", pidFile)
	s.Kill()
	_, xe := readUntilExit(t, s)
	if xe.Exit.Signal != "SIGKILL" || log.signals() != "SIGKILL" {
		t.Fatalf("exit %+v, signals %q", xe.Exit, log.signals())
	}
	s.Kill() // after the exit: nothing more is sent
	if log.signals() != "SIGKILL" {
		t.Fatalf("signals %q", log.signals())
	}
	proctest.AssertGone(t, pidFile)
}

// TestStdioAbortSendsTERMAtOnce: with a 60s grace, Close would wait a
// minute before SIGTERM; Abort sends it at once.
func TestStdioAbortSendsTERMAtOnce(t *testing.T) {
	env, _ := BuildEnv(os.Environ(), nil, []string{roleEnv + "=sleep", "GORACE=atexit_sleep_ms=0"})
	log := &eventLog{}
	s, err := StartStdio(StdioConfig{Argv: []string{os.Args[0]}, Env: env, KillAfter: time.Minute}, log.add)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *ExitError, 1)
	go func() { _, xe := readUntilExit(t, s); done <- xe }()
	s.Abort()
	select {
	case xe := <-done:
		if xe.Exit.Signal != "SIGTERM" || log.signals() != "SIGTERM" {
			t.Fatalf("exit %+v, signals %q", xe.Exit, log.signals())
		}
	case <-time.After(20 * time.Second): // a third of the grace Close would wait
		t.Fatalf("no exit; signals %q", log.signals())
	}
	s.Close() // idempotent after Abort
	if proctest.Alive(s.Pid()) {
		t.Fatal("server still running")
	}
}

// TestStdioWriteBatch: several messages handed over at once reach the
// server as separate lines (each answered), and a batch after the server's
// stdin is closed is an error.
func TestStdioWriteBatch(t *testing.T) {
	s, _ := startRole(t, "fixture", nil)
	awaitStartup(t, s)
	var batch [][]byte
	for id := 2; id <= 4; id++ {
		batch = append(batch, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
	}
	if err := s.WriteBatch(batch); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 3 {
		f, err := s.Read()
		if err != nil {
			t.Fatalf("after %v: %v", seen, err)
		}
		if f.Err != nil || f.Msg.Kind != jsonrpc.KindResponse {
			t.Fatalf("frame %q: %v", f.Raw, f.Err)
		}
		seen[f.Msg.ID.String()] = true
	}
	if !seen["2"] || !seen["3"] || !seen["4"] {
		t.Fatalf("answers to %v, want 2, 3 and 4", seen)
	}
	s.Close()
	if err := s.WriteBatch(batch); !errors.Is(err, ErrStdinClosed) {
		t.Fatalf("batch after close: %v", err)
	}
}
