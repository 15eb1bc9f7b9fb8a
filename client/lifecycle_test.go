package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

func TestBusy(t *testing.T) {
	s := start(t, Options{MaxPending: 2}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	ctx := context.Background()
	a := s.c.Go(ctx, "tools/call", echoX, CallOptions{})
	b := s.c.Go(ctx, "tools/call", echoX, CallOptions{})
	c := s.c.Go(ctx, "tools/call", echoX, CallOptions{})
	select {
	case <-c.Done():
	default:
		t.Fatal("third request did not fail at once")
	}
	if _, err := c.Wait(); !errors.Is(err, ErrBusy) || c.ID.IsValid() {
		t.Fatalf("got %v (id %s)", err, c.ID)
	}
	s.c.Close()
	for _, call := range []*Call{a, b} {
		if _, err := call.Wait(); !errors.Is(err, ErrClosed) {
			t.Fatalf("pending at close: %v", err)
		}
	}
}

func TestConcurrentInitializeSharesOneExchange(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.c.Initialize(context.Background())
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.waitFor("ping frame", func(ev Event) bool { return ev.Kind == EvFrame && ev.Frame.Msg.Method == "ping" })
	n := 0
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.Method == "initialize" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d initialize requests sent", n)
	}
}

func TestCallBeforeInitialize(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{})
	_, _, err := s.c.CallTool(context.Background(), "echo", echoArgs("x", 0), CallOptions{})
	if !errors.Is(err, ErrHandshake) {
		t.Fatalf("got %v", err)
	}
	if err := s.c.Ping(context.Background()); err != nil { // ping is allowed before
		t.Fatal(err)
	}
}

func TestUnsupportedProtocolVersion(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{extra: []string{"--protocol-version", "1999-01-01"}})
	_, err := s.c.Initialize(context.Background())
	if !errors.Is(err, ErrHandshake) || !strings.Contains(err.Error(), "1999-01-01") || !strings.Contains(err.Error(), "2025-11-25") {
		t.Fatalf("got %v", err)
	}
}

func TestOlderProtocolVersionAccepted(t *testing.T) {
	s := start(t, Options{ProtocolVersion: "2024-11-05"}, fixtureArgs{})
	res, err := s.c.Initialize(context.Background())
	if err != nil || res.ProtocolVersion != "2024-11-05" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestSpawnErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  transport.StdioConfig
		want transport.SpawnReason
		msg  string
	}{
		{"missing", transport.StdioConfig{Argv: []string{"sonde-no-such-server-xyz"}}, transport.SpawnNotFound, "executable not found"},
		{"missing path", transport.StdioConfig{Argv: []string{filepath.Join(dir, "nope")}}, transport.SpawnNotFound, "executable not found"},
		{"permission", transport.StdioConfig{Argv: []string{notExec}}, transport.SpawnPermission, "permission denied"},
		{"bad dir", transport.StdioConfig{Argv: []string{os.Args[0]}, Dir: filepath.Join(dir, "nodir")}, transport.SpawnBadDir, "working directory"},
		{"empty", transport.StdioConfig{}, transport.SpawnBadConfig, "no server command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{})
			defer c.Close()
			err := c.Connect(Stdio(tt.cfg))
			var se *transport.SpawnError
			if !errors.Is(err, ErrSpawn) || !errors.As(err, &se) || se.Reason != tt.want || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v", err)
			}
			if _, err := c.Call(context.Background(), "ping", nil, CallOptions{}); !errors.Is(err, ErrSpawn) {
				t.Fatalf("call after failed spawn: %v", err)
			}
			select {
			case <-c.Done():
			default:
				t.Fatal("Done not closed after a failed spawn")
			}
		})
	}
}

