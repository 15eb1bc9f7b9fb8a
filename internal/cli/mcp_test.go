package cli_test

import (
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

type exchange struct {
	ID       string  `json:"id"`
	State    string  `json:"state"`
	IsError  bool    `json:"isError"`
	Text     string  `json:"text"`
	Result   string  `json:"result"`
	Why      string  `json:"why"`
	Problems int     `json:"problems"`
	Latency  float64 `json:"latencyMs"`
	Verdicts []struct {
		Verdict string `json:"verdict"`
		ID      string `json:"id"`
		Problem bool   `json:"problem"`
	} `json:"verdicts"`
}

// TestMCPStdioSDK drives sonde mcp over stdio with the Go SDK's client, at
// both protocol versions: a session on the fixture, echo, pending while a
// slow call runs, the why of a timeout, frames with a filter, stop.
func TestMCPStdioSDK(t *testing.T) {
	for _, pv := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(pv, func(t *testing.T) {
			fx := clitest.NewFixture(t)
			plain, silent := fx.Argv(), fx.Argv("--fault", "never-respond")
			cs := sdkClient(t, &sdk.CommandTransport{Command: mcpCommand([][]string{plain, silent})}, pv)
			if got := cs.InitializeResult().ProtocolVersion; got != pv {
				t.Errorf("negotiated %s, want %s", got, pv)
			}
			checkSession(t, cs, plain, silent)
		})
	}
}

func checkSession(t *testing.T, cs *sdk.ClientSession, plain, silent []string) {
	id := startSession(t, cs, plain)
	var ex exchange
	res := callTool(t, cs, "session_call", map[string]any{"session": id, "tool": "echo", "arguments": map[string]any{"value": "hi"}}, &ex)
	if res.IsError || ex.State != "resolved" || !strings.Contains(ex.Text, "hi") || ex.ID == "" {
		t.Fatalf("echo: %s %+v", resultText(res), ex)
	}
	if len(ex.Verdicts) < 2 || ex.Verdicts[0].Verdict != "sent" || ex.Verdicts[len(ex.Verdicts)-1].Verdict != "resolved" {
		t.Errorf("echo verdicts: %+v", ex.Verdicts)
	}

	// pending while a slow call is in flight
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		callTool(t, cs, "session_call", map[string]any{"session": id, "tool": "progress", "arguments": map[string]any{"steps": 40, "interval_ms": 100}}, nil)
	}()
	checkPending(t, cs, id, "progress")
	wg.Wait()

	// a timeout's why
	sid := startSession(t, cs, silent)
	res = callTool(t, cs, "session_call", map[string]any{"session": sid, "tool": "echo", "arguments": map[string]any{"value": "x"}, "timeout": "300ms"}, &ex)
	if res.IsError || ex.State != "timeout" || ex.Why == "" {
		t.Fatalf("timeout: %s %+v", resultText(res), ex)
	}
	var why struct {
		State    string   `json:"state"`
		Snapshot string   `json:"snapshot"`
		Why      string   `json:"why"`
		Evidence []string `json:"evidence"`
	}
	res = callTool(t, cs, "session_explain", map[string]any{"session": sid, "id": ex.ID}, &why)
	if res.IsError || why.State != "timeout" || why.Snapshot == "" || len(why.Evidence) == 0 {
		t.Fatalf("explain: %s %+v", resultText(res), why)
	}

	// frames with a filter
	var frames struct {
		Frames []struct {
			Method  string `json:"method"`
			Verdict string `json:"verdict"`
			Body    string `json:"body"`
		} `json:"frames"`
	}
	res = callTool(t, cs, "session_frames", map[string]any{"session": id, "filter": "method:tools/call dir:in"}, &frames)
	if res.IsError || len(frames.Frames) != 2 {
		t.Fatalf("frames: %s %+v", resultText(res), frames)
	}
	for _, f := range frames.Frames {
		if f.Verdict != "resolved" || f.Method != "tools/call" {
			t.Errorf("frame %+v: want a resolved tools/call answer", f)
		}
	}
	for _, s := range []string{id, sid} {
		if res := callTool(t, cs, "session_stop", map[string]any{"session": s}, nil); res.IsError {
			t.Errorf("stop %s: %s", s, resultText(res))
		}
	}
}

// checkPending waits until session_pending shows a tools/call of tool in
// flight.
func checkPending(t *testing.T, cs *sdk.ClientSession, id, tool string) {
	t.Helper()
	for range 200 {
		var p struct {
			Pending []struct {
				Method string `json:"method"`
				Tool   string `json:"tool"`
				State  string `json:"state"`
			} `json:"pending"`
		}
		callTool(t, cs, "session_pending", map[string]any{"session": id}, &p)
		for _, q := range p.Pending {
			if q.Tool == tool && q.Method == "tools/call" {
				return
			}
		}
	}
	t.Fatalf("session_pending never showed %s in flight", tool)
}
