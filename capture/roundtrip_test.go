package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// faultySession runs a session against the fixture with several faults:
// noise on stdout before every response, responses sent late and twice,
// out-of-order answers, a timeout followed by its late answer, progress, a
// JSON-RPC error, and a crash mid-response with a call pending.
func faultySession(t *testing.T, l *live) {
	t.Helper()
	ctx := context.Background()
	if _, err := l.c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, a := range []string{`{"value":"slow","delay_ms":300}`, `{"value":"fast","delay_ms":5}`} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := l.c.CallTool(ctx, "echo", json.RawMessage(a), client.CallOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	_, _, err := l.c.CallTool(ctx, "echo", json.RawMessage(`{"value":"too late"}`), client.CallOptions{Timeout: 20 * time.Millisecond})
	if !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("short call: %v, want MCP_TIMEOUT", err)
	}
	if _, _, err := l.c.CallTool(ctx, "progress", json.RawMessage(`{"steps":2,"interval_ms":5}`), client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.c.CallTool(ctx, "fail", nil, client.CallOptions{}); !errors.Is(err, client.ErrRemote) {
		t.Fatalf("fail: %v, want MCP_ERROR", err)
	}
	if _, _, err := l.c.CallTool(ctx, "crash", nil, client.CallOptions{}); !errors.Is(err, client.ErrProcessExit) {
		t.Fatalf("crash: %v, want MCP_PROCESS_EXIT", err)
	}
	<-l.c.Done()
}

// readAll reads every record of the capture at path.
func readAll(t *testing.T, path string) (*Reader, []Record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return readRecords(t, f)
}

// readRecords reads every record from r, failing the test on an error.
func readRecords(t *testing.T, r io.Reader) (*Reader, []Record) {
	t.Helper()
	rd, err := NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for rec, err := range rd.All() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return rd, recs
}

func TestRoundTripFaultySession(t *testing.T) {
	l := startLive(t, liveOpts{faults: []string{"--fault", "stdout-noise,late-response,duplicate-response", "--late-ms", "60"}})
	faultySession(t, l)
	want, sum := l.finish()
	if sum.Err != nil || sum.Missed != 0 {
		t.Fatalf("summary %+v", sum)
	}
	rd, recs := readAll(t, l.path)
	if rd.Truncated() || len(rd.Skipped()) != 0 {
		t.Fatalf("warnings on a clean capture: %v", rd.Warnings())
	}
	h := rd.Header()
	if h.Transport != "stdio" || !reflect.DeepEqual(h.Command, l.argv) || h.Sonde != "test" {
		t.Errorf("header %+v", h)
	}
	var got []client.Event
	var session, end *Record
	for i, rec := range recs {
		ev, ok, err := h.Event(rec)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, ev)
		}
		switch rec.Type {
		case TypeSession:
			session = &recs[i]
		case TypeEnd:
			end = &recs[i]
		}
	}
	if session == nil || session.ProtocolVersion != "2025-11-25" || session.ServerName != "sonde-fixture" {
		t.Errorf("session record %+v", session)
	}
	if end == nil || end.Events != uint64(len(want)) || end.Missed != 0 {
		t.Errorf("end record %+v, want %d events", end, len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("read back %d events, the client emitted %d", len(got), len(want))
	}
	seen := map[string]bool{}
	for i := range want {
		compareEvent(t, i, want[i], got[i])
		switch want[i].Kind {
		case client.EvFrame:
			seen["frame "+string(want[i].Frame.Verdict)] = true
		case client.EvRequest:
			seen["request "+string(want[i].Req.State)] = true
		default:
			seen[want[i].Kind.String()] = true
		}
	}
	// The session must have exercised what the test claims to cover.
	for _, k := range []string{"frame sent", "frame resolved", "frame error", "frame late", "frame duplicate", "frame malformed", "frame progress",
		"request timeout", "request exited", "request progress", "stderr", "process"} {
		if !seen[k] {
			t.Errorf("the session had no %s event", k)
		}
	}
}

