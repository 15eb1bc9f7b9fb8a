package client

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// timeoutSnapshot makes one tools/call time out and returns its snapshot.
func timeoutSnapshot(t *testing.T, s *session, params json.RawMessage, timeout time.Duration) *Snapshot {
	t.Helper()
	_, err := s.c.Call(context.Background(), "tools/call", params, CallOptions{Timeout: timeout})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want MCP_TIMEOUT", err)
	}
	snap := TimeoutSnapshot(err)
	if snap == nil {
		t.Fatalf("MCP_TIMEOUT without a snapshot: %v", err)
	}
	if !strings.Contains(err.Error(), snap.Summary()) {
		t.Fatalf("message %q lacks the snapshot's summary %q", err, snap.Summary())
	}
	t.Logf("%s\n%s", err, strings.Join(snap.Lines(), "\n"))
	return snap
}

// The fixture's faults against one client each: the snapshot tells a
// server that stopped reading (blocked) from one that computes (busy) and
// one that waits (sleeping).
func TestSnapshotKinds(t *testing.T) {
	if _, err := transport.StatGroup(1); errors.Is(err, transport.ErrStatUnsupported) {
		t.Skip(err)
	}
	t.Run("sleeping", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
		s.init()
		snap := timeoutSnapshot(t, s, echoX, 1500*time.Millisecond)
		if snap.Kind != SnapSleeping || snap.Written != "written" || snap.Sent.IsZero() {
			t.Fatalf("kind %s, written %q", snap.Kind, snap.Written)
		}
		// never-respond says so on stderr: written after the request.
		if snap.StderrBytes == 0 || !strings.Contains(string(snap.Stderr), "never-respond") || snap.LastStderr.Before(snap.Queued) {
			t.Fatalf("stderr since the request: %d bytes %q, last at %v", snap.StderrBytes, snap.Stderr, snap.LastStderr)
		}
		if len(snap.Procs) == 0 || snap.Procs[0].State != transport.ProcSleeping || snap.CPUWindow < time.Second { // the CPU baseline is read a little after the request is sent
			t.Fatalf("procs %+v, CPU %v in %v", snap.Procs, snap.CPU, snap.CPUWindow)
		}
		if snap.Progress != 0 || snap.LastStdout.After(snap.Queued) {
			t.Fatalf("progress %d, last stdout %v (queued %v)", snap.Progress, snap.LastStdout, snap.Queued)
		}
	})
	t.Run("busy", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{faults: []string{"burn-cpu"}})
		s.init()
		snap := timeoutSnapshot(t, s, echoX, 1500*time.Millisecond)
		// On a loaded machine the server gets little CPU but waits for it.
		if snap.Kind != SnapBusy || snap.CPU+snap.CPUWait < 300*time.Millisecond {
			t.Fatalf("kind %s, CPU %v in %v", snap.Kind, snap.CPU, snap.CPUWindow)
		}
	})
	t.Run("blocked", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{faults: []string{"stop-reading-stdin"}})
		s.init()
		// More than a pipe holds: the write cannot finish.
		big := json.RawMessage(`{"name":"echo","arguments":{"value":"` + strings.Repeat("z", 1<<20) + `"}}`)
		snap := timeoutSnapshot(t, s, big, 800*time.Millisecond)
		if snap.Kind != SnapBlocked || snap.Written != "blocked" || snap.BlockedFor < 400*time.Millisecond {
			t.Fatalf("kind %s, written %q, blocked for %v", snap.Kind, snap.Written, snap.BlockedFor)
		}
		// A request queued behind the stuck write is blocked too, never written.
		snap = timeoutSnapshot(t, s, echoX, 500*time.Millisecond)
		if snap.Kind != SnapBlocked || snap.Written != "queued" {
			t.Fatalf("kind %s, written %q", snap.Kind, snap.Written)
		}
	})
}

