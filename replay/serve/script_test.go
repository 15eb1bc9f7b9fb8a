package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

// sample is a real session against the fixture (docs/capture-format.md):
// noise before every response, two calls answered out of order, a late
// answer after a timeout, a crash that cuts the last answer.
const sample = "../../testdata/captures/out-of-order-late-crash.jsonl"

func buildSample(t *testing.T) *Script {
	t.Helper()
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) > 0 {
		t.Fatalf("warnings: %v", s.Warnings)
	}
	return s
}

// TestBuildAnchors: each line the server wrote goes to the request it
// answered, with the noise line that came just before it.
func TestBuildAnchors(t *testing.T) {
	s := buildSample(t)
	var got []string
	for _, ex := range s.Exchanges {
		var kinds []string
		for _, l := range ex.Lines {
			k := "plain"
			switch l.Kind {
			case Response:
				k = "response"
			case Stderr:
				k = "stderr"
			case Exit:
				k = fmt.Sprintf("exit %d", l.Code)
			}
			if strings.HasPrefix(string(l.Raw), "fixture noise") {
				k = "noise"
			}
			kinds = append(kinds, k)
		}
		got = append(got, ex.Method+" "+ex.ID.String()+" "+ex.Name+": "+strings.Join(kinds, ","))
	}
	want := []string{
		"initialize 1 : noise,response",
		"tools/call 2 echo: noise,response",
		"tools/call 3 echo: noise,response",
		"tools/call 4 echo: stderr,noise,response",      // the late answer, after the cancel
		"tools/call 5 crash: stderr,noise,plain,exit 3", // the half line of the crash
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("anchors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.ProtocolVersion != "2025-11-25" || s.ServerName != "sonde-fixture" || len(s.Start.Lines) != 0 {
		t.Errorf("session %q %q, start %d lines", s.ProtocolVersion, s.ServerName, len(s.Start.Lines))
	}
}

// TestMatchOrder: exact params first; otherwise (loose) the same tool,
// each recorded answer once, in recorded order, before any is used again.
func TestMatchOrder(t *testing.T) {
	s := buildSample(t)
	s.loose = true
	var got []string
	for _, params := range []string{
		`{"name":"echo","arguments":{"value":"fast"},"_meta":{"progressToken":"x"}}`,
		`{"name":"echo","arguments":{"value":"other"}}`,
		`{"name":"echo","arguments":{"value":"other"}}`,
		`{"name":"echo","arguments":{"value":"other"}}`,
		`{"name":"echo","arguments":{"value":"other"}}`,
		`{"arguments":{"value":"fast"},"name":"echo"}`,
		`{"name":"nope"}`,
	} {
		ex, how := s.Match("tools/call", []byte(params))
		if ex == nil {
			got = append(got, "none")
			continue
		}
		got = append(got, ex.ID.String()+" "+how)
	}
	want := "3 exact,2 loose,4 loose,2 loose,3 loose,3 exact,none"
	if strings.Join(got, ",") != want {
		t.Errorf("matches %s, want %s", strings.Join(got, ","), want)
	}
	if ex, how := s.Match("tools/list", nil); ex != nil {
		t.Errorf("tools/list matched %v %s", ex.ID, how)
	}
}

// TestServeInMemory: answers with the caller's ids, errors for what is not
// recorded, and a clean end at EOF.
func TestServeInMemory(t *testing.T) {
	s := buildSample(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"value":"fast"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":10,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":11,"method":"ping"}`,
		`42`,
	}, "\n") + "\n"
	var out, log bytes.Buffer
	if err := Serve(context.Background(), s, strings.NewReader(in), &out, Options{Log: &log}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":"a","result":{"capabilities":{"tools":{"listChanged":false}},`,
		`{"jsonrpc":"2.0","id":"b","result":{"content":[{"type":"text","text":"fast"}],"structuredContent":{"value":"fast"}}}` + "\n",
		`{"jsonrpc":"2.0","id":9,"error":{"code":-32010,"message":"sonde replay: the capture has no recorded request matching resources/list; recorded: initialize ×1, tools/call crash ×1, tools/call echo ×3"`,
		`{"jsonrpc":"2.0","id":10,"result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":11,"error":{"code":-32600,"message":"sonde replay: invalid request: invalid: jsonrpc is \"1.0\", want \"2.0\""}}` + "\n",
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "fixture noise: this is not JSON\n"); n != 2 {
		t.Errorf("%d noise lines, want 2 (before each recorded answer)", n)
	}
}