// compareEvent fails unless the event read back is the one emitted.
func compareEvent(t *testing.T, i int, w, g client.Event) {
	t.Helper()
	fail := func(what string, a, b any) {
		t.Errorf("event %d (seq %d, %s): %s: emitted %v, read back %v", i, w.Seq, w.Kind, what, a, b)
	}
	if w.Seq != g.Seq || w.Kind != g.Kind {
		fail("seq/kind", []any{w.Seq, w.Kind}, []any{g.Seq, g.Kind})
		return
	}
	if !w.Time.Equal(g.Time) {
		fail("time", w.Time, g.Time)
	}
	switch w.Kind {
	case client.EvFrame:
		wf, gf := w.Frame, g.Frame
		if wf.Dir != gf.Dir || !bytes.Equal(wf.Raw, gf.Raw) || wf.Verdict != gf.Verdict || wf.Detail != gf.Detail {
			fail("frame", frameText(wf), frameText(gf))
		}
		if wf.Msg.Kind != gf.Msg.Kind || wf.Msg.ID != gf.Msg.ID || wf.Msg.Method != gf.Msg.Method {
			fail("message", wf.Msg, gf.Msg)
		}
		if errText(wf.Err) != errText(gf.Err) || reflect.TypeOf(wf.Err) != reflect.TypeOf(gf.Err) {
			fail("decode error", wf.Err, gf.Err)
		}
	case client.EvRequest:
		wr, gr := *w.Req, *g.Req
		werr, gerr := wr.Err, gr.Err
		wr.Err, gr.Err = nil, nil
		if !wr.Deadline.Equal(gr.Deadline) {
			fail("deadline", wr.Deadline, gr.Deadline)
		}
		wr.Deadline, gr.Deadline = time.Time{}, time.Time{}
		if !reflect.DeepEqual(wr, gr) {
			fail("request", wr, gr)
		}
		if errText(werr) != errText(gerr) || client.CodeOf(werr) != client.CodeOf(gerr) {
			fail("request error", werr, gerr)
		}
	case client.EvStderr:
		if !bytes.Equal(w.Stderr, g.Stderr) {
			fail("stderr", string(w.Stderr), string(g.Stderr))
		}
	case client.EvProcess:
		wp, gp := w.Proc, g.Proc
		if wp.What != gp.What || wp.Pid != gp.Pid || !reflect.DeepEqual(wp.Argv, gp.Argv) || wp.Signal != gp.Signal || errText(wp.Err) != errText(gp.Err) {
			fail("process", wp, gp)
		}
		if (wp.Exit == nil) != (gp.Exit == nil) {
			fail("exit", wp.Exit, gp.Exit)
		} else if wp.Exit != nil {
			we, ge := *wp.Exit, *gp.Exit
			if !we.Time.Equal(ge.Time) {
				fail("exit time", we.Time, ge.Time)
			}
			we.Time, ge.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(we, ge) {
				fail("exit", we, ge)
			}
		}
	case client.EvNote:
		if w.Note != g.Note {
			fail("note", w.Note, g.Note)
		}
	}
}

