package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/internal/proctest"
	"github.com/sonde-mcp/sonde/transport"
)

// One test per fixture fault (docs/fixtures.md), each against the fixture as
// a real subprocess.

var echoX = json.RawMessage(`{"name":"echo","arguments":{"value":"x"}}`)

func TestFault_NeverRespond(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	for i := 0; i < 20; i++ {
		if _, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{Timeout: 50 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if st := s.c.Stats(); st.Timeouts != 20 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestFault_ExitMidCall(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"exit-mid-call"}})
	s.init()
	_, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{})
	if !errors.Is(err, ErrProcessExit) {
		t.Fatalf("got %v", err)
	}
	ev := s.waitFor("exit event", func(ev Event) bool { return ev.Kind == EvProcess && ev.Proc.What == ProcExit })
	if ev.Proc.Exit.Code != 3 || ev.Proc.Exit.ByClose {
		t.Fatalf("exit %+v", ev.Proc.Exit)
	}
}

func TestFault_StdoutNoise(t *testing.T) {
	t.Run("lenient", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{faults: []string{"stdout-noise"}})
		s.init()
		if _, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{}); err != nil {
			t.Fatal(err)
		}
		f := s.waitFor("noise frame", isFrame(VerdictMalformed, "servers must log to stderr")).Frame
		if string(f.Raw) != "fixture noise: this is not JSON" {
			t.Fatalf("raw bytes not kept: %q", f.Raw)
		}
	})
	t.Run("strict", func(t *testing.T) {
		s := start(t, Options{Strict: true}, fixtureArgs{faults: []string{"stdout-noise"}})
		_, err := s.c.Initialize(context.Background())
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "--strict") {
			t.Fatalf("got %v", err)
		}
		<-s.c.Done()
		if _, err := s.c.Call(context.Background(), "ping", nil, CallOptions{}); !errors.Is(err, ErrProtocol) {
			t.Fatalf("after corruption: %v", err)
		}
	})
}

func TestFault_HugeLine(t *testing.T) {
	s := start(t, Options{MaxLineBytes: 256 << 10}, fixtureArgs{faults: []string{"huge-line"}})
	s.init()
	other := s.c.Go(context.Background(), "ping", nil, CallOptions{Timeout: time.Minute})
	_, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{})
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "262144 bytes") {
		t.Fatalf("got %v", err)
	}
	// The session is closed: everything pending failed, the process is gone.
	if _, err := other.Wait(); err == nil {
		// the ping may have been answered before the huge line started
		t.Log("ping answered before the huge line")
	}
	<-s.c.Done()
	f := s.waitFor("too-long frame", isFrame(VerdictTooLong, "exceeds")).Frame
	if len(f.Raw) == 0 || len(f.Raw) > 4096 {
		t.Fatalf("prefix of %d bytes", len(f.Raw))
	}
}

func TestFault_ResultAndError(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"result-and-error"}})
	s.init()
	_, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{})
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "both result and error") {
		t.Fatalf("got %v", err)
	}
	// Only that request failed; the session goes on.
	if err := s.c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFault_DuplicateResponse(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"duplicate-response"}})
	s.init()
	call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{})
	if _, err := call.Wait(); err != nil {
		t.Fatal(err)
	}
	f := s.waitFor("duplicate frame", isFrame(VerdictDuplicate, "second response")).Frame
	if f.Msg.ID != call.ID {
		t.Fatalf("duplicate for %s, want %s", f.Msg.ID, call.ID)
	}
	if st := s.c.Stats(); st.Resolved != 2 || st.Duplicate != 1 { // initialize + the call
		t.Fatalf("stats %+v", st)
	}
}

func TestFault_StringID(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"string-id"}})
	s.init()
	call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{Timeout: 300 * time.Millisecond})
	if _, err := call.Wait(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a response with id %q must not settle integer id %s: got %v", call.ID.String(), call.ID, err)
	}
	f := s.waitFor("unknown frame", isFrame(VerdictUnknown, "is a string; sonde sent the integer")).Frame
	if !f.Msg.ID.IsString() {
		t.Fatalf("id %s", f.Msg.ID)
	}
}

func TestFault_UnknownID(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"unknown-id"}})
	s.init()
	if _, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitFor("unknown frame", isFrame(VerdictUnknown, "was never sent"))
}

func TestFault_NonObjectJSON(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"non-object-json"}})
	s.init()
	if _, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitUntil("three not-object frames", func(evs []Event) bool {
		n := 0
		for _, ev := range evs {
			if ev.Kind == EvFrame && ev.Frame.Verdict == VerdictMalformed && strings.Contains(ev.Frame.Detail, "not an object") {
				n++
			}
		}
		return n == 3
	})
}

