package tap

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"testing/iotest"

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
