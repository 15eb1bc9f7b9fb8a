package hold

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestMain runs the fixture when the test binary is re-executed as it
// (conn_test.go), and checks for goroutines left running.
func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

// sink records what each Deliver was asked to do, in order.
type sink struct {
	mu  sync.Mutex
	out []Outcome
	err error
}

func (s *sink) deliver(o Outcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out = append(s.out, o)
	return s.err
}

func (s *sink) got() []Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Outcome(nil), s.out...)
}

func newEngine(t *testing.T, timeout time.Duration, exprs ...string) (*Engine, *[]client.Hold) {
	t.Helper()
	var mu sync.Mutex
	notes := &[]client.Hold{}
	e := New(Options{Timeout: timeout, Note: func(h client.Hold) { mu.Lock(); *notes = append(*notes, h); mu.Unlock() }})
	if err := e.Load(exprs, "", nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, notes
}

const (
	callSearch = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{}}}`
	callEcho   = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`
	answer3    = `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`
	answer4    = `{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`
)

// An answer is judged by its request: tool:search holds the response to
// the search call, not the echo one, and not the request itself with dir:in.
func TestOfferJudgesAnswerByRequest(t *testing.T) {
	e, notes := newEngine(t, Forever, "dir:in kind:response tool:search")
	var s sink
	for _, f := range []struct {
		dir  client.Direction
		raw  string
		held bool
	}{
		{client.Out, callSearch, false},
		{client.Out, callEcho, false},
		{client.In, answer4, false},
		{client.In, answer3, true},
	} {
		if got := e.Offer(f.dir, []byte(f.raw), s.deliver); got != f.held {
			t.Fatalf("Offer(%s) held=%v, want %v", f.raw, got, f.held)
		}
	}
	l := e.List()
	if len(l) != 1 || l[0].Handle != "h1" || l[0].Method != "tools/call" || l[0].Tool != "search" || l[0].ID != "3" || l[0].Direction != "in" {
		t.Fatalf("List = %+v", l)
	}
	if len(*notes) != 1 || (*notes)[0].Action != client.HoldHeld {
		t.Fatalf("notes = %+v", *notes)
	}
}

// Two held answers released in reverse order reach Deliver in that order.
func TestReleaseInOrderGiven(t *testing.T) {
	e, notes := newEngine(t, Forever, "dir:in kind:response")
	var s sink
	e.Offer(client.Out, []byte(callSearch), s.deliver)
	e.Offer(client.Out, []byte(callEcho), s.deliver)
	e.Offer(client.In, []byte(answer3), s.deliver)
	e.Offer(client.In, []byte(answer4), s.deliver)
	if err := e.Release(client.HoldBySocket, "h2", "h1"); err != nil {
		t.Fatal(err)
	}
	got := s.got()
	if len(got) != 2 || string(got[0].Frame) != answer4 || string(got[1].Frame) != answer3 {
		t.Fatalf("delivered %+v", got)
	}
	last := (*notes)[len(*notes)-1]
	if last.Action != client.HoldReleased || last.Order != 2 || last.Handle != "h1" || last.By != client.HoldBySocket {
		t.Fatalf("last note %+v", last)
	}
	if err := e.Release(client.HoldBySocket, "h1"); !errors.Is(err, ErrNoHandle) {
		t.Fatalf("second release: %v", err)
	}
}

// One unknown handle releases none.
func TestReleaseUnknownReleasesNone(t *testing.T) {
	e, _ := newEngine(t, Forever, "kind:request")
	var s sink
	e.Offer(client.Out, []byte(callSearch), s.deliver)
	if err := e.Release(client.HoldByUI, "h1", "h9"); !errors.Is(err, ErrNoHandle) || !strings.Contains(err.Error(), "h9") {
		t.Fatalf("err = %v", err)
	}
	if len(s.got()) != 0 || len(e.List()) != 1 {
		t.Fatalf("released something: %+v", s.got())
	}
}

