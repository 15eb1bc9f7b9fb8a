package client

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// observe feeds lines ("> " from the host, "< " from the server) to an
// observer, then the server's exit, and returns its events as text: one
// line per frame (dir verdict detail) and per request transition (dir id
// state).
func observe(t *testing.T, lines ...string) []string {
	t.Helper()
	o := NewObserver(0)
	sub := o.Subscribe(1000)
	t0 := time.Unix(1000, 0)
	o.Start(42, []string{"srv"}, t0)
	for i, l := range lines {
		dir := Out
		if strings.HasPrefix(l, "< ") {
			dir = In
		}
		o.Line(dir, []byte(l[2:]), t0.Add(time.Duration(i+1)*time.Millisecond), false)
	}
	o.Exit(Exit{Pid: 42, Code: 0, Time: t0.Add(time.Second)})
	o.Close()
	var out []string
	var seq uint64
	for ev := range sub.C {
		if ev.Seq != seq+1 {
			t.Errorf("seq %d after %d", ev.Seq, seq)
		}
		seq = ev.Seq
		switch ev.Kind {
		case EvFrame:
			out = append(out, fmt.Sprintf("%s %s %s", ev.Frame.Dir, ev.Frame.Verdict, ev.Frame.Detail))
		case EvRequest:
			out = append(out, fmt.Sprintf("%s %s %s", ev.Req.Dir, ev.Req.ID, ev.Req.State))
		}
	}
	return out
}

func TestObserverVerdicts(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"resolved and error", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
			`> {"jsonrpc":"2.0","id":"b","method":"ping"}`,
			`< {"jsonrpc":"2.0","id":"b","error":{"code":-1,"message":"no"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		}, []string{
			"out 1 queued", "out sent tools/call", "out 1 sent",
			`out "b" queued`, "out sent ping", `out "b" sent`,
			`in error error for id "b" after 1ms`, `out "b" error`,
			"in resolved resolved id 1 after 3ms", "out 1 resolved",
		}},
		{"duplicate, string id, unknown, noise", []string{
			`> {"jsonrpc":"2.0","id":3,"method":"ping"}`,
			`< fixture noise`,
			`< {"jsonrpc":"2.0","id":3,"result":{}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{}}`,
			`< {"jsonrpc":"2.0","id":"3","result":{}}`,
			`< {"jsonrpc":"2.0","id":9,"result":{}}`,
			`< [1,2]`,
		}, []string{
			"out 3 queued", "out sent ping", "out 3 sent",
			"in malformed line on stdout is not JSON: servers must log to stderr",
			"in resolved resolved id 3 after 2ms", "out 3 resolved",
			"in duplicate second response for id 3 (already resolved 1ms ago); ignored by a correct host",
			`in unknown id "3" is a string; the host sent the integer 3 (ids keep their JSON type)`,
			"in unknown id 9 was never sent by the host",
			"in malformed JSON array, not an object (batches are not part of MCP since 2025-06-18)",
		}},
		{"cancel then late, exit ends the rest", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"bored"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang"}}`,
		}, []string{
			"out 1 queued", "out sent tools/call", "out 1 sent",
			"out sent cancels id 1: bored", "out 1 cancelled",
			"in late response for id 1 arrived 1ms after it ended (cancelled)",
			"out 2 queued", "out sent tools/call", "out 2 sent",
			"out 2 exited",
		}},
		{"invalid and undecodable answers end their request", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`,
			`> {"jsonrpc":"2.0","id":2,"method":"ping"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
			"< {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"a\x00b\"}",
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`,
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`,
		}, []string{
			"out 1 queued", "out sent ping", "out 1 sent",
			"out 2 queued", "out sent ping", "out 2 sent",
			"in invalid response has both result and error; ends id 1 with MCP_PROTOCOL", "out 1 protocol",
			"in malformed line is not valid JSON (truncated or corrupt message); ends id 2 with MCP_PROTOCOL", "out 2 protocol",
			"out 1 queued", "out sent ping", "out 1 sent",
			"out invalid id 1 is reused while a request with that id is still in flight",
			"out 1 exited",
		}},
		{"server request answered, progress", []string{
			`< {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`,
			`> {"jsonrpc":"2.0","id":"s1","result":{}}`,
			`> {"jsonrpc":"2.0","id":"s1","result":{}}`,
			`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"p","_meta":{"progressToken":"t"}}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}`,
			`< {"jsonrpc":"2.0","id":5,"result":{}}`,
		}, []string{
			"in server-request sampling/createMessage", `in "s1" received`,
			`out sent answers id "s1"`, `in "s1" answered`,
			`out duplicate second response for id "s1" (already answered 1ms ago); ignored by a correct server`,
			"out 5 queued", "out sent tools/call", "out 5 sent",
			"in progress progress 1/2 for id 5", "out 5 progress",
			"in resolved resolved id 5 after 2ms", "out 5 resolved",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := observe(t, tc.lines...)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestObserverTooLong: a line over the cap is a too-long frame from its
// side, its prefix kept.
func TestObserverTooLong(t *testing.T) {
	o := NewObserver(0)
	sub := o.Subscribe(10)
	o.TooLong(Out, &LineTooLongError{Limit: 10, Prefix: []byte("0123")}, time.Now())
	o.Close()
	ev := <-sub.C
	if ev.Frame == nil || ev.Frame.Verdict != VerdictTooLong || ev.Frame.Dir != Out || string(ev.Frame.Raw) != "0123" ||
		ev.Frame.Detail != "line from the host exceeds 10 bytes (--max-line-bytes): forwarded whole, not decoded; the first 4 bytes are shown" {
		t.Errorf("event %+v", ev.Frame)
	}
}

// TestObserverMissedLeavesAGap: Missed leaves a gap in Seq (after its
// note), which a recorder writes as a missed record.
func TestObserverMissedLeavesAGap(t *testing.T) {
	o := NewObserver(0)
	sub := o.Subscribe(10)
	o.Note("a", time.Now())
	o.Missed(3, "missed 3 chunks", time.Now())
	o.Note("b", time.Now())
	o.Close()
	var seqs []uint64
	for ev := range sub.C {
		seqs = append(seqs, ev.Seq)
	}
	if fmt.Sprint(seqs) != "[1 2 6]" {
		t.Errorf("seqs %v, want [1 2 6]", seqs)
	}
	_ = transport.In
}

// TestObserverMessage: messages fed with their HTTP stream get the same
// verdicts as lines, with the stream and SSE event id on their frames; an
// exchange fed with HTTP is an EvHTTP event.
func TestObserverMessage(t *testing.T) {
	o := NewObserver(0)
	sub := o.Subscribe(100)
	t0 := time.Unix(1000, 0)
	o.HTTP(HTTPEvent{Method: "POST", Status: 200, Stream: "POST 1"}, t0)
	o.Message(Out, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), t0, "POST 1", "")
	o.Message(In, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), t0.Add(time.Millisecond), "POST 1", "e7")
	o.Close()
	var got []string
	for ev := range sub.C {
		switch ev.Kind {
		case EvHTTP:
			got = append(got, "http "+ev.HTTP.Stream)
		case EvFrame:
			got = append(got, fmt.Sprintf("%s %s %s %s", ev.Frame.Dir, ev.Frame.Verdict, ev.Frame.Frame.Stream, ev.Frame.Frame.EventID))
		}
	}
	want := []string{"http POST 1", "out sent POST 1 ", "in resolved POST 1 e7"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
}
