package tap

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// breakRun runs a tap with breakpoints over a host stand-in that writes
// through a pipe; hostOut holds what the host received.
type breakRun struct {
	b       *Breaks
	host    *io.PipeWriter
	hostOut *proctest.Buffer
	evs     chan []client.Event
	done    chan error
	closed  bool
}

func startBreaks(t *testing.T, timeout time.Duration, inj bool, exprs ...string) *breakRun {
	t.Helper()
	opts := fixtureOptions(t)
	r := &breakRun{b: NewBreaks(hold.Options{Timeout: timeout}), hostOut: &proctest.Buffer{}, evs: make(chan []client.Event, 1), done: make(chan error, 1)}
	if err := r.b.Load(exprs, "", nil); err != nil {
		t.Fatal(err)
	}
	opts.Breaks = r.b
	if inj {
		opts.Injector = NewInjector()
	}
	o := client.NewObserver(0)
	sub := o.Subscribe(1 << 16)
	opts.Observer = o
	pr, pw := io.Pipe()
	r.host = pw
	go func() {
		var evs []client.Event
		for ev := range sub.C {
			evs = append(evs, ev)
		}
		r.evs <- evs
	}()
	go func() {
		_, _, err := Run(opts, pr, r.hostOut, io.Discard)
		o.Close()
		r.done <- err
	}()
	t.Cleanup(func() { r.end(t) })
	return r
}

// end closes the host's stdin and returns the events observed.
func (r *breakRun) end(t *testing.T) []client.Event {
	if r.closed {
		return nil
	}
	r.closed = true
	r.host.Close()
	if err := <-r.done; err != nil {
		t.Error(err)
	}
	return <-r.evs
}

func (r *breakRun) write(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(r.host, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (r *breakRun) await(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(r.hostOut.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the host did not get %s:\n%s", want, r.hostOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// awaitHeld waits until n frames are held.
func (r *breakRun) awaitHeld(t *testing.T, n int) []hold.Held {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l := r.b.List()
		if len(l) == n {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("held %+v, want %d", l, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func echoCall(id int, value string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": "echo", "arguments": map[string]any{"value": value}}})
	return string(b)
}

// TestBreaksReleaseReverse: two held answers released in reverse order
// reach the host in that order, each whole on its line, while frames that
// match nothing pass byte for byte (the initialize answer, a ping); the
// recording has each step.
func TestBreaksReleaseReverse(t *testing.T) {
	r := startBreaks(t, hold.Forever, false, "dir:in kind:response tool:echo")
	r.write(t, initLine)
	r.await(t, `"serverInfo"`)
	r.write(t, echoCall(3, "three"), echoCall(4, "four"))
	l := r.awaitHeld(t, 2)
	r.write(t, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	r.await(t, `"id":5`)
	if strings.Contains(r.hostOut.String(), "three") {
		t.Fatal("a held answer reached the host")
	}
	// The server may answer 4 before 3: the handles are taken by id.
	byID := map[string]string{}
	for _, h := range l {
		byID[h.ID] = h.Handle
	}
	if err := r.b.Release(client.HoldBySocket, byID["4"], byID["3"]); err != nil {
		t.Fatal(err)
	}
	r.await(t, "three")
	r.await(t, "four")
	out := r.hostOut.String()
	if strings.Index(out, `"id":4`) > strings.Index(out, `"id":3`) {
		t.Errorf("not in the order released:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("a line is not one message: %q", line)
		}
	}
	evs := r.end(t)
	var steps []client.HoldAction
	var framesIn int
	for _, ev := range evs {
		if ev.Hold != nil {
			steps = append(steps, ev.Hold.Action)
		}
		if ev.Kind == client.EvFrame && ev.Frame.Dir == client.In {
			framesIn++
		}
	}
	if want := []client.HoldAction{"held", "held", "released", "released"}; strings.Join(actions(steps), ",") != strings.Join(actions(want), ",") {
		t.Errorf("steps %v", steps)
	}
	if framesIn != 4 {
		t.Errorf("%d frames from the server observed, want 4 (as the host received them)", framesIn)
	}
}

func actions(a []client.HoldAction) []string {
	s := make([]string, len(a))
	for i, x := range a {
		s[i] = string(x)
	}
	return s
}

// TestBreaksAnswerEditDrop: a held request answered never reaches the
// server (its answer is the one given, with the request's id); an edited
// one reaches it edited; a refused edit leaves the frame held; with the
// injector too (the path of a tap with a socket).
func TestBreaksAnswerEditDrop(t *testing.T) {
	r := startBreaks(t, hold.Forever, true, "dir:out tool:echo")
	r.write(t, initLine, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.await(t, `"serverInfo"`)
	r.write(t, echoCall(3, "orig"))
	h := r.awaitHeld(t, 1)[0]
	if err := r.b.Edit(client.HoldBySocket, h.Handle, []byte(`{"jsonrpc":"2.0","id":3,`)); !errors.Is(err, hold.ErrBadEdit) {
		t.Fatalf("bad edit: %v", err)
	}
	r.awaitHeld(t, 1)
	if err := r.b.Answer(client.HoldBySocket, h.Handle, json.RawMessage(`{"content":[{"type":"text","text":"from sonde"}]}`), nil); err != nil {
		t.Fatal(err)
	}
	r.await(t, "from sonde")
	r.write(t, echoCall(4, "orig"))
	h = r.awaitHeld(t, 1)[0]
	if err := r.b.Edit(client.HoldBySocket, h.Handle, []byte(echoCall(4, "edited"))); err != nil {
		t.Fatal(err)
	}
	r.await(t, `"edited"`)
	r.write(t, echoCall(5, "gone"))
	h = r.awaitHeld(t, 1)[0]
	if err := r.b.Drop(client.HoldBySocket, h.Handle); err != nil {
		t.Fatal(err)
	}
	r.write(t, `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	r.await(t, `"id":6`)
	out := r.hostOut.String()
	if strings.Contains(out, `"orig"`) || strings.Contains(out, `"id":5`) || strings.Count(out, `"id":3`) != 1 {
		t.Errorf("the server saw a frame it should not have:\n%s", out)
	}
}

// TestBreaksUnmatchedByteExact: with a breakpoint set that matches
// nothing, what the host gets is byte for byte what it gets without one,
// lines cut anywhere, CRLF, a last line without its newline.
func TestBreaksUnmatchedByteExact(t *testing.T) {
	in := initLine + "\r\n" + echoCall(2, "a\nb") + "\n" + `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"big","arguments":{"bytes":300000}}}` + "\n" + "not json\n" + `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	direct, _, _ := events(t, fixtureOptions(t), in)
	opts := fixtureOptions(t)
	b := NewBreaks(hold.Options{Timeout: hold.Forever})
	if _, err := b.Add("tool:nothing-has-this-name"); err != nil {
		t.Fatal(err)
	}
	opts.Breaks = b
	tapped, _, _ := events(t, opts, in)
	// The server answers concurrent calls in any order: compare lines.
	sorted := func(s string) string { l := strings.SplitAfter(s, "\n"); slices.Sort(l); return strings.Join(l, "") }
	if sorted(direct) != sorted(tapped) {
		t.Errorf("with a breakpoint: %d bytes, without: %d", len(tapped), len(direct))
	}
	if !bytes.Contains([]byte(tapped), []byte(`"id":3`)) {
		t.Errorf("no answer to id 3")
	}
}