// TestServeCancel: Serve returns ctx's error when ctx ends, and writes
// nothing scheduled after it.
func TestServeCancel(t *testing.T) {
	s := buildSample(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var out proctest.Buffer
	go func() { done <- Serve(ctx, s, pr, &out, Options{Speed: 0.001}) }()
	pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"value":"slow","delay_ms":80}}}` + "\n"))
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Serve = %v, want context.Canceled", err)
	}
	pw.Close()
}

// TestServeExit: the recorded crash is played: its stderr, its noise, the
// half line, then Serve ends with the recorded exit status.
func TestServeExit(t *testing.T) {
	s := buildSample(t)
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, stderr proctest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), s, pr, &out, Options{Stderr: &stderr, Loose: true})
	}()
	pw.Write([]byte(`{"jsonrpc":"2.0","id":"z","method":"tools/call","params":{"name":"crash","arguments":{}}}` + "\n"))
	var exit *ExitError
	if err := <-done; !errors.As(err, &exit) || exit.Code != 3 {
		t.Fatalf("Serve = %v, want the recorded exit 3", err)
	}
	if want := "fixture noise: this is not JSON\n{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"conte\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if stderr.String() != "fixture: exit-mid-call\n" {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestNoLooseByDefault: without --loose (and always under --strict) a
// tools/call of a recorded tool with other arguments gets no recorded
// answer but the error naming the nearest recorded call and the argument
// paths that differ (#33: the mock answered it with the recorded answer of
// other arguments, even under --strict).
func TestNoLooseByDefault(t *testing.T) {
	const call = `{"name":"echo","arguments":{"value":"other"}}`
	for _, o := range []Options{{}, {Strict: true}, {Strict: true, Loose: true}} {
		s, err := buildSample(t).session(0, o)
		if err != nil {
			t.Fatal(err)
		}
		if ex, how := s.Match("tools/call", []byte(call)); ex != nil {
			t.Errorf("%+v: matched recorded id %s (%s)", o, ex.ID, how)
		}
		e := s.unmatchedError("tools/call", []byte(call))
		if e.Code != CodeUnmatched || !strings.Contains(e.Message, `nearest: tools/call "echo" (recorded id `) || !strings.Contains(e.Message, "which differs at arguments.delay_ms, arguments.value") {
			t.Errorf("%+v: %d %s", o, e.Code, e.Message)
		}
	}
	s, _ := buildSample(t).session(0, Options{Loose: true})
	if ex, how := s.Match("tools/call", []byte(call)); ex == nil || how != MatchLoose {
		t.Errorf("--loose: %v %s", ex, how)
	}
	if ex, how := s.Match("initialize", []byte(`{"clientInfo":{"name":"other"}}`)); ex == nil {
		t.Errorf("initialize of another client: %v %s", ex, how)
	}
}

// TestEmptyArgumentsMatch: no arguments, null and {} ask the same, as the
// Inspector's prompts/get {"name":…,"arguments":{}} does of a recording
// made without them.
func TestEmptyArgumentsMatch(t *testing.T) {
	for _, p := range []string{`{"name":"p"}`, `{"name":"p","arguments":{}}`, `{"name":"p","arguments":null}`, `{"_meta":{},"arguments":{},"name":"p"}`} {
		if c, name, _ := canonical("prompts/get", []byte(p)); c != `{"name":"p"}` || name != "p" {
			t.Errorf("canonical(%s) = %s, %s", p, c, name)
		}
	}
	if c, _, _ := canonical("prompts/get", []byte(`{"name":"p","arguments":{"a":"1"}}`)); c == `{"name":"p"}` {
		t.Error("arguments that are set were dropped")
	}
}