func frameText(f *client.FrameInfo) string {
	return f.Dir.String() + " " + string(f.Verdict) + " " + f.Detail + " " + strconv.Quote(string(f.Raw))
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestIndexMatchesReader: the index lists the same records, at offsets
// where ReadRecordAt finds them again.
func TestIndexMatchesReader(t *testing.T) {
	l := startLive(t, liveOpts{faults: []string{"--fault", "stdout-noise"}})
	if _, err := l.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.c.CallTool(context.Background(), "echo", json.RawMessage(`{"value":"x"}`), client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	l.finish()
	_, recs := readAll(t, l.path)
	f, err := Open(l.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Index.Entries) != len(recs) {
		t.Fatalf("index has %d entries, the reader %d records", len(f.Index.Entries), len(recs))
	}
	for i, e := range f.Index.Entries {
		r := recs[i]
		if e.Offset != r.Offset || e.Line != r.Line || e.Seq != r.Seq || e.T != r.T || e.Type != r.Type {
			t.Errorf("entry %d %+v, record %+v", i, e, r)
		}
		back, err := f.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("record %d read at its offset differs:\n%+v\n%+v", i, back, r)
		}
	}
	if i := f.Index.At(recs[len(recs)-1].T); f.Index.Entries[i].T != recs[len(recs)-1].T {
		t.Errorf("At(last T) = %d", i)
	}
	// From streams the same records from any position.
	for _, from := range []int{0, len(recs) / 2, len(recs) - 1, len(recs)} {
		rd, err := f.From(from)
		if err != nil {
			t.Fatal(err)
		}
		var got []Record
		for r, err := range rd.All() {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		if want := recs[from:]; !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("From(%d): %d records, want %d (first %+v)", from, len(got), len(want), got)
		}
	}
	if _, err := f.From(len(recs) + 1); err == nil {
		t.Error("From past the end succeeded")
	}
	ev, ok, err := f.Event(0)
	if err != nil || !ok || ev.Seq != recs[0].Seq {
		t.Errorf("Event(0) = %+v, %v, %v", ev, ok, err)
	}
}

// TestFramesBeforeExit checks the ordering promise carried into the
// file: every frame comes before the process exit.
func TestFramesBeforeExit(t *testing.T) {
	l := startLive(t, liveOpts{faults: []string{"--fault", "exit-mid-call"}})
	if _, err := l.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, err := l.c.CallTool(context.Background(), "echo", json.RawMessage(`{"value":"x"}`), client.CallOptions{})
	if !errors.Is(err, client.ErrProcessExit) {
		t.Fatalf("%v, want MCP_PROCESS_EXIT", err)
	}
	l.finish()
	rd, recs := readAll(t, l.path)
	exitAt := -1
	for i, r := range recs {
		if r.Type == TypeProcess && r.What == string(client.ProcExit) {
			exitAt = i
			if r.Exit == nil || r.Exit.Code != 3 || !strings.Contains(r.Exit.Stderr, "exit-mid-call") {
				t.Errorf("exit record %+v", r.Exit)
			}
		}
		if r.Type == TypeFrame && exitAt >= 0 {
			t.Errorf("frame after the exit: %+v", r)
		}
	}
	// The half-written line is recorded as a malformed frame.
	var partial bool
	for _, r := range recs {
		ev, ok, _ := rd.Header().Event(r)
		if ok && ev.Kind == client.EvFrame && ev.Frame.Verdict == client.VerdictMalformed && strings.Contains(ev.Frame.Detail, "incomplete line") {
			partial = true
		}
	}
	if exitAt < 0 || !partial {
		t.Errorf("exit at %d, partial frame %v", exitAt, partial)
	}
}

// Format 1.1: a retry's RetryOf and a server request's params survive the
// round trip through JSON (params redacted like frames).
func TestRequestFieldsOneOne(t *testing.T) {
	red, err := NewRedactor(nil, []string{"s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	enc := encoder{start: start, redact: red}
	h := Header{Start: start}
	for _, ev := range []client.Event{
		{Seq: 1, Time: start, Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(5), Method: "tools/call", State: client.StateQueued, RetryOf: jsonrpc.Int(4)}},
		{Seq: 2, Time: start, Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.In, ID: jsonrpc.String("input:1:confirm"), Method: "elicitation/create", State: client.StateReceived, Params: json.RawMessage(`{"message":"s3cret?"}`)}},
	} {
		line, err := json.Marshal(enc.record(ev))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(line, []byte("s3cret")) {
			t.Fatalf("secret in the record: %s", line)
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		back, ok, err := h.Event(rec)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", line, ok, err)
		}
		if back.Req.RetryOf != ev.Req.RetryOf || back.Req.ID != ev.Req.ID {
			t.Errorf("%s read back as %+v", line, back.Req)
		}
		if ev.Req.Params != nil && string(back.Req.Params) != `{"message":"«redacted»?"}` {
			t.Errorf("params read back as %s", back.Req.Params)
		}
	}
}
