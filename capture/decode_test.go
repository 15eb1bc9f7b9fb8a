package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// decodeCorpus returns record lines: every line after the header of the
// repository's sample captures (real sessions and the hand-written lint
// captures) and of a capture the recorder writes here from events of every
// kind.
func decodeCorpus(t testing.TB) [][]byte {
	t.Helper()
	paths, _ := filepath.Glob("../testdata/captures/*.jsonl")
	more, _ := filepath.Glob("../testdata/captures/lint/*.jsonl")
	var out [][]byte
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recordLines(b)...)
	}
	out = append(out, recordLines(encodeEvents(t, nil, kindsOfEvents()...))...)
	if len(out) < 100 {
		t.Fatalf("only %d lines in the corpus", len(out))
	}
	return out
}

// recordLines returns the lines of a capture after its header.
func recordLines(b []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for first := true; sc.Scan(); first = false {
		if !first {
			out = append(out, bytes.Clone(sc.Bytes()))
		}
	}
	return out
}

// kindsOfEvents are events with the fields the sample captures lack: a
// string id and retry, base64 bytes, HTTP, a decode error, escapes and
// non-ASCII text.
func kindsOfEvents() []client.Event {
	total := 3.0
	return []client.Event{
		frameEvent(1, client.In, []byte("\xff\xfe not utf-8"), client.VerdictMalformed),
		frameEvent(2, client.Out, []byte(`{"jsonrpc":"2.0","id":"a\"b","method":"x/é","params":{"s":"tab\there \u2028 ✓"}}`), client.VerdictSent),
		{Seq: 3, Time: t0.Add(time.Second), Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.In, ID: jsonrpc.String("s-1"), Method: "sampling/createMessage", State: client.StateReceived,
			Params: json.RawMessage(`{"messages":[]}`), RetryOf: jsonrpc.Int(4), Timeout: time.Second, MaxEnd: t0.Add(time.Minute),
			Progress: &client.Progress{Progress: 1.5, Total: &total, Message: "step «1»\n"}}},
		{Seq: 4, Time: t0, Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "POST", URL: "http://127.0.0.1:1/mcp", Status: 200, Header: []string{"< Content-Type: text/event-stream"},
			Duration: time.Millisecond, Stream: "POST 1", ReqID: jsonrpc.Int(1), EventID: "e1", Raw: []byte("data: \xff"), Note: "primed", Problem: true}},
		{Seq: 5, Time: t0, Kind: client.EvStderr, Stderr: []byte("line one\r\n\x1b[31mred\x1b[0m\n")},
		{Seq: 6, Time: t0, Kind: client.EvNote, Note: `a note with "quotes" and \ backslash`},
		{Seq: 7, Time: t0, Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcExit, Pid: 9, Signal: "SIGKILL",
			Exit: &client.Exit{Pid: 9, Code: -1, Signal: "SIGKILL", Stderr: []byte("bye\xff"), ByClose: true, Time: t0.Add(2 * time.Second),
				Left: []client.ProcStat{{Pid: 10, Name: "node", State: "sleeping", CPU: time.Second}}}}},
		{Seq: 8, Time: t0, Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(-3), Method: "ping", State: client.StateTimeout, Err: client.ErrTimeout, Deadline: t0}},
	}
}

