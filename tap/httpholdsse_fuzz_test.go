package tap

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"testing/iotest"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
)

// FuzzSSEHoldUnheld: any stream a server sends, in any chunking, passes an
// sseHold whose breakpoint holds none of it byte for byte (events whole or
// not, comments, CR line ends, a byte order mark, a stream cut mid-event).
func FuzzSSEHoldUnheld(f *testing.F) {
	for _, s := range []string{sseFirst + sseLast, "data: x\r\n\r\ndata: {}\n", "\xef\xbb\xbfdata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", ": c\n\n\n", "event: endpoint\ndata: /m\n\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, stream []byte, oneByte bool) {
		e := hold.New(hold.Options{Timeout: hold.Forever})
		defer e.Close()
		if _, err := e.Add("method:sonde/never/sent"); err != nil {
			t.Fatal(err)
		}
		if got := throughSSEHold(t, e, stream, oneByte); !bytes.Equal(got, stream) {
			t.Fatalf("unheld stream changed:\n%q\nwant\n%q", got, stream)
		}
	})
}

// throughSSEHold passes stream (read a byte at a time when oneByte) through
// an sseHold of a proxy with e, and returns what the host gets.
func throughSSEHold(t *testing.T, e *hold.Engine, stream []byte, oneByte bool) []byte {
	t.Helper()
	p := &Proxy{opts: ProxyOptions{Hold: e, MaxMessageBytes: 1 << 16}, closed: make(chan struct{})}
	var r io.Reader = bytes.NewReader(stream)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	resp := &http.Response{Body: io.NopCloser(r), Header: http.Header{}, Request: req}
	p.holdSSE(resp, &exchange{})
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSSEHoldDoesNotBlock: an event held in a stream does not hold back the
// events after it: they reach the host first; released, the held one
// follows, as it came (its id: line kept), and the stream ends once the
// server's has and nothing of it is held. An edit keeps the event's lines
// and replaces its data.
func TestSSEHoldDoesNotBlock(t *testing.T) {
	e := hold.New(hold.Options{Timeout: hold.Forever})
	defer e.Close()
	if _, err := e.Add("id:1"); err != nil {
		t.Fatal(err)
	}
	const (
		one = "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
		two = "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"
	)
	for _, edit := range []bool{false, true} {
		p := &Proxy{opts: ProxyOptions{Hold: e, MaxMessageBytes: 1 << 16}, closed: make(chan struct{})}
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
		resp := &http.Response{Body: io.NopCloser(bytes.NewReader([]byte(one + two))), Header: http.Header{}, Request: req}
		p.holdSSE(resp, &exchange{})
		first := make([]byte, len(two))
		if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != two {
			t.Fatalf("first on the host's stream: %q %v, want the event after the held one", first, err)
		}
		l := e.List()
		if len(l) != 1 {
			t.Fatalf("held %+v", l)
		}
		want := one
		// The host reads on (a decision's write waits for its reader).
		type read struct {
			b   []byte
			err error
		}
		got := make(chan read, 1)
		go func() { b, err := io.ReadAll(resp.Body); got <- read{b, err} }()
		if edit {
			if err := e.Edit(client.HoldBySocket, l[0].Handle, []byte(`{"jsonrpc":"2.0","id":1,"result":{"edited":1}}`)); err != nil {
				t.Fatal(err)
			}
			want = "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"edited\":1}}\n\n"
		} else if err := e.Release(client.HoldBySocket, l[0].Handle); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.err != nil || string(r.b) != want {
			t.Fatalf("after the decision: %q %v, want %q", r.b, r.err, want)
		}
	}
}
