package ui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
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
	msg := callToolCmd(c, "fail", []byte(`{}`))().(tools.ResultMsg)
	if !errors.Is(msg.Err, client.ErrRemote) || strings.Contains(msg.Err.Error(), "uncertain") {
		t.Fatalf("remote error: %v", msg.Err)
	}
	msg = callToolCmd(c, "crash", []byte(`{}`))().(tools.ResultMsg)
	if !errors.Is(msg.Err, client.ErrProcessExit) || !strings.HasSuffix(msg.Err.Error(), client.UncertainNote) {
		t.Fatalf("crash: %v", msg.Err)
	}
}
