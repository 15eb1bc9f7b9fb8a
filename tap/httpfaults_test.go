package tap

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/transport"
)

// faultProxy is an HTTP tap (with fault rules, when given) in front of the fixture
// (over HTTP, in this process; json: it answers POSTs with JSON bodies,
// else with SSE streams), and sonde's own client as the host.
type faultProxy struct {
	p    *Proxy
	c    *client.Client
	done func() []client.Event
}

func newFaultProxy(t *testing.T, json bool, rules ...string) *faultProxy {
	t.Helper()
	var args []string
	if json {
		args = append(args, "--http-json")
	}
	target, _ := url.Parse(fixturetest.ServeHTTP(t, args...))
	var parsed []*chaos.Rule
	for i, text := range rules {
		r, err := chaos.Parse(text, i+1)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, r)
	}
	var faults *chaos.Engine
	if len(parsed) > 0 {
		faults = chaos.New(parsed, 1)
	}
	c := client.New(client.Options{Timeout: 10 * time.Second})
	base, p, done := serveProxy(t, ProxyOptions{Target: target, LoopbackOnly: true, Faults: faults}, func() { c.Close() })
	if err := c.Connect(client.HTTP(transport.HTTPConfig{URL: base + "/mcp", Mode: transport.ModeStreamable})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	fp := &faultProxy{p: p, c: c, done: done}
	return fp
}

// echo calls the fixture's echo tool.
func (fp *faultProxy) echo(value string, delayMS int, timeout time.Duration) (string, error) {
	args, _ := json.Marshal(map[string]any{"value": value, "delay_ms": delayMS})
	res, _, err := fp.c.CallTool(context.Background(), "echo", args, client.CallOptions{Timeout: timeout})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", errors.New("no content")
	}
	return res.Content[0].Text, nil
}

// notes are the texts of the notes observed.
func notes(evs []client.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == client.EvNote {
			b.WriteString(ev.Note + "\n")
		}
	}
	return b.String()
}

// TestHTTPFaultsUnmatchedUnchanged: a rule that matches nothing leaves the
// session as it is, in both answer modes.
func TestHTTPFaultsUnmatchedUnchanged(t *testing.T) {
	for _, mode := range []bool{true, false} {
		fp := newFaultProxy(t, mode, "drop:to-host,method=no/such-method")
		if got, err := fp.echo("same", 0, 0); err != nil || got != "same" {
			t.Fatalf("json %v: %q %v", mode, got, err)
		}
		if n := notes(fp.done()); strings.Contains(n, "fault rule 1 (") {
			t.Errorf("a rule fired:\n%s", n)
		}
	}
}

// TestHTTPFaultsError: an error rule answers the request itself; the
// server never sees it, the recording notes it.
func TestHTTPFaultsError(t *testing.T) {
	fp := newFaultProxy(t, false, "error:to-server,tool=echo,code=-32603,message=boom")
	_, err := fp.echo("x", 0, 0)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.RPC == nil || ce.RPC.Code != -32603 || ce.RPC.Message != "boom" {
		t.Fatalf("error %v, want the rule's -32603 boom", err)
	}
	if n := notes(fp.done()); !strings.Contains(n, "fault rule 1 (error:to-server,tool=echo,code=-32603,message=boom) answered") {
		t.Errorf("notes:\n%s", n)
	}
}

// TestHTTPFaultsDropAnswer: a dropped answer never comes, in JSON and SSE
// answers: the call times out, and the next call goes through.
func TestHTTPFaultsDropAnswer(t *testing.T) {
	for _, mode := range []bool{true, false} {
		fp := newFaultProxy(t, mode, "drop:to-host,kind=response,id=3")
		if _, err := fp.echo("first", 0, 0); err != nil {
			t.Fatalf("json %v: first call %v", mode, err)
		}
		if _, err := fp.echo("lost", 0, 500*time.Millisecond); !errors.Is(err, client.ErrTimeout) {
			t.Fatalf("json %v: %v, want a timeout", mode, err)
		}
		if got, err := fp.echo("after", 0, 0); err != nil || got != "after" {
			t.Fatalf("json %v: call after the drop: %q %v", mode, got, err)
		}
		if n := notes(fp.done()); !strings.Contains(n, "dropped the response to id 3") {
			t.Errorf("notes:\n%s", n)
		}
	}
}