// oddLines are records as other writers could lay them out, and damage:
// each must decode as encoding/json decodes it.
var oddLines = []string{
	`{}`,
	`{"type":"note","t":1,"note":"breakpoint 1 edited h1","hold":{"handle":"h1","breakpoint":1,"action":"edited","by":"socket","dir":"in","kind":"response","id":3,"method":"tools/call","original":"{}","frame":"e30=","b64":true,"held_ns":5,"order":2}}`,
	`{"type":"note","t":1,"hold":{"handle":7,"action":null}}`,
	` { "type" : "frame" , "seq" : 1 , "t" : 2 } ` + "\r",
	`{"type":"frame","seq":1,"t":2,"Type":"note"}`,
	`{"TYPE":"frame","t":1}`,
	`{"type":"frame","future":{"a":[1,2,{"b":null}]},"t":1}`,
	`{"type":"frame","t":1,"t":2,"seq":3,"seq":4}`,
	`{"type":"request","t":1,"deadline":5,"deadline":6,"id":1,"id":"x"}`,
	`{"type":"request","t":1,"deadline":null,"id":null}`,
	`{"type":"request","t":1,"progress":{"progress":1,"message":"a"},"progress":{"progress":2}}`,
	`{"type":"frame","t":1.5}`,
	`{"type":"frame","t":1e3}`,
	`{"type":"frame","t":-0}`,
	`{"type":"frame","t":01}`,
	`{"type":"frame","seq":-1,"t":1}`,
	`{"type":"frame","seq":18446744073709551615,"t":9223372036854775807}`,
	`{"type":"frame","seq":18446744073709551616,"t":1}`,
	`{"type":"frame","t":-9223372036854775808}`,
	`{"type":"frame","t":-9223372036854775809}`,
	`{"type":"frame","t":"1"}`,
	`{"type":3}`,
	`{"type":"frame","raw":"\ud83d\ude00 \ud800"}`,
	`{"type":"frame","raw":"\u00e9\u0000\/\b\f"}`,
	`{"type":"frame","raw":"\x"}`,
	`{"type":"frame","raw":"\u12"}`,
	"{\"type\":\"frame\",\"raw\":\"\xff\"}",
	"{\"type\":\"frame\",\"raw\":\"a\\n\xff\"}",
	"{\"type\":\"frame\",\"raw\":\"tab\there\"}",
	`{"type":"frame","b64":true,"redacted":false}`,
	`{"type":"frame","b64":tru}`,
	`{"type":"frame","b64":1}`,
	`{"type":"frame","id":1.0}`,
	`{"type":"frame","id":true}`,
	`{"type":"frame","id":"a\"b"}`,
	`{"type":"frame","t":1}x`,
	`{"type":"frame","t":1}{}`,
	`{"type":"frame","t":1,}`,
	`{"type":"frame" "t":1}`,
	`{"type":"frame","t":1`,
	`{"type":"frame","error":{"code":"MCP_TIMEOUT","message":"m","snapshot":{"a":1}},"t":1}`,
	`{"type":"frame","error":{"code":"MCP_TIMEOUT","message":1},"t":1}`,
	`{"type":"frame","error":{"code":"x"]}`,
	`{"type":"process","argv":["a","b"],"argv":["c"],"exit":{"pid":1,"code":2,"t":3}}`,
	`{"type":"frame","size":9223372036854775807,"pid":-1}`,
	`[1]`,
	`"frame"`,
	`null`,
	``,
	`   `,
}

func TestDecodeRecordMatchesEncodingJSON(t *testing.T) {
	var fast int
	corpus := decodeCorpus(t)
	for _, line := range corpus {
		var s recScanner
		var rec Record
		if s.record(line, &rec) {
			fast++
		}
		checkDecode(t, line)
	}
	// The lines sonde writes take the fast path: otherwise it is only
	// encoding/json again.
	if fast != len(corpus) {
		t.Errorf("%d of %d recorded lines took the fast path", fast, len(corpus))
	}
	for _, line := range oddLines {
		checkDecode(t, []byte(line))
	}
}

// checkDecode fails when decodeRecord and json.Unmarshal disagree on line.
func checkDecode(t *testing.T, line []byte) {
	t.Helper()
	var got, want Record
	gotErr := decodeRecord(line, &got)
	wantErr := json.Unmarshal(line, &want)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%q: error %v, encoding/json %v", line, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", line, got, want)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, line := range decodeCorpus(f) {
		f.Add(line)
	}
	for _, line := range oddLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecode(t, line)
	})
}
