package client

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/internal/proctest"
	"github.com/sonde-mcp/sonde/transport"
)

func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

// session is a client connected to the fixture running as a real
// subprocess, with every event recorded.
type session struct {
	t       *testing.T
	c       *Client
	pidFile string

	mu      sync.Mutex
	events  []Event
	lastSeq uint64 // Seq of the latest event collected
	notify  chan struct{}
	done    chan struct{}
}

type fixtureArgs struct {
	faults []string
	extra  []string
	stderr int
}

// fixtureArgv is fixturetest.Argv with fa's faults and extra arguments.
func fixtureArgv(t testing.TB, fa fixtureArgs) (argv []string, pidFile string) {
	var args []string
	for _, f := range fa.faults {
		args = append(args, "--fault", f)
	}
	return fixturetest.Argv(t, append(args, fa.extra...)...)
}

// start launches the fixture with the given faults and connects a client.
// Cleanup closes the client, then checks that nothing is pending and no
// fixture process (nor grandchild) is left.
func start(t *testing.T, opts Options, fa fixtureArgs) *session {
	t.Helper()
	env, err := transport.BuildEnv(os.Environ(), nil, fixturetest.ChildEnv())
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-in first-out: Argv's check runs after the session's close.
	argv, pidFile := fixtureArgv(t, fa)
	cfg := transport.StdioConfig{Argv: argv, Env: env, KillAfter: 300 * time.Millisecond, StderrBytes: fa.stderr, MaxLineBytes: opts.MaxLineBytes}
	s := connectSession(t, opts, cfg)
	s.pidFile = pidFile
	return s
}

// connectSession connects a client to the server of cfg and records every
// event. Its cleanup closes the client and checks that nothing is pending and the server's process
// is gone.
func connectSession(t *testing.T, opts Options, cfg transport.StdioConfig) *session {
	t.Helper()
	return dialSession(t, opts, Stdio(cfg))
}

// dialSession connects with dial and records the session's events; the
// cleanup closes it and checks that nothing is left pending or running.
func dialSession(t *testing.T, opts Options, dial Dialer) *session {
	t.Helper()
	s := &session{t: t, notify: make(chan struct{}, 1), done: make(chan struct{})}
	s.c = New(opts)
	go s.collect(s.c.Subscribe(1 << 20))
	if err := s.c.Connect(dial); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.c.Close()
		<-s.done
		if n := s.c.Pending(); n != 0 {
			t.Errorf("%d requests still pending after Close", n)
		}
		for _, ev := range s.snapshot() {
			if ev.Kind == EvProcess && ev.Proc.What == ProcStart && proctest.Alive(ev.Proc.Pid) {
				t.Errorf("server pid %d still running", ev.Proc.Pid)
			}
		}
	})
	return s
}

func (s *session) collect(sub *Subscription) {
	defer close(s.done)
	for ev := range sub.C {
		s.mu.Lock()
		s.events = append(s.events, ev)
		s.lastSeq = ev.Seq
		s.mu.Unlock()
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

// init runs the handshake or fails the test.
func (s *session) init() {
	s.t.Helper()
	if _, err := s.c.Initialize(context.Background()); err != nil {
		s.t.Fatal(err)
	}
}

// snapshot returns every event the client emitted before the call: the
// collector runs in its own goroutine, so it first waits until the collector
// has caught up with the client's latest Seq (a Client's hub never leaves
// gaps), or the stream ended.
func (s *session) snapshot() []Event {
	s.c.hub.emitMu.Lock()
	target := s.c.hub.seq
	s.c.hub.emitMu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		if s.lastSeq >= target || time.Now().After(deadline) {
			defer s.mu.Unlock()
			return append([]Event(nil), s.events...)
		}
		s.mu.Unlock()
		select {
		case <-s.done:
			s.mu.Lock()
			defer s.mu.Unlock()
			return append([]Event(nil), s.events...)
		case <-time.After(time.Millisecond):
		}
	}
}

// waitUntil waits until cond holds for the events so far (the bound only
// guards against a hang; it is not a speed claim).
func (s *session) waitUntil(what string, cond func([]Event) bool) {
	s.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if cond(s.snapshot()) {
			return
		}
		select {
		case <-s.notify:
		case <-s.done:
			if !cond(s.snapshot()) {
				s.t.Fatalf("event stream ended without %s", what)
			}
			return
		case <-deadline:
			s.t.Fatalf("no %s within 10s", what)
		}
	}
}

// waitFor waits for one event satisfying pred and returns it.
func (s *session) waitFor(what string, pred func(Event) bool) Event {
	s.t.Helper()
	var found Event
	s.waitUntil(what, func(evs []Event) bool {
		for _, ev := range evs {
			if pred(ev) {
				found = ev
				return true
			}
		}
		return false
	})
	return found
}

// stderrText is everything the server wrote on stderr so far.
func stderrText(evs []Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == EvStderr {
			b.Write(ev.Stderr)
		}
	}
	return b.String()
}

// frames returns the frame events with the given verdict.
func (s *session) frames(v Verdict) []*FrameInfo {
	var out []*FrameInfo
	for _, ev := range s.snapshot() {
		if ev.Kind == EvFrame && ev.Frame.Verdict == v {
			out = append(out, ev.Frame)
		}
	}
	return out
}

func isFrame(v Verdict, detail string) func(Event) bool {
	return func(ev Event) bool {
		return ev.Kind == EvFrame && ev.Frame.Verdict == v && strings.Contains(ev.Frame.Detail, detail)
	}
}

func echoArgs(value string, delayMS int) []byte {
	return []byte(`{"value":"` + value + `","delay_ms":` + strconv.Itoa(delayMS) + `}`)
}

// sawHTTP reports whether an HTTP event matching ok was recorded.
func (s *session) sawHTTP(ok func(*transport.HTTPEvent) bool) bool {
	for _, ev := range s.snapshot() {
		if ev.Kind == EvHTTP && ok(ev.HTTP) {
			return true
		}
	}
	return false
}
