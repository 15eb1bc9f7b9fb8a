package live_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// scriptOut is one output line of script, decoded after checkScriptLine
// has validated its shape.
type scriptOut struct {
	Index  int             `json:"index"`
	ID     *int64          `json:"id"`
	Method string          `json:"method"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		RPCCode *int            `json:"rpc_code"`
		Data    json.RawMessage `json:"data"`
		// Snapshot: MCP_TIMEOUT's (docs/errors.md).
		Snapshot json.RawMessage `json:"snapshot"`
	} `json:"error"`
	MS float64 `json:"ms"`
}

// parseScriptOutput checks that every stdout line has the documented
// shape, {"index":0,"id":2,"method":"tools/call","ok":true,"result":{...},"ms":1.2}
// (error instead of result when ok is false), and decodes them.
func parseScriptOutput(t *testing.T, stdout string) []scriptOut {
	t.Helper()
	if stdout == "" {
		return nil
	}
	if !strings.HasSuffix(stdout, "\n") {
		t.Errorf("stdout does not end in a newline: %q", stdout)
	}
	var outs []scriptOut
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &keys); err != nil {
			t.Fatalf("output line %d is not a JSON object: %v\n%s", i, err, line)
		}
		for _, k := range []string{"index", "id", "method", "ok", "ms"} {
			if _, ok := keys[k]; !ok {
				t.Errorf("output line %d has no %q: %s", i, k, line)
			}
		}
		var o scriptOut
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("output line %d: %v\n%s", i, err, line)
		}
		_, hasResult := keys["result"]
		_, hasError := keys["error"]
		if o.OK != hasResult || o.OK == hasError {
			t.Errorf("output line %d: ok %v with result %v and error %v: %s", i, o.OK, hasResult, hasError, line)
		}
		if o.Index != i || o.Method == "" || o.MS < 0 {
			t.Errorf("output line %d: %s", i, line)
		}
		outs = append(outs, o)
	}
	return outs
}

// TestScriptPipelined sends a slow and a fast call without waiting: the
// fast one is answered first on the wire, and the output still comes in
// input order with each line's own id and result.
func TestScriptPipelined(t *testing.T) {
	f := clitest.NewFixture(t)
	input := `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"slow","delay_ms":1000}}}
{"method":"tools/call","params":{"name":"echo","arguments":{"value":"fast"}}}
`
	r := clitest.RunSonde(t, input, f.Cmd([]string{"script", "-", "--trace"})...)
	if r.Code != cmdutil.ExitOK || clitest.SondeLine(r.Stderr) != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	outs := parseScriptOutput(t, r.Stdout)
	if len(outs) != 2 {
		t.Fatalf("%d output lines, want 2:\n%s", len(outs), r.Stdout)
	}
	for i, want := range []struct {
		id    int64
		value string
	}{{2, "slow"}, {3, "fast"}} {
		o := outs[i]
		if !o.OK || o.ID == nil || *o.ID != want.id || o.Method != "tools/call" {
			t.Errorf("line %d: %+v, want id %d ok", i, o, want.id)
		}
		if wantRes := `{"content":[{"type":"text","text":"` + want.value + `"}],"structuredContent":{"value":"` + want.value + `"}}`; !clitest.SameJSON(t, string(o.Result), wantRes) {
			t.Errorf("line %d result %s, want %s", i, o.Result, wantRes)
		}
	}
	// On the wire: both requests went out before the slow answer came
	// back, and the fast answer came back first.
	clitest.CheckOrder(t, r.Stderr,
		[]string{`-> id 2 +tools/call `, `-> id 3 +tools/call `, `<- id 2 +response `},
		[]string{`<- id 3 +response `, `<- id 2 +response `})
}

// TestScriptOutcomes runs scripts whose lines end each way and checks every
// output line and the exit status.
func TestScriptOutcomes(t *testing.T) {
	type want struct {
		ok      bool
		id      int64 // 0: null
		method  string
		code    string
		rpcCode int
		message string // error message (prefix with "...")
		result  string // JSON, when ok
	}
	cases := []struct {
		name     string
		flags    []string
		fixture  []string
		input    string
		code     int
		errLine  string
		want     []want
		trace    []string      // regexps that the --trace output must match
		minTotal time.Duration // the run cannot be shorter (delay_ms)
	}{
		{
			name: "all ok, comments and blank lines skipped",
			input: "# a comment\n\n" +
				`{"method":"ping"}` + "\n" +
				"   \n" +
				`{"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}` + "\n" +
				`{"method":"tools/list"}` + "\n",
			code: cmdutil.ExitOK,
			want: []want{
				{ok: true, id: 2, method: "ping", result: `{}`},
				{ok: true, id: 3, method: "tools/call", result: `{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3}}`},
				{ok: true, id: 4, method: "tools/list"},
			},
		},
		{
			name: "rpc_code on MCP_ERROR",
			input: `{"method":"tools/call","params":{"name":"fail"}}` + "\n" +
				`{"method":"bogus/method"}` + "\n" +
				`{"method":"tools/call","params":{"name":"nope"}}` + "\n" +
				`{"method":"ping"}` + "\n",
			code: cmdutil.ExitToolError, errLine: "sonde: 3 of 4 script lines failed",
			want: []want{
				{id: 2, method: "tools/call", code: "MCP_ERROR", rpcCode: -32001, message: "server error -32001: fixture failure"},
				{id: 3, method: "bogus/method", code: "MCP_ERROR", rpcCode: -32601, message: "server error -32601: method not found: bogus/method"},
				{id: 4, method: "tools/call", code: "MCP_ERROR", rpcCode: -32602, message: "server error -32602: unknown tool: nope"},
				{ok: true, id: 5, method: "ping", result: `{}`},
			},
		},
		{
			name: "timeout_ms",
			// The ping is sent after the timeout, so the session is still
			// up when the cancellation goes out.
			input: `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"x","delay_ms":20000}},"timeout_ms":150}` + "\n" +
				`{"method":"ping","delay_ms":400}` + "\n",
			flags: []string{"--trace"},
			code:  cmdutil.ExitToolError, errLine: "sonde: 1 of 2 script lines failed",
			want: []want{
				{id: 2, method: "tools/call", code: "MCP_TIMEOUT", message: "tools/call id 2: no response within 150ms; ..."},
				{ok: true, id: 3, method: "ping", result: `{}`},
			},
			// The server is told to stop working on it.
			trace: []string{`stderr fixture: cancelled id=2 \(reason: "timeout after 150ms"\)`},
		},
		{
			name: "cancel_after_ms",
			input: `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"x","delay_ms":20000}},"cancel_after_ms":100}` + "\n" +
				`{"method":"ping","delay_ms":400}` + "\n",
			flags: []string{"--trace"},
			code:  cmdutil.ExitToolError, errLine: "sonde: 1 of 2 script lines failed",
			want: []want{
				{id: 2, method: "tools/call", code: "MCP_ABORTED", message: "tools/call id 2: cancelled by caller"},
				{ok: true, id: 3, method: "ping", result: `{}`},
			},
			trace: []string{`stderr fixture: cancelled id=2 \(reason: "cancelled by caller"\)`},
		},
		{
			name: "delay_ms",
			input: `{"method":"ping"}` + "\n" +
				`{"method":"ping","delay_ms":250}` + "\n",
			code: cmdutil.ExitOK,
			want: []want{
				{ok: true, id: 2, method: "ping", result: `{}`},
				{ok: true, id: 3, method: "ping", result: `{}`},
			},
			minTotal: 250 * time.Millisecond,
		},
		{
			// One request may be in flight: the second line is refused at
			// once, before it gets an id, while the first waits for its
			// timeout.
			name:    "MCP_BUSY",
			flags:   []string{"--max-pending", "1"},
			fixture: []string{"--fault", "never-respond"},
			input: `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"a"}},"timeout_ms":300}` + "\n" +
				`{"method":"tools/call","params":{"name":"echo","arguments":{"value":"b"}}}` + "\n",
			code: cmdutil.ExitToolError, errLine: "sonde: 2 of 2 script lines failed",
			want: []want{
				{id: 2, method: "tools/call", code: "MCP_TIMEOUT", message: "tools/call id 2: no response within 300ms; ..."},
				{id: 0, method: "tools/call", code: "MCP_BUSY", message: "tools/call: 1 requests already in flight (--max-pending)"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.NewFixture(t)
			start := time.Now()
			r := clitest.RunSonde(t, tc.input, f.Cmd(append([]string{"script", "-"}, tc.flags...), tc.fixture...)...)
			elapsed := time.Since(start)
			if r.Code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.Code, tc.code, r.Stderr)
			}
			if got := clitest.SondeLine(r.Stderr); got != tc.errLine {
				t.Errorf("stderr line %q, want %q", got, tc.errLine)
			}
			outs := parseScriptOutput(t, r.Stdout)
			if len(outs) != len(tc.want) {
				t.Fatalf("%d output lines, want %d:\n%s", len(outs), len(tc.want), r.Stdout)
			}
			for i, w := range tc.want {
				o := outs[i]
				gotID := int64(0)
				if o.ID != nil {
					gotID = *o.ID
					if gotID == 0 {
						t.Errorf("line %d: id 0", i)
					}
				}
				if o.OK != w.ok || gotID != w.id || o.Method != w.method {
					t.Errorf("line %d: ok %v id %d method %s, want ok %v id %d method %s", i, o.OK, gotID, o.Method, w.ok, w.id, w.method)
				}
				if w.ok {
					if w.result != "" && !clitest.SameJSON(t, string(o.Result), w.result) {
						t.Errorf("line %d result %s, want %s", i, o.Result, w.result)
					}
					continue
				}
				if o.Error == nil {
					t.Errorf("line %d has no error", i)
					continue
				}
				if prefix, ok := strings.CutSuffix(w.message, "..."); o.Error.Code != w.code || (ok && !strings.HasPrefix(o.Error.Message, prefix)) || (!ok && o.Error.Message != w.message) {
					t.Errorf("line %d error %s %q, want %s %q", i, o.Error.Code, o.Error.Message, w.code, w.message)
				}
				switch {
				case w.rpcCode == 0 && o.Error.RPCCode != nil:
					t.Errorf("line %d has rpc_code %d", i, *o.Error.RPCCode)
				case w.rpcCode != 0 && (o.Error.RPCCode == nil || *o.Error.RPCCode != w.rpcCode):
					t.Errorf("line %d rpc_code %v, want %d", i, o.Error.RPCCode, w.rpcCode)
				}
			}
			for _, re := range tc.trace {
				if !regexp.MustCompile(re).MatchString(r.Stderr) {
					t.Errorf("trace does not match %s:\n%s", re, r.Stderr)
				}
			}
			if elapsed < tc.minTotal {
				t.Errorf("the script took %v; its delay_ms alone is %v", elapsed, tc.minTotal)
			}
		})
	}
}

