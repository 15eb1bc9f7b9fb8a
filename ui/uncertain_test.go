package ui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// TestCallUncertain: a call from the Tools pane of a tool that is not
// read-only (the fixture's tools have no annotations) whose server dies
// under it comes back saying its execution is uncertain; a JSON-RPC error
// answer does not (the server answered).
func TestCallUncertain(t *testing.T) {
	cfg := capturetest.Stdio(t)
	c := client.New(client.Options{Timeout: 10 * time.Second})
	defer c.Close()
	if err := c.Connect(client.Stdio(cfg)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	msg := callToolCmd(c, "fail", []byte(`{}`), false)().(tools.ResultMsg)
	if !errors.Is(msg.Err, client.ErrRemote) || strings.Contains(msg.Err.Error(), "uncertain") {
		t.Fatalf("remote error: %v", msg.Err)
	}
	msg = callToolCmd(c, "crash", []byte(`{}`), false)().(tools.ResultMsg)
	if !errors.Is(msg.Err, client.ErrProcessExit) || !strings.HasSuffix(msg.Err.Error(), client.UncertainNote) {
		t.Fatalf("crash: %v", msg.Err)
	}
}

// TestCancelListsNoTools: a call from the Tools pane cancelled (Pending's
// c) comes back uncertain, decided from the tool list the UI holds, and
// no tools/list goes to the server for it: nobody asked for one (#33).
func TestCancelListsNoTools(t *testing.T) {
	cfg := capturetest.Stdio(t)
	c := client.New(client.Options{Timeout: time.Minute})
	defer c.Close()
	sub := c.Subscribe(1 << 12)
	if err := c.Connect(client.Stdio(cfg)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	done := make(chan tools.ResultMsg, 1)
	go func() {
		done <- callToolCmd(c, "echo", []byte(`{"value":"x","delay_ms":600000}`), false)().(tools.ResultMsg)
	}()
	lists := 0
	count := func(ev client.Event) {
		if f := ev.Frame; ev.Kind == client.EvFrame && f != nil && f.Dir == client.Out && f.Msg.Method == mcp.MethodToolsList {
			lists++
		}
	}
	for {
		ev := <-sub.C
		count(ev)
		if r := ev.Req; ev.Kind == client.EvRequest && r.Method == mcp.MethodToolsCall && r.State == client.StateSent {
			id, _ := r.ID.Int64()
			if !c.Cancel(id, "cancelled from the sonde UI") {
				t.Fatal("the call was not pending")
			}
			break
		}
	}
	msg := <-done
	if !errors.Is(msg.Err, client.ErrAborted) || !strings.HasSuffix(msg.Err.Error(), client.UncertainNote) {
		t.Fatalf("cancelled call: %v", msg.Err)
	}
	// A ping after it: once its outcome is seen, so is every frame before.
	if err := c.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	for {
		ev := <-sub.C
		count(ev)
		if r := ev.Req; ev.Kind == client.EvRequest && r.Method == mcp.MethodPing && r.State.Final() {
			break
		}
	}
	if lists != 0 {
		t.Fatalf("%d tools/list sent after the cancel, want 0", lists)
	}
}