// TestHTTPFaultsDropRequest: a dropped request never reaches the server;
// its answer never comes.
func TestHTTPFaultsDropRequest(t *testing.T) {
	fp := newFaultProxy(t, true, "drop:to-server,tool=echo")
	if _, err := fp.echo("x", 0, 500*time.Millisecond); !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("%v, want a timeout", err)
	}
	if err := fp.c.Ping(context.Background()); err != nil {
		t.Fatalf("ping after the drop: %v", err)
	}
}

// TestHTTPFaultsDuplicate: a JSON answer sent twice becomes an SSE stream
// of two events; the host sees the second as a duplicate.
func TestHTTPFaultsDuplicate(t *testing.T) {
	for _, mode := range []bool{true, false} {
		fp := newFaultProxy(t, mode, "duplicate:to-host,tool=echo,kind=response")
		if got, err := fp.echo("twice", 0, 0); err != nil || got != "twice" {
			t.Fatalf("json %v: %q %v", mode, got, err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for fp.c.Stats().Duplicate < 1 {
			if time.Now().After(deadline) {
				t.Fatalf("json %v: no duplicate seen: %+v", mode, fp.c.Stats())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestHTTPFaultsCorruptAndNoise: a string id for an integer one is an
// unknown answer (the call times out); a noise event is a malformed frame
// next to an answer that still resolves.
func TestHTTPFaultsCorruptAndNoise(t *testing.T) {
	fp := newFaultProxy(t, false, "corrupt:to-host,tool=echo,kind=response,how=string-id")
	if _, err := fp.echo("x", 0, 500*time.Millisecond); !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("%v, want a timeout", err)
	}
	if s := fp.c.Stats(); s.Unknown < 1 {
		t.Errorf("stats %+v, want an unknown answer", s)
	}
	fp = newFaultProxy(t, true, "noise:to-host,tool=echo,kind=response")
	if got, err := fp.echo("y", 0, 0); err != nil || got != "y" {
		t.Fatalf("%q %v", got, err)
	}
	if s := fp.c.Stats(); s.Malformed < 1 {
		t.Errorf("stats %+v, want a malformed frame", s)
	}
}

// TestHTTPFaultsDelayAndReorder: a delayed answer comes at least the
// delay late; with reorder window=2, the fast answer waits for the slow
// one (they are released in reverse order).
func TestHTTPFaultsDelayAndReorder(t *testing.T) {
	fp := newFaultProxy(t, false, "delay:to-host,tool=echo,kind=response,ms=600")
	start := time.Now()
	if _, err := fp.echo("x", 0, 0); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 600*time.Millisecond {
		t.Errorf("answered after %v, want the 600ms delay", d)
	}
	fp = newFaultProxy(t, true, "reorder:to-host,tool=echo,kind=response,window=2,ms=10000")
	fast := make(chan time.Duration, 1)
	start = time.Now()
	go func() {
		fp.echo("fast", 0, 0)
		fast <- time.Since(start)
	}()
	if _, err := fp.echo("slow", 800, 0); err != nil {
		t.Fatal(err)
	}
	if d := <-fast; d < 800*time.Millisecond {
		t.Errorf("the fast answer came after %v, before the slow one was answered (800ms)", d)
	}
	if n := notes(fp.done()); !strings.Contains(n, "released 2 held answer(s) to-host, reversed") {
		t.Errorf("notes:\n%s", n)
	}
}

// TestHTTPFaultsClose: close to-server answers 404 and ends the session:
// later requests of it get 404 too.
func TestHTTPFaultsClose(t *testing.T) {
	fp := newFaultProxy(t, true, "close:to-server,tool=echo")
	if _, err := fp.echo("x", 0, 0); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("%v, want a 404", err)
	}
	if err := fp.c.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("ping: %v, want a 404", err)
	}
	if n := notes(fp.done()); !strings.Contains(n, "the session it closed got") {
		t.Errorf("notes:\n%s", n)
	}
}

// TestHTTPFaultsDropProgress: progress notifications on an SSE answer are
// dropped; the result still comes.
func TestHTTPFaultsDropProgress(t *testing.T) {
	fp := newFaultProxy(t, false, "drop:to-host,method=notifications/progress")
	var progress int
	call := fp.c.GoTool(context.Background(), "progress", json.RawMessage(`{"steps":3,"interval_ms":5}`), client.CallOptions{})
	if _, err := call.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, ev := range fp.done() {
		if ev.Kind == client.EvFrame && ev.Frame.Dir == client.In && strings.Contains(string(ev.Frame.Raw), "notifications/progress") {
			progress++
		}
	}
	if progress != 0 {
		t.Errorf("%d progress notifications reached the host", progress)
	}
}