func TestFault_IgnoreSigterm(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"ignore-sigterm"}})
	s.init()
	s.c.Close() // must escalate to SIGKILL; the cleanup proves the pid is gone
	ev := s.waitFor("exit", func(ev Event) bool { return ev.Kind == EvProcess && ev.Proc.What == ProcExit })
	if ev.Proc.Exit.Signal != "SIGKILL" || !ev.Proc.Exit.ByClose {
		t.Fatalf("exit %+v", ev.Proc.Exit)
	}
	var sigs []string
	for _, ev := range s.snapshot() {
		if ev.Kind == EvProcess && ev.Proc.What == ProcSignal {
			sigs = append(sigs, ev.Proc.Signal)
		}
	}
	if strings.Join(sigs, ",") != "SIGTERM,SIGKILL" {
		t.Fatalf("signals sent: %v", sigs)
	}
}

func TestFault_GrandchildHoldsStdout(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"grandchild-holds-stdout"}})
	s.init()
	if err := s.c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.c.Close() // the fixture exits on stdin EOF; the grandchild must not survive or hang Close
	if n := len(proctest.ReadPIDs(t, s.pidFile)); n != 2 {
		t.Fatalf("pid file lists %d pids, want fixture and grandchild", n)
	}
}

func TestFault_StderrFlood(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"stderr-flood"}, extra: []string{"--stderr-flood-bytes", "2000000"}, stderr: 4096})
	s.init()
	if _, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitUntil("a megabyte of stderr", func(evs []Event) bool { return len(stderrText(evs)) > 1000000 })
	s.c.Close()
	ev := s.waitFor("exit", func(ev Event) bool { return ev.Kind == EvProcess && ev.Proc.What == ProcExit })
	x := ev.Proc.Exit
	if len(x.Stderr) > 4096 || len(x.Stderr) < 4090 || !utf8.Valid(x.Stderr) {
		t.Fatalf("tail of %d bytes (valid UTF-8: %v)", len(x.Stderr), utf8.Valid(x.Stderr))
	}
	if total := int64(len(stderrText(s.snapshot()))); x.StderrDropped != total-int64(len(x.Stderr)) || x.StderrDropped < 1000000 {
		t.Fatalf("dropped %d of %d", x.StderrDropped, total)
	}
}

func TestFault_NoInitializeResponse(t *testing.T) {
	s := start(t, Options{Timeout: 200 * time.Millisecond}, fixtureArgs{faults: []string{"no-initialize-response"}})
	_, err := s.c.Initialize(context.Background())
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "initialize") {
		t.Fatalf("got %v", err)
	}
	// initialize must never be cancelled on the wire.
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.Method == "notifications/cancelled" {
			t.Fatal("sent notifications/cancelled for initialize")
		}
	}
	if _, err := s.c.Call(context.Background(), "tools/list", nil, CallOptions{}); !errors.Is(err, ErrHandshake) {
		t.Fatalf("tools/list before the handshake: %v", err)
	}
}

func TestFault_StopReadingStdin(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"stop-reading-stdin"}})
	s.init()
	// Enough bytes to fill the pipe: later requests are still queued when
	// their deadline passes.
	big := json.RawMessage(`{"name":"echo","arguments":{"value":"` + strings.Repeat("z", 64<<10) + `"}}`)
	var calls []*Call
	for i := 0; i < 16; i++ {
		calls = append(calls, s.c.Go(context.Background(), "tools/call", big, CallOptions{Timeout: 300 * time.Millisecond}))
	}
	for _, call := range calls {
		if _, err := call.Wait(); !errors.Is(err, ErrTimeout) {
			t.Fatalf("got %v", err)
		}
	}
	// Requests settled while queued were never written.
	written := map[string]bool{}
	for _, f := range s.frames(VerdictSent) {
		written[f.Msg.ID.String()] = true
	}
	unwritten := 0
	for _, call := range calls {
		if !written[call.ID.String()] {
			unwritten++
		}
	}
	if unwritten == 0 {
		t.Fatal("every request was written although the server stopped reading")
	}
	s.c.Close()
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.ID.IsValid() && !written[f.Msg.ID.String()] {
			t.Fatalf("request %s was written after it settled", f.Msg.ID)
		}
	}
}

