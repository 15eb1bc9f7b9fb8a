package against

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestLoadSample reads the sample capture (a real fixture session): the
// requests after initialize, their params without the progress token,
// their deadlines, and their recorded outcomes (a timeout, a crash).
func TestLoadSample(t *testing.T) {
	f, err := os.Open("../../testdata/captures/out-of-order-late-crash.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Load(f)
	if err != nil || len(s.Warnings) > 0 {
		t.Fatal(err, s.Warnings)
	}
	if s.ProtocolVersion != "2025-11-25" || len(s.Requests) != 4 {
		t.Fatalf("version %q, %d requests", s.ProtocolVersion, len(s.Requests))
	}
	var got []string
	for _, q := range s.Requests {
		got = append(got, q.ID.String()+" "+q.Tool+" "+q.Recorded.Kind+" "+q.Recorded.Code+" "+string(q.Params))
		if !q.Progress {
			t.Errorf("request %v: the progress token was not seen", q.ID)
		}
	}
	want := []string{
		`2 echo result  {"arguments":{"value":"slow","delay_ms":80},"name":"echo"}`,
		`3 echo result  {"arguments":{"value":"fast"},"name":"echo"}`,
		`4 echo timeout MCP_TIMEOUT {"arguments":{"value":"late","delay_ms":60,"ignore_cancel":true},"name":"echo"}`,
		`5 crash failed MCP_PROCESS_EXIT {"name":"crash"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if q := s.Requests[2]; q.Timeout != 20*time.Millisecond || q.At <= s.Requests[1].At {
		t.Errorf("request 4: timeout %v at %v", q.Timeout, q.At)
	}
}

func TestCompareOutcomes(t *testing.T) {
	res := func(s string) Outcome { return Outcome{Kind: KindResult, Result: json.RawMessage(s)} }
	rpc := func(code int64, msg string) Outcome {
		return Outcome{Kind: KindError, Error: &jsonrpc.Error{Code: code, Message: msg}}
	}
	for _, tc := range []struct {
		name      string
		rec, now  Outcome
		status    string
		change    string
		diffCount int
	}{
		{"same result", res(`{"a":1}`), res(`{"a":1}`), StatusEqual, "", 0},
		{"changed result", res(`{"a":1}`), res(`{"a":2}`), StatusDifferent, "", 1},
		{"result to error", res(`{}`), rpc(-32001, "boom"), StatusDifferent, `was a result, now error -32001 "boom"`, 0},
		{"error to result", rpc(-32001, "boom"), res(`{}`), StatusDifferent, `was error -32001 "boom", now a result`, 0},
		{"error message", rpc(-32001, "a"), rpc(-32001, "b"), StatusDifferent, "", 1},
		{"timeouts", Outcome{Kind: KindTimeout}, Outcome{Kind: KindTimeout}, StatusEqual, "", 0},
		{"failure code", Outcome{Kind: KindFailed, Code: "MCP_PROTOCOL"}, Outcome{Kind: KindFailed, Code: "MCP_PROCESS_EXIT", Message: "gone"}, StatusDifferent,
			"was a failure (MCP_PROTOCOL: ), now a failure (MCP_PROCESS_EXIT: gone)", 0},
		{"not recorded", Outcome{Kind: KindNone}, res(`{}`), StatusSkipped, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Recorded: tc.rec, Now: tc.now}
			compareOutcomes(&r, nil)
			if r.Status != tc.status || r.Change != tc.change || len(r.Diffs) != tc.diffCount {
				t.Errorf("status %q change %q diffs %v", r.Status, r.Change, r.Diffs)
			}
		})
	}
}

// TestOutcomeOfRemoteErrors: a JSON-RPC error answer is compared as an
// error, whether it is MCP_ERROR or MCP_URL_REQUIRED (-32042); other
// failures by their code.
func TestOutcomeOfRemoteErrors(t *testing.T) {
	rpc := &jsonrpc.Error{Code: -32042, Message: "auth", Data: json.RawMessage(`{"elicitations":[]}`)}
	for _, code := range []client.Code{client.CodeRemote, client.CodeURLRequired} {
		if o := outcomeOf(nil, &client.Error{Code: code, Message: "m", RPC: rpc}); o.Kind != KindError || o.Error != rpc {
			t.Errorf("%s: %+v", code, o)
		}
	}
	if o := outcomeOf(nil, &client.Error{Code: client.CodeTimeout, Message: "late"}); o.Kind != KindTimeout {
		t.Errorf("timeout: %+v", o)
	}
}
