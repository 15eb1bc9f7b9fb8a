package manager

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

// fixture is the spec of the fixture server (this test binary re-executed)
// named name, recording its pids in its own file.
func fixture(t *testing.T, name string, extra ...string) (Spec, string) {
	return fixtureB(t, name, extra...)
}

// fixtureB is fixture for a test or a benchmark.
func fixtureB(t testing.TB, name string, extra ...string) (Spec, string) {
	t.Helper()
	argv, pidFile := fixturetest.Argv(t, extra...)
	return Spec{Name: name, Where: "test", Argv: argv, Env: fixturetest.ChildEnv()}, pidFile
}

// newManager is a manager of specs whose state file is in a temporary
// folder; Stop runs at the end of the test.
func newManager(t *testing.T, specs []Spec, o Options) *Manager {
	t.Helper()
	if o.StatePath == "" {
		o.StatePath = filepath.Join(t.TempDir(), StateFile)
	}
	o.Stdio.KillAfter = 300 * time.Millisecond
	m, err := New(specs, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(nil) })
	return m
}

// TestLazyStartAndConflicts: listing the tools of two fixtures starts
// those two only (the third never runs: no pid), namespaces every tool and
// flags the names both have; a call routes to its server.
func TestLazyStartAndConflicts(t *testing.T) {
	a, pidA := fixture(t, "alpha")
	b, pidB := fixture(t, "beta")
	c, pidC := fixture(t, "gamma")
	m := newManager(t, []Spec{a, b, c}, Options{})
	for _, st := range m.Status() {
		if st.State != NotStarted {
			t.Fatalf("%s is %s before any use", st.Name, st.State)
		}
	}
	ctx := context.Background()
	entries, errs := m.Tools(ctx, "alpha", "beta")
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	seen := map[string]ToolEntry{}
	for _, e := range entries {
		seen[e.Name] = e
	}
	for _, name := range []string{"alpha/echo", "beta/echo", "alpha/add"} {
		e, ok := seen[name]
		if !ok {
			t.Fatalf("%s missing from %v", name, entries)
		}
		other := "beta"
		if e.Server == "beta" {
			other = "alpha"
		}
		if len(e.Conflicts) != 1 || e.Conflicts[0] != other {
			t.Errorf("%s: conflicts %v, want [%s]", name, e.Conflicts, other)
		}
	}
	if len(proctest.ReadPIDs(t, pidA)) == 0 || len(proctest.ReadPIDs(t, pidB)) == 0 {
		t.Fatal("alpha and beta did not run")
	}
	server, tool, err := m.Route("beta/echo")
	if err != nil || server != "beta" || tool != "echo" {
		t.Fatalf("route: %s %s %v", server, tool, err)
	}
	res, err := m.Call(ctx, server, tool, map[string]any{"value": "hi"}, client.CallOptions{})
	if err != nil || res.Result.IsError || res.ID == "" {
		t.Fatalf("call: %+v %v", res, err)
	}
	if _, _, err := m.Route("delta/echo"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("route to no server: %v", err)
	}
	if pids := proctest.ReadPIDs(t, pidC); len(pids) != 0 {
		t.Fatalf("gamma was never used but ran: pids %v", pids)
	}
	if st := m.Status()[2]; st.State != NotStarted {
		t.Fatalf("gamma: %s", st.State)
	}
}