func TestAutoContinue(t *testing.T) {
	e, notes := newEngine(t, 20*time.Millisecond, "kind:request")
	done := make(chan Outcome, 1)
	e.Offer(client.Out, []byte(callSearch), func(o Outcome) error { done <- o; return nil })
	select {
	case o := <-done:
		if o.By != client.HoldByTimeout || o.Action != client.HoldReleased || string(o.Frame) != callSearch {
			t.Fatalf("outcome %+v", o)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("never auto-continued")
	}
	if len(e.List()) != 0 {
		t.Fatal("still held")
	}
	_ = notes
}

func TestEditRefusalsKeepFrameHeld(t *testing.T) {
	e, _ := newEngine(t, Forever, "tool:search")
	var s sink
	e.Offer(client.Out, []byte(callEcho), s.deliver) // id 4 in flight
	e.Offer(client.Out, []byte(callSearch), s.deliver)
	for edit, want := range map[string]string{
		`{"jsonrpc":"2.0","id":3,`: "at byte",
		`[1,2]`:                    "not a JSON-RPC message",
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}`: "already has in flight",
		strings.Repeat(" ", MaxEditBytes+1):                          "over the",
	} {
		err := e.Edit(client.HoldByUI, "h1", []byte(edit))
		if !errors.Is(err, ErrBadEdit) || !strings.Contains(err.Error(), want) {
			t.Errorf("edit %.30q: %v, want %q", edit, err, want)
		}
	}
	if len(e.List()) != 1 || len(s.got()) != 0 {
		t.Fatal("a refused edit let the frame go")
	}
	if err := e.Edit(client.HoldByUI, "h1", []byte("{\n \"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"other\"}\n}")); err != nil {
		t.Fatal(err)
	}
	got := s.got()
	if len(got) != 1 || got[0].Action != client.HoldEdited || strings.Contains(string(got[0].Frame), "\n") || !strings.Contains(string(got[0].Frame), "other") {
		t.Fatalf("delivered %+v", got)
	}
}

func TestAnswerHeldRequest(t *testing.T) {
	e, notes := newEngine(t, Forever, "kind:request", "kind:response")
	var s sink
	e.Offer(client.Out, []byte(callSearch), s.deliver)
	e.Offer(client.In, []byte(answer4), s.deliver)
	if err := e.Answer(client.HoldBySocket, "h2", json.RawMessage(`{}`), nil); !errors.Is(err, ErrNotRequest) {
		t.Fatalf("answer of a response: %v", err)
	}
	if err := e.Answer(client.HoldBySocket, "h1", json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`), nil); err != nil {
		t.Fatal(err)
	}
	got := s.got()
	if len(got) != 1 || !got[0].Back() {
		t.Fatalf("delivered %+v", got)
	}
	m, err := jsonrpc.Decode(got[0].Frame)
	if err != nil || m.Kind != jsonrpc.KindResponse || m.ID != jsonrpc.Int(3) {
		t.Fatalf("answer %s: %v", got[0].Frame, err)
	}
	if err := e.Answer(client.HoldBySocket, "h2", nil, &jsonrpc.Error{Code: -1, Message: "x"}); !errors.Is(err, ErrNotRequest) {
		t.Fatal(err)
	}
	last := (*notes)[len(*notes)-1]
	if last.Action != client.HoldAnswered || string(last.Original) != callSearch {
		t.Fatalf("note %+v", last)
	}
}

func TestDetachReleasesAll(t *testing.T) {
	e, _ := newEngine(t, Forever, "kind:request")
	var s sink
	d1, d2 := e.Attach(), e.Attach()
	e.Offer(client.Out, []byte(callSearch), s.deliver)
	d1()
	d1() // idempotent
	if len(s.got()) != 0 {
		t.Fatal("released while a watcher remains")
	}
	d2()
	if got := s.got(); len(got) != 1 || got[0].By != client.HoldByDetach {
		t.Fatalf("delivered %+v", got)
	}
}

func TestCloseReleasesAndHoldsNothingMore(t *testing.T) {
	e, _ := newEngine(t, time.Hour, "kind:request")
	var s sink
	s.err = errors.New("stream closed")
	e.Offer(client.Out, []byte(callSearch), s.deliver)
	e.Close()
	if got := s.got(); len(got) != 1 || got[0].By != client.HoldByEnd {
		t.Fatalf("delivered %+v", got)
	}
	if e.Offer(client.Out, []byte(callEcho), s.deliver) {
		t.Fatal("held after Close")
	}
}

func TestUndeliveredIsReported(t *testing.T) {
	e, _ := newEngine(t, Forever, "kind:request")
	gone := func(Outcome) error { return errors.New("HTTP stream closed") }
	e.Offer(client.Out, []byte(callSearch), gone)
	e.Offer(client.Out, []byte(callEcho), gone)
	if err := e.Release(client.HoldByUI, "h1"); !errors.Is(err, ErrUndelivered) || !strings.Contains(err.Error(), "HTTP stream closed") {
		t.Fatalf("release: %v", err)
	}
	if err := e.Drop(client.HoldByUI, "h2"); err != nil {
		t.Fatalf("drop: %v (nothing was to be sent)", err)
	}
	if len(e.List()) != 0 {
		t.Fatal("an undelivered frame stays held")
	}
}