func TestProgress(t *testing.T) {
	args := json.RawMessage(`{"steps":5,"interval_ms":150}`)
	t.Run("events", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{})
		s.init()
		r, _, err := s.c.CallTool(context.Background(), "progress", args, CallOptions{})
		if err != nil || r.Content[0].Text != "done 5 steps" {
			t.Fatalf("%+v %v", r, err)
		}
		s.waitUntil("5 progress events", func(evs []Event) bool {
			n := 0
			for _, ev := range evs {
				if ev.Kind == EvRequest && ev.Req.State == StateProgress && ev.Req.Progress.Total != nil && *ev.Req.Progress.Total == 5 {
					n++
				}
			}
			return n == 5
		})
	})
	// Each pair of deadlines below is far apart, so that a loaded machine
	// (a late timer, a slow fixture) cannot swap them: 10 steps of 150 ms
	// take 1.5 s.
	long := json.RawMessage(`{"steps":10,"interval_ms":150}`)
	// Without reset, a 600 ms timeout fires 900 ms before the answer.
	t.Run("timeout without reset", func(t *testing.T) {
		s := start(t, Options{}, fixtureArgs{})
		s.init()
		if _, _, err := s.c.CallTool(context.Background(), "progress", long, CallOptions{Timeout: 600 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
			t.Fatalf("got %v", err)
		}
	})
	// With reset, the 1.5 s call outlives its 1 s timeout only because each
	// progress notification restarts the clock; a step has 850 ms to spare
	// (80 ms steps against 250 ms, and 150 ms against 600 ms, once failed).
	t.Run("reset on progress", func(t *testing.T) {
		s := start(t, Options{ResetOnProgress: true, MaxTotalTimeout: time.Minute}, fixtureArgs{})
		s.init()
		if _, _, err := s.c.CallTool(context.Background(), "progress", long, CallOptions{Timeout: time.Second}); err != nil {
			t.Fatal(err)
		}
	})
	// The cap ends a call that progress keeps alive: the error names the
	// 3 s cap, not the 1 s timeout, which progress every 50 ms restarts with
	// 950 ms to spare. (A 250 ms timeout under a 300 ms cap failed once under
	// load: one late notification let the timeout fire first.)
	t.Run("max total", func(t *testing.T) {
		s := start(t, Options{ResetOnProgress: true, MaxTotalTimeout: 3 * time.Second}, fixtureArgs{})
		s.init()
		_, _, err := s.c.CallTool(context.Background(), "progress", json.RawMessage(`{"steps":1000,"interval_ms":50}`), CallOptions{Timeout: time.Second})
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "within 3s") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestCloseIsIdempotentAndConcurrent(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); s.c.Close() }()
	}
	wg.Wait()
	if _, err := call.Wait(); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v", err)
	}
	if _, err := s.c.Call(context.Background(), "ping", nil, CallOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
	if err := s.c.Connect(Stdio(transport.StdioConfig{Argv: []string{os.Args[0]}})); !errors.Is(err, ErrClosed) {
		t.Fatalf("connect after close: %v", err)
	}
}

func TestErrorCodesPrint(t *testing.T) {
	for _, sentinel := range []*Error{ErrTimeout, ErrAborted, ErrRemote, ErrProcessExit, ErrClosed, ErrBusy, ErrProtocol, ErrSpawn, ErrHandshake} {
		err := error(&Error{Code: sentinel.Code, Message: "m"})
		if !errors.Is(err, sentinel) || err.Error() != string(sentinel.Code)+": m" || CodeOf(err) != sentinel.Code {
			t.Fatalf("%s: Is=%v text=%q", sentinel.Code, errors.Is(err, sentinel), err)
		}
		for _, other := range []*Error{ErrTimeout, ErrBusy} {
			if other.Code != sentinel.Code && errors.Is(err, other) {
				t.Fatalf("%s matches %s", sentinel.Code, other.Code)
			}
		}
	}
}

func TestCancelByID(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{})
	s.waitFor("sent", func(ev Event) bool { return ev.Kind == EvRequest && ev.Req.ID == call.ID && ev.Req.State == StateSent })
	id, _ := call.ID.Int64()
	if !s.c.Cancel(id, "from the UI") {
		t.Fatal("not pending")
	}
	if _, err := call.Wait(); !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "from the UI") {
		t.Fatalf("got %v", err)
	}
	if s.c.Cancel(id, "") {
		t.Fatal("cancelled twice")
	}
	s.waitFor("cancel notification", func(ev Event) bool {
		return ev.Kind == EvFrame && strings.Contains(string(ev.Frame.Raw), `"reason":"from the UI"`)
	})
}

func TestStopServerFailsPendingAsExit(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{})
	s.waitFor("sent", func(ev Event) bool { return ev.Kind == EvRequest && ev.Req.ID == call.ID && ev.Req.State == StateSent })
	s.c.StopServer()
	if _, err := call.Wait(); !errors.Is(err, ErrProcessExit) || !strings.Contains(err.Error(), "stopped by sonde") {
		t.Fatalf("got %v", err)
	}
	<-s.c.Done()
}

// A cancel queued just before Close still reaches the server: Close lets
// the write queue drain before it closes the server's stdin.
func TestCloseDeliversQueuedCancel(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	call := s.c.Go(context.Background(), "tools/call", echoX, CallOptions{Timeout: 100 * time.Millisecond})
	if _, err := call.Wait(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	s.c.Close() // right after the timeout queued notifications/cancelled
	id, _ := call.ID.Int64()
	s.waitUntil("the fixture logging the cancel", func(evs []Event) bool {
		// never-respond drops the call, so the fixture reports the cancel as for
		// a request no longer in flight; either way it arrived.
		text := stderrText(evs)
		n := strconv.FormatInt(id, 10)
		return strings.Contains(text, "cancelled id="+n) || strings.Contains(text, "cancel id="+n)
	})
}

func TestToolResultShape(t *testing.T) {
	r, err := ToolResult("echo", json.RawMessage(`{"content":[{"type":"text","text":"x"}],"isError":true}`))
	if err != nil || !r.IsError || r.Content[0].Text != "x" {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := ToolResult("echo", json.RawMessage(`[1]`)); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "tools/call echo") {
		t.Fatalf("got %v", err)
	}
}