// TestStopAbortsCallsBeforeClosing: calls in flight on two servers when the
// run is cancelled all settle (MCP_ABORTED with the user-cancel Reason,
// their execution uncertain: the fixture's tools are not read-only) before
// either server's stdin is closed or signalled; then both processes are
// gone, and no goroutine is left (TestMain's goleak).
func TestStopAbortsCallsBeforeClosing(t *testing.T) {
	a, _ := fixture(t, "alpha")
	b, _ := fixture(t, "beta")
	var mu sync.Mutex
	var log []string // "settled NAME" and "close NAME" in the order they happened
	var subs sync.WaitGroup
	m := newManager(t, []Spec{a, b}, Options{OnClient: func(name string, c *client.Client) {
		sub := c.Subscribe(1 << 12)
		subs.Go(func() {
			for ev := range sub.C {
				switch {
				case ev.Kind == client.EvRequest && ev.Req.Method == "tools/call" && ev.Req.State == client.StateCancelled:
					mu.Lock()
					log = append(log, "settled "+name)
					mu.Unlock()
				case ev.Kind == client.EvProcess && (ev.Proc.What == client.ProcSignal || ev.Proc.What == client.ProcExit):
					mu.Lock()
					log = append(log, "close "+name)
					mu.Unlock()
				}
			}
		})
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The tools first: then the requests pending below are the calls only.
	if _, errs := m.Tools(ctx); len(errs) != 0 {
		t.Fatal(errs)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, name := range []string{"alpha", "beta", "alpha", "beta"} {
		wg.Go(func() {
			_, err := m.Call(ctx, name, "echo", map[string]any{"value": "slow", "delay_ms": 20000}, client.CallOptions{})
			errs <- err
		})
	}
	// Wait until all four are in flight.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		n := len(m.calls)
		m.mu.Unlock()
		ready := 0
		for _, st := range m.Status() {
			if st.State == Ready {
				ready++
			}
		}
		if n == 4 && ready == 2 && pendingOn(m, "alpha") == 2 && pendingOn(m, "beta") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the calls did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	m.Stop(&Reason{Kind: UserCancel, Detail: "test"})
	wg.Wait()
	close(errs)
	for err := range errs {
		var ce *CallError
		if !errors.As(err, &ce) || !errors.Is(err, client.ErrAborted) || ce.Reason == nil || ce.Reason.Kind != UserCancel || !ce.Reason.Deliberate() {
			t.Fatalf("call after Stop: %v (%+v)", err, ce)
		}
		if !ce.Uncertain || !strings.Contains(err.Error(), "execution uncertain") {
			t.Errorf("a cancelled call of a tool with side effects must say its execution is uncertain: %v", err)
		}
	}
	subs.Wait()
	mu.Lock()
	defer mu.Unlock()
	settled, firstClose := 0, -1
	for i, e := range log {
		if strings.HasPrefix(e, "settled") {
			settled++
			if firstClose >= 0 {
				t.Fatalf("a call settled after a server was being closed: %v", log)
			}
		} else if firstClose < 0 {
			firstClose = i
		}
	}
	if settled != 4 || firstClose < 0 {
		t.Fatalf("want 4 settled then closes: %v", log)
	}
	if _, err := m.Client(context.Background(), "alpha"); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("use after Stop: %v", err)
	}
}

func pendingOn(m *Manager, name string) int {
	m.mu.Lock()
	c := m.servers[name].client
	m.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.Pending()
}

// TestBudgetStopReason: a call whose context's deadline passes is stopped
// as a budget stop (deliberate), not counted as the server's failure.
func TestBudgetStopReason(t *testing.T) {
	a, _ := fixture(t, "alpha")
	m := newManager(t, []Spec{a}, Options{})
	if _, err := m.ListTools(context.Background(), "alpha"); err != nil { // started before the budget runs
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := m.Call(ctx, "alpha", "echo", map[string]any{"value": "x", "delay_ms": 20000}, client.CallOptions{})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Reason == nil || ce.Reason.Kind != BudgetStop || !errors.Is(err, client.ErrAborted) {
		t.Fatalf("got %v", err)
	}
	if st := m.Status()[0]; st.State != Ready || st.Failures != 0 {
		t.Fatalf("a budget stop counted against the server: %+v", st)
	}
}

// TestProcessFailureBacksOffThenHealthyResets: a server that crashes under
// a call fails it with the process-failure Reason and counts one failure;
// it is started again only by the next use after the backoff; once it
// stayed up HealthyAfter, its next failure counts from zero; two quick
// failures in a row quarantine it. HealthyAfter is 2 s, so that a restart
// and a crash stay well inside it on a loaded machine (with 400 ms they
// had little room); the wait past it is only ever longer than asked.
func TestProcessFailureBacksOffThenHealthyResets(t *testing.T) {
	a, pids := fixture(t, "alpha")
	m := newManager(t, []Spec{a}, Options{Policy: Policy{BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond, MaxFailures: 2, HealthyAfter: 2 * time.Second}})
	ctx := context.Background()
	crash := func() error {
		_, err := m.Call(ctx, "alpha", "crash", map[string]any{}, client.CallOptions{})
		return err
	}
	err := crash()
	var ce *CallError
	if !errors.As(err, &ce) || ce.Reason == nil || ce.Reason.Kind != ProcessFailure || !errors.Is(err, client.ErrProcessExit) || !ce.Uncertain {
		t.Fatalf("crash: %v", err)
	}
	waitState(t, m, BackingOff, 1)
	if n := len(proctest.ReadPIDs(t, pids)); n != 1 {
		t.Fatalf("restarted without a use: %d starts", n)
	}
	// The next use starts it again (after the backoff); it stays up past
	// HealthyAfter, so the next crash counts as the first again.
	if _, err := m.Client(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	_ = crash()
	waitState(t, m, BackingOff, 1)
	// At once again: the second failure in a row quarantines it.
	_ = crash()
	waitState(t, m, Quarantined, 2)
	if _, err := m.Client(ctx, "alpha"); !errors.Is(err, ErrQuarantined) {
		t.Fatalf("quarantined server: %v", err)
	}
	if n := len(proctest.ReadPIDs(t, pids)); n != 3 {
		t.Fatalf("want 3 starts, got %d", n)
	}
}

// waitState waits until the first server is in state want with that many
// failures; backing off also accepts failed (the backoff may be over by
// the time the state is read).
func waitState(t *testing.T, m *Manager, want State, failures int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := m.Status()[0]
		if (st.State == want || want == BackingOff && st.State == Failed) && st.Failures == failures {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %s with %d failures, want %s with %d", st.State, st.Failures, want, failures)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFloodStopsServer: past the flood limit the server is stopped, the
// call fails with MCP_FLOOD (a protocol violation, a process failure),
// its execution uncertain.
func TestFloodStopsServer(t *testing.T) {
	a, _ := fixture(t, "alpha", "--fault", "notification-flood", "--flood-count", "5000")
	m := newManager(t, []Spec{a}, Options{Client: client.Options{Flood: client.FloodLimit{PerSecond: 1000}}})
	_, err := m.Call(context.Background(), "alpha", "echo", map[string]any{"value": "x"}, client.CallOptions{})
	var ce *CallError
	if !errors.As(err, &ce) || !errors.Is(err, client.ErrFlood) || !errors.Is(err, client.ErrProtocol) || ce.Reason == nil || ce.Reason.Kind != ProcessFailure || !ce.Uncertain {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "more than 1000 notifications within one second") {
		t.Errorf("message: %v", err)
	}
	waitState(t, m, BackingOff, 1)
}

// TestReportLeaksNoArguments: the report of a failed call whose server
// echoes its argument into the error and stderr holds the server's
// identity, hash, protocol, method, id, phase and code, and not the
// secret; asked for, the arguments come with their values redacted.
func TestReportLeaksNoArguments(t *testing.T) {
	const secret = "hunter2-sk-0123456789"
	a, _ := fixture(t, "alpha")
	m := newManager(t, []Spec{a}, Options{})
	args := map[string]any{"message": "token " + secret}
	_, err := m.Call(context.Background(), "alpha", "fail", args, client.CallOptions{})
	if !errors.Is(err, client.ErrRemote) || !strings.Contains(err.Error(), secret) {
		t.Fatalf("the fixture should echo the message in its error: %v", err)
	}
	for _, withArgs := range []bool{false, true} {
		r := m.Report(err, args, ReportOptions{Arguments: withArgs})
		b, _ := json.Marshal(r)
		var text strings.Builder
		r.WriteText(&text)
		for _, out := range []string{string(b), text.String()} {
			if strings.Contains(out, secret) || strings.Contains(out, "hunter2") {
				t.Fatalf("the report leaks the argument: %s", out)
			}
		}
		if r.Server != "alpha" || r.Hash != Hash(a) || r.Identity == "" || r.Protocol == "" || r.Method != "tools/call" ||
			r.Tool != "fail" || r.ID == "" || r.Phase != "call" || r.Code != "MCP_ERROR" || r.RPCCode == nil || r.DurationMS <= 0 {
			t.Fatalf("report: %s", b)
		}
		if withArgs != (len(r.Arguments) > 0) {
			t.Fatalf("arguments (asked %v): %s", withArgs, r.Arguments)
		}
		if withArgs && string(r.Arguments) != `{"message":"«redacted»"}` {
			t.Fatalf("arguments: %s", r.Arguments)
		}
	}
	path := filepath.Join(t.TempDir(), ReportFile)
	if err := WriteReport(path, m.Report(err, args, ReportOptions{})); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(path)
	if err != nil || back.Server != "alpha" {
		t.Fatalf("read back: %+v %v", back, err)
	}
}

// TestReportOfCrash: a crash's report has the exit status, the
// process-failure reason and the uncertainty.
func TestReportOfCrash(t *testing.T) {
	a, _ := fixture(t, "alpha")
	m := newManager(t, []Spec{a}, Options{})
	_, err := m.Call(context.Background(), "alpha", "crash", map[string]any{}, client.CallOptions{})
	r := m.Report(err, nil, ReportOptions{})
	if r == nil || r.Code != "MCP_PROCESS_EXIT" || r.Exit != "exit code 3" || r.Reason == "" || !r.Uncertain {
		t.Fatalf("report: %+v", r)
	}
	// The server's own report: its last failure, the exit.
	waitState(t, m, BackingOff, 1)
	sr := m.ServerReport("alpha")
	if sr == nil || sr.Phase != "exit" || sr.Code != "MCP_PROCESS_EXIT" || sr.Exit != "exit code 3" || sr.Method != "" || sr.Hash != Hash(a) {
		t.Fatalf("server report: %+v", sr)
	}
	if m.ServerReport("nope") != nil {
		t.Fatal("a report for no server")
	}
}

// TestHashCoversConfigAndBinary: the hash changes with the command, an
// argument, an environment variable's name and the executable's content,
// and not with an environment variable's value.
func TestHashCoversConfigAndBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "server")
	write := func(s string) {
		if err := os.WriteFile(exe, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("#!/bin/sh\n")
	base := Spec{Name: "s", Argv: []string{exe, "--a"}, Env: []string{"TOKEN=one"}}
	h := Hash(base)
	same := base
	same.Env = []string{"TOKEN=two"}
	if Hash(same) != h {
		t.Error("an env value changed the hash")
	}
	for name, s := range map[string]Spec{
		"arg":      {Name: "s", Argv: []string{exe, "--b"}, Env: base.Env},
		"env name": {Name: "s", Argv: base.Argv, Env: []string{"OTHER=one"}},
		"cwd":      {Name: "s", Argv: base.Argv, Env: base.Env, Cwd: dir},
	} {
		if Hash(s) == h {
			t.Errorf("%s: same hash", name)
		}
	}
	write("#!/bin/sh\necho changed\n")
	if Hash(base) == h {
		t.Error("a changed binary kept the hash")
	}
}

// TestStoppedByCallerIsNoFailure: a server its user stops (the UI's
// restart: StopServer, then Close) is no failure; the next use starts a
// new process at once.
func TestStoppedByCallerIsNoFailure(t *testing.T) {
	a, pids := fixture(t, "alpha")
	m := newManager(t, []Spec{a}, Options{})
	ctx := context.Background()
	c, err := m.Client(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	c.StopServer()
	c.Close()
	c2, err := m.Client(ctx, "alpha")
	if err != nil || c2 == c {
		t.Fatalf("restart: %v (same client: %v)", err, c2 == c)
	}
	if st := m.Status()[0]; st.State != Ready || st.Failures != 0 {
		t.Fatalf("a stop by the caller counted: %+v", st)
	}
	if n := len(proctest.ReadPIDs(t, pids)); n != 2 {
		t.Fatalf("want 2 starts, got %d", n)
	}
}

// TestStopEndsAStart: Stop during a start that hangs (initialize never
// answered) ends it at once with Stop's reason, counts no failure, and
// leaves nothing running.
func TestStopEndsAStart(t *testing.T) {
	a, pids := fixture(t, "alpha", "--fault", "no-initialize-response")
	m := newManager(t, []Spec{a}, Options{})
	done := make(chan error, 1)
	go func() {
		_, err := m.Client(context.Background(), "alpha")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(proctest.ReadPIDs(t, pids)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	m.Stop(&Reason{Kind: BudgetStop, Detail: "test"})
	err := <-done
	var r *Reason
	if !errors.Is(err, client.ErrAborted) || !errors.As(err, &r) || r.Kind != BudgetStop {
		t.Fatalf("start under Stop: %v", err)
	}
	if st := m.Status()[0]; st.Failures != 0 {
		t.Fatalf("a stop counted as a failure: %+v", st)
	}
}

// TestHashCacheSameAsHash: the manager's hashes (one read per shared
// executable) are Hash's.
func TestHashCacheSameAsHash(t *testing.T) {
	specs := []Spec{{Name: "a", Argv: []string{os.Args[0], "x"}}, {Name: "b", Argv: []string{os.Args[0], "y"}}, {Name: "c", Argv: []string{"no-such-exe-here"}}, {Name: "d", URL: "http://127.0.0.1:1/mcp"}}
	m, err := New(specs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop(nil)
	for i, st := range m.Status() {
		if st.Hash != Hash(specs[i]) {
			t.Errorf("%s: %s, Hash says %s", st.Name, st.Hash, Hash(specs[i]))
		}
	}
}

// TestRunningToolsStartsNothing: the tools of the running servers only,
// aggregated; the others never start.
func TestRunningToolsStartsNothing(t *testing.T) {
	a, _ := fixture(t, "alpha")
	b, pidB := fixture(t, "beta")
	m := newManager(t, []Spec{a, b}, Options{})
	if entries, errs := m.RunningTools(context.Background()); len(entries) != 0 || len(errs) != 0 {
		t.Fatalf("nothing runs: %v %v", entries, errs)
	}
	if _, err := m.Client(context.Background(), "alpha"); err != nil {
		t.Fatal(err)
	}
	entries, errs := m.RunningTools(context.Background())
	if len(errs) != 0 || len(entries) != 9 || entries[0].Name != "alpha/echo" || len(entries[0].Conflicts) != 0 {
		t.Fatalf("alpha's tools: %v %v", entries, errs)
	}
	if n := len(proctest.ReadPIDs(t, pidB)); n != 0 {
		t.Fatalf("beta started %d times", n)
	}
}