func TestFault_ServerPing(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"server-ping"}})
	s.init()
	s.waitUntil("both answers logged by the fixture", func(evs []Event) bool {
		text := stderrText(evs)
		return strings.Contains(text, `id="srv-1" result={}`) && strings.Contains(text, "id=7 error=") && strings.Contains(text, "-32601")
	})
	var answered []string
	for _, ev := range s.snapshot() {
		if ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.State == StateAnswered {
			answered = append(answered, ev.Req.ID.String()+" "+ev.Req.Method)
		}
	}
	if strings.Join(answered, ",") != `"srv-1" ping,7 sampling/createMessage` {
		t.Fatalf("answered %v", answered)
	}
}

func TestFault_NotificationFlood(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"notification-flood"}, extra: []string{"--flood-count", "5000"}})
	slow := s.c.Subscribe(8) // never drained: a consumer that fell behind
	s.init()
	if _, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitUntil("5000 notification frames", func([]Event) bool { return len(s.frames(VerdictNotification)) >= 5000 })
	if n := len(s.frames(VerdictNotification)); n != 5000 {
		t.Fatalf("%d notification frames, want 5000", n)
	}
	if slow.Missed() < 5000 {
		t.Fatalf("slow consumer missed %d", slow.Missed())
	}
	slow.Close()
}

func TestFault_LateResponse(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"late-response"}, extra: []string{"--late-ms", "400"}})
	s.init()
	call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{Timeout: 100 * time.Millisecond})
	if _, err := call.Wait(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	f := s.waitFor("late frame", isFrame(VerdictLate, "after it ended (timeout)")).Frame
	if f.Msg.ID != call.ID {
		t.Fatalf("late frame for %s", f.Msg.ID)
	}
	// It says how long after the deadline it came, and the --timeout that
	// would have been enough.
	l := f.Late
	if l == nil || l.ID != call.ID || l.Method != "tools/call" || l.Latency < 400*time.Millisecond || l.Enough <= l.Latency ||
		l.AfterDeadline <= 0 || l.AfterDeadline > l.Latency-100*time.Millisecond {
		t.Fatalf("late %+v", l)
	}
	if !strings.Contains(f.Detail, "; would have succeeded "+rd(l.AfterDeadline)+" after the deadline (--timeout "+l.Enough.String()+" would have been enough)") {
		t.Fatalf("detail %q", f.Detail)
	}
	// A later call gets its own answer, never the late one.
	if r, _, err := s.c.CallTool(context.Background(), "add", json.RawMessage(`{"a":1,"b":1}`), CallOptions{Timeout: 5 * time.Second}); err != nil || r.Content[0].Text != "2" {
		t.Fatalf("%+v %v", r, err)
	}
}

// TestFault_UndecodableResponse: a response that is not JSON but whose id
// reads well settles its request at once with MCP_PROTOCOL, not at its
// deadline; a real response after it is a duplicate; an id that is not
// pending (a string id) settles nothing.
func TestFault_UndecodableResponse(t *testing.T) {
	t.Run("fails fast", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{faults: []string{"undecodable-response"}})
		s.init()
		call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{Timeout: time.Minute})
		_, err := call.Wait()
		n, _ := call.ID.Int64()
		want := "tools/call " + idText(n) + ": the response to " + idText(n) + " could not be decoded: line is not valid JSON"
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want MCP_PROTOCOL %q", err, want)
		}
		f := s.waitFor("malformed frame", isFrame(VerdictMalformed, "settles "+idText(n)+" with MCP_PROTOCOL")).Frame
		if !strings.Contains(string(f.Raw), "\x00") {
			t.Fatalf("raw bytes not kept: %q", f.Raw)
		}
		if st := s.c.Stats(); st.Pending != 0 || st.Failed != 1 || st.Malformed != 1 {
			t.Fatalf("stats %+v", st)
		}
		// Only that request failed; the session goes on.
		if err := s.c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("real response after it", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{faults: []string{"undecodable-response", "duplicate-response"}})
		s.init()
		call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{Timeout: time.Minute})
		if _, err := call.Wait(); !errors.Is(err, ErrProtocol) {
			t.Fatalf("got %v", err)
		}
		f := s.waitFor("duplicate frame", isFrame(VerdictDuplicate, "second response")).Frame
		if f.Msg.ID != call.ID {
			t.Fatalf("duplicate for %s, want %s", f.Msg.ID, call.ID)
		}
		if st := s.c.Stats(); st.Pending != 0 || st.Failed != 1 || st.Duplicate != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("id not pending", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{faults: []string{"undecodable-response", "string-id"}})
		s.init()
		_, err := s.c.Call(context.Background(), "tools/call", echoX, CallOptions{Timeout: 300 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("got %v", err)
		}
		f := s.waitFor("malformed frame", isFrame(VerdictMalformed, "not valid JSON")).Frame
		if strings.Contains(f.Detail, "settles") {
			t.Fatalf("detail %q", f.Detail)
		}
	})
}
