package tap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// injectRun runs a tap with an injector over a host stand-in that writes
// through a pipe; hostOut holds what the host received.
type injectRun struct {
	in      *Injector
	host    *io.PipeWriter
	hostOut *proctest.Buffer
	obsEvs  chan []client.Event
	done    chan error
}

func startInject(t *testing.T) *injectRun {
	t.Helper()
	opts := fixtureOptions(t)
	r := &injectRun{in: NewInjector(), hostOut: &proctest.Buffer{}, obsEvs: make(chan []client.Event, 1), done: make(chan error, 1)}
	opts.Injector = r.in
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
		r.obsEvs <- evs
	}()
	go func() {
		_, _, err := Run(opts, pr, r.hostOut, io.Discard)
		o.Close()
		r.done <- err
	}()
	t.Cleanup(func() {
		pw.Close()
		<-r.done
	})
	return r
}

func (r *injectRun) write(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(r.host, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (r *injectRun) await(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(r.hostOut.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the host did not get %s:\n%s", want, r.hostOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestInjectStdio: an injected request waits for the host's handshake,
// goes between the host's lines under an id of the tap's own, and its
// answer comes back with the caller's id while the host never sees it;
// the host's own calls, before, during and after, are answered as without
// the injector; the recording has the injected request noted.
func TestInjectStdio(t *testing.T) {
	r := startInject(t)
	injected := make(chan []byte, 1)
	errc := make(chan error, 1)
	go func() {
		a, err := r.in.Inject(context.Background(), []byte(`{"jsonrpc":"2.0","id":"mine","method":"tools/call","params":{"name":"echo","arguments":{"value":"from the watcher"}}}`))
		injected <- a
		errc <- err
	}()
	r.write(t, initLine)
	r.await(t, `"id":1,`)
	select {
	case <-injected:
		t.Fatal("injected before the host's handshake was done")
	case <-time.After(400 * time.Millisecond):
	}
	// A half line from the host: the injection waits for its end.
	io.WriteString(r.host, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/call",`)
	time.Sleep(400 * time.Millisecond)
	io.WriteString(r.host, `"params":{"name":"echo","arguments":{"value":"host","delay_ms":300}}}`+"\n")
	a := <-injected
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(a, []byte(`"id":"mine"`)) || !bytes.Contains(a, []byte("from the watcher")) {
		t.Fatalf("answer %s", a)
	}
	r.await(t, `"id":2,`)
	r.write(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	r.await(t, `"id":3,`)
	got := r.hostOut.String()
	if strings.Contains(got, "from the watcher") || strings.Contains(got, `"id":"sonde-`) {
		t.Errorf("the host saw the injected answer:\n%s", got)
	}
	if n := strings.Count(got, "\n"); n != 3 {
		t.Errorf("the host got %d lines, want 3:\n%s", n, got)
	}
	r.host.Close()
	if err := <-r.done; err != nil {
		t.Fatal(err)
	}
	r.done <- nil // for the cleanup
	var noted, resolved bool
	for _, ev := range <-r.obsEvs {
		if ev.Kind == client.EvNote && strings.Contains(ev.Note, "sonde inject: request ") {
			noted = true
		}
		if ev.Kind == client.EvRequest && ev.Req.State == client.StateResolved && strings.HasPrefix(ev.Req.ID.String(), `"sonde-`) {
			resolved = true
		}
	}
	if !noted || !resolved {
		t.Errorf("recording: injected request noted %v, resolved %v", noted, resolved)
	}
	if _, err := r.in.Inject(context.Background(), []byte(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)); !errors.Is(err, ErrTapEnded) {
		t.Errorf("inject after the end: %v", err)
	}
}

// TestInjectRefusals: what is not a request is refused; a caller that
// gives up stops waiting.
func TestInjectRefusals(t *testing.T) {
	in := NewInjector()
	if _, err := in.Inject(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/x"}`)); !errors.Is(err, ErrNotRequest) {
		t.Errorf("a notification: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := in.Inject(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no session: %v", err)
	}
}

// TestHostFilterHoldsOnlyWhileWaiting: with nothing injected, bytes pass
// as they come (a half line too); with an answer awaited, a half line is
// held until it is whole, and the answer is taken out.
func TestHostFilterHoldsOnlyWhileWaiting(t *testing.T) {
	in := NewInjector()
	var out bytes.Buffer
	f := &hostFilter{in: in, w: &out, max: 1 << 10}
	f.Write([]byte(`{"id":1,`))
	if out.String() != `{"id":1,` {
		t.Fatalf("a half line was held with nothing awaited: %q", out.String())
	}
	c := make(chan []byte, 1)
	in.pending[`"sonde-1-1"`] = c
	in.count.Add(1)
	f.Write([]byte("\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":\"sonde-1-1\","))
	if out.String() != `{"id":1,"result":{}}`+"\n" {
		t.Fatalf("out %q", out.String())
	}
	f.Write([]byte("\"result\":{}}\n{\"id\":2}\n"))
	if out.String() != `{"id":1,"result":{}}`+"\n"+`{"id":2}`+"\n" {
		t.Fatalf("out %q", out.String())
	}
	if a := <-c; string(a) != `{"jsonrpc":"2.0","id":"sonde-1-1","result":{}}` {
		t.Errorf("answer %q", a)
	}
}

// TestInjectLateAnswer: a caller that gave up before the answer: the
// answer, when it comes, still does not reach the host.
func TestInjectLateAnswer(t *testing.T) {
	r := startInject(t)
	r.write(t, initLine)
	r.await(t, `"id":1,`)
	r.write(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := r.in.Inject(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"value":"too late","delay_ms":500}}}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v, want the caller's deadline", err)
	}
	r.write(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"value":"after","delay_ms":900}}}`)
	r.await(t, `"id":2,`) // answered after the late one
	if got := r.hostOut.String(); strings.Contains(got, "too late") {
		t.Errorf("the host got the late injected answer:\n%s", got)
	}
}