// TestScriptFile reads the script from a file instead of stdin.
func TestScriptFile(t *testing.T) {
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	input := `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"one"}}}` + "\r\n" +
		`{"method":"tools/call","params":{"name":"echo","arguments":{"value":"two"}}}`
	clitest.WriteTestFile(t, path, input)
	r := clitest.RunSonde(t, `{"method":"not read"}`, f.Cmd([]string{"script", path})...)
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	outs := parseScriptOutput(t, r.Stdout)
	if len(outs) != 2 {
		t.Fatalf("%d output lines, want 2:\n%s", len(outs), r.Stdout)
	}
	for i, v := range []string{"one", "two"} {
		if !bytes.Contains(outs[i].Result, []byte(`"text":"`+v+`"`)) {
			t.Errorf("line %d result %s, want text %q", i, outs[i].Result, v)
		}
	}
}

// TestScriptBadInput: every line is validated before the server is
// started, and a bad one is a usage error naming its line.
func TestScriptBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	ok := `{"method":"ping"}` + "\n"
	cases := []struct {
		name    string
		file    string
		input   string
		errLine string
	}{
		{name: "not JSON", input: "# first\n\n" + `{"method":` + "\n" + ok, errLine: "sonde: script line 3: unexpected EOF\n"},
		{name: "method missing", input: ok + `{"params":{}}` + "\n", errLine: `sonde: script line 2: "method" is required` + "\n"},
		{name: "unknown field", input: `{"method":"ping","delay":5}` + "\n", errLine: `sonde: script line 1: json: unknown field "delay"` + "\n"},
		{name: "negative", input: ok + ok + `{"method":"ping","timeout_ms":-1}` + "\n", errLine: "sonde: script line 3: delay_ms, timeout_ms and cancel_after_ms must not be negative\n"},
		{name: "not an object", input: `["ping"]` + "\n", errLine: "sonde: script line 1: json: cannot unmarshal array into Go value of type live.scriptLine\n"},
		{name: "trailing data", input: ok + `{"method":"ping"} {"method":"ping"}` + "\n", errLine: "sonde: script line 2: unexpected data after the JSON object: {\"method\":\"ping\"}\n"},
		{name: "too long", input: ok + ok + `{"method":"ping","params":{"x":"` + strings.Repeat("x", 64<<20) + `"}}` + "\n", errLine: "sonde: script line 3: longer than 67108864 bytes (the limit of a script line)\n"},
		{name: "missing file", file: missing, errLine: "sonde: script: open " + missing + ": no such file or directory\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.NewFixture(t)
			file := "-"
			if tc.file != "" {
				file = tc.file
			}
			r := clitest.RunSonde(t, tc.input, f.Cmd([]string{"script", file})...)
			clitest.CheckRun(t, r, cmdutil.ExitUsage, tc.errLine)
			if r.Stdout != "" {
				t.Errorf("stdout = %q", r.Stdout)
			}
			f.AssertStarted(0)
		})
	}
	t.Run("no file", func(t *testing.T) {
		clitest.CheckRefused(t, ok, []string{"script"}, cmdutil.ExitUsage, "sonde: script takes exactly one FILE (or -) before --\n")
	})
}