// TestSnapshotClassify covers what a live fixture cannot show on demand: a
// server process found gone at the deadline (on stdio its exit usually
// ends the request first, with MCP_PROCESS_EXIT), a stopped one, HTTP, and
// an OS that does not report.
func TestSnapshotClassify(t *testing.T) {
	at := time.Now()
	base := Snapshot{At: at, Queued: at.Add(-time.Second), Written: "written", CPUWindow: time.Second}
	for _, c := range []struct {
		name string
		edit func(s *Snapshot)
		want SnapshotKind
	}{
		{"dead", func(s *Snapshot) { s.Procs = []ProcStat{{Pid: 9, State: transport.ProcGone}} }, SnapDead},
		{"zombie", func(s *Snapshot) { s.Procs = []ProcStat{{Pid: 9, State: transport.ProcZombie}} }, SnapDead},
		{"stopped", func(s *Snapshot) { s.Procs = []ProcStat{{Pid: 9, State: transport.ProcStopped}} }, SnapStopped},
		{"busy child", func(s *Snapshot) {
			s.Procs = []ProcStat{{Pid: 9, State: transport.ProcSleeping}, {Pid: 10, State: transport.ProcRunning}}
			s.CPU = 900 * time.Millisecond
		}, SnapBusy},
		{"busy, starved", func(s *Snapshot) {
			s.Procs = []ProcStat{{Pid: 9, State: transport.ProcRunning}}
			s.CPU, s.CPUWait = 20*time.Millisecond, 2*time.Second
		}, SnapBusy},
		{"idle, its wake-ups waited", func(s *Snapshot) {
			s.Procs = []ProcStat{{Pid: 9, State: transport.ProcSleeping}}
			s.CPUWait = 600 * time.Millisecond
		}, SnapSleeping},
		{"windows", func(s *Snapshot) { s.Procs = []ProcStat{{Pid: 9, State: transport.ProcUnknown}} }, SnapSleeping},
		{"no reading", func(s *Snapshot) { s.ProcErr = "not available" }, SnapUnknown},
		{"http no headers", func(s *Snapshot) { s.HTTP = &HTTPSnapshot{} }, SnapNoHeaders},
		{"http stream", func(s *Snapshot) { s.HTTP = &HTTPSnapshot{Status: 200, SSE: true, LastEvent: at.Add(-time.Second)} }, SnapStreamOpen},
		{"http json", func(s *Snapshot) { s.HTTP = &HTTPSnapshot{Status: 200} }, SnapUnknown},
	} {
		s := base
		c.edit(&s)
		if got := classify(&s, 0); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		s.Kind = c.want
		if b, err := json.Marshal(&s); err != nil || !strings.Contains(string(b), `"kind":"`+string(c.want)+`"`) {
			t.Errorf("%s: JSON %s %v", c.name, b, err)
		}
	}
}

func TestEnoughTimeout(t *testing.T) {
	for lat, want := range map[time.Duration]time.Duration{
		1234 * time.Millisecond: 1300 * time.Millisecond,
		1200 * time.Millisecond: 1300 * time.Millisecond,
		42 * time.Second:        43 * time.Second,
		10 * time.Millisecond:   100 * time.Millisecond,
	} {
		if got := enoughTimeout(lat); got != want {
			t.Errorf("enoughTimeout(%v) = %v, want %v", lat, got, want)
		}
	}
}

// TestSnapshotJSON: what MarshalJSON writes (--json, a capture's error
// record) reads back the same, to the millisecond.
func TestSnapshotJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 5, 0, time.UTC)
	s := &Snapshot{Kind: SnapBusy, At: at, Queued: at.Add(-5 * time.Second), Sent: at.Add(-4 * time.Second), Written: "written",
		LastStdout: at.Add(-5 * time.Second), LastStderr: at.Add(-time.Second), Progress: 2, LastProgress: at.Add(-2 * time.Second),
		StderrBytes: 12, Stderr: []byte("working…\n"), CPU: 4 * time.Second, CPUWait: 250 * time.Millisecond, CPUWindow: 5 * time.Second,
		Procs: []ProcStat{{Pid: 7, Name: "node", State: transport.ProcRunning, CPU: 9 * time.Second}},
		HTTP:  &HTTPSnapshot{Status: 200, Headers: at.Add(-4 * time.Second), SSE: true, LastEvent: at.Add(-2 * time.Second)}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, &back) {
		t.Fatalf("read back\n%+v\nwant\n%+v", back, *s)
	}
}

// TestSnapshotHTTP: over HTTP the snapshot says what became of the POST:
// headers that never came, or an event stream left open without the
// answer (its priming event the last).
func TestSnapshotHTTP(t *testing.T) {
	t.Run("stream open", func(t *testing.T) {
		s := dialSession(t, Options{}, HTTP(transport.HTTPConfig{URL: serveFixtureHTTP(t, "--fault", "never-respond"), Mode: transport.ModeStreamable}))
		s.init()
		snap := timeoutSnapshot(t, s, echoX, 600*time.Millisecond)
		h := snap.HTTP
		if snap.Kind != SnapStreamOpen || h == nil || h.Status != 200 || !h.SSE || h.StreamEnded || h.Headers.IsZero() || h.LastEvent.IsZero() || len(snap.Procs) != 0 {
			t.Fatalf("kind %s, http %+v, procs %v", snap.Kind, h, snap.Procs)
		}
	})
	t.Run("no headers", func(t *testing.T) {
		s := dialSession(t, Options{Timeout: 10 * time.Second}, HTTP(transport.HTTPConfig{URL: serveFixtureHTTP(t, "--fault", "http-slow-headers", "--late-ms", "1500"), Mode: transport.ModeStreamable}))
		s.init()
		snap := timeoutSnapshot(t, s, echoX, 500*time.Millisecond)
		if snap.Kind != SnapNoHeaders || snap.HTTP == nil || snap.HTTP.Status != 0 || snap.Written != "written" {
			t.Fatalf("kind %s, written %q, http %+v", snap.Kind, snap.Written, snap.HTTP)
		}
	})
}