func TestLimits(t *testing.T) {
	e, notes := newEngine(t, Forever, "kind:notification")
	var s sink
	for range MaxHeld + 3 {
		e.Offer(client.In, []byte(`{"jsonrpc":"2.0","method":"notifications/message"}`), s.deliver)
	}
	if n := len(e.List()); n != MaxHeld {
		t.Fatalf("held %d, want %d", n, MaxHeld)
	}
	if len(*notes) != MaxHeld+3 {
		t.Fatalf("%d notes: frames passed past the limit must be noted", len(*notes))
	}
	for range MaxBreakpoints {
		e.Add("method:x")
	}
	if _, err := e.Add("method:y"); !errors.Is(err, ErrBadBreak) {
		t.Fatalf("breakpoint past the limit: %v", err)
	}
}

func TestBreakpointsManage(t *testing.T) {
	e, _ := newEngine(t, Forever)
	if _, err := e.Add("  "); !errors.Is(err, ErrBadBreak) {
		t.Fatal(err)
	}
	if _, err := e.Add(`tool:"x`); !errors.Is(err, ErrBadBreak) {
		t.Fatalf("bad query: %v", err)
	}
	b, _ := e.Add("kind:request")
	var s sink
	if err := e.SetEnabled(b.N, false); err != nil || e.Armed() {
		t.Fatal(err)
	}
	if e.Offer(client.Out, []byte(callSearch), s.deliver) {
		t.Fatal("a disabled breakpoint held")
	}
	if err := e.Remove(b.N); err != nil || e.Remove(b.N) == nil {
		t.Fatal("remove")
	}
	b2, _ := e.Add("kind:request")
	if b2.N == b.N {
		t.Fatal("a deleted breakpoint's number given again")
	}
}

func TestLoadFile(t *testing.T) {
	e, _ := newEngine(t, Forever)
	err := e.Load(nil, "b.txt", strings.NewReader("# comment\n\ntool:search\ntool:\"x\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "b.txt:4:") {
		t.Fatalf("err = %v", err)
	}
	if len(e.Breakpoints()) != 1 {
		t.Fatal(e.Breakpoints())
	}
}

func TestControl(t *testing.T) {
	e, _ := newEngine(t, Forever)
	var s sink
	st, rerr := e.Control(client.HoldBySocket, MethodAdd, json.RawMessage(`{"expr":"kind:request"}`))
	if rerr != nil || len(st.Breakpoints) != 1 {
		t.Fatal(rerr)
	}
	e.Offer(client.Out, []byte(callSearch), s.deliver)
	if _, rerr := e.Control(client.HoldBySocket, MethodRelease, nil); rerr == nil || rerr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("release without handles: %+v", rerr)
	}
	if _, rerr := e.Control(client.HoldBySocket, MethodDrop, json.RawMessage(`{"handle":"h7"}`)); rerr == nil || rerr.Code != CodeNoHandle {
		t.Fatalf("drop h7: %+v", rerr)
	}
	if _, rerr := e.Control(client.HoldBySocket, MethodEdit, json.RawMessage(`{"handle":"h1","frame":"x"}`)); rerr == nil || rerr.Code != CodeBadEdit {
		t.Fatalf("edit to a string: %+v", rerr)
	}
	st, rerr = e.Control(client.HoldBySocket, MethodAnswer, json.RawMessage(`{"handle":"h1","error":{"code":-32000,"message":"no"}}`))
	if rerr != nil || len(st.Held) != 0 {
		t.Fatalf("answer: %+v %+v", rerr, st)
	}
	if _, rerr := e.Control(client.HoldBySocket, "sonde/breaks/nope", nil); rerr == nil || rerr.Code != jsonrpc.CodeMethodNotFound {
		t.Fatal(rerr)
	}
	if !IsMethod(MethodWatch) || IsMethod("tools/call") {
		t.Fatal("IsMethod")
	}
}

// Releases racing a timer and Close deliver each frame once.
func TestConcurrentDecisionsDeliverOnce(t *testing.T) {
	e, _ := newEngine(t, time.Millisecond, "kind:request")
	var s sink
	for i := range 50 {
		raw, _ := jsonrpc.EncodeRequest(jsonrpc.Int(int64(i)), "ping", nil)
		e.Offer(client.Out, raw, s.deliver)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, h := range e.List() {
				_ = e.Release(client.HoldByUI, h.Handle)
			}
		})
	}
	wg.Wait()
	e.Close()
	seen := map[string]int{}
	for _, o := range s.got() {
		seen[o.Handle]++
	}
	for h, n := range seen {
		if n != 1 {
			t.Fatalf("%s delivered %d times", h, n)
		}
	}
	if len(seen) != 50 {
		t.Fatalf("%d delivered, want 50", len(seen))
	}
}
