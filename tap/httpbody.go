package tap

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"
)

// bodyWait bounds how long a streamed POST's handler, done, waits for a
// read of the host's body in flight (the host is still sending it) before
// it returns anyway.
const bodyWait = 5 * time.Second

// errBodyAfterHandler is what a streamed body gives a reader once its
// handler has returned: the connection it came from may already carry
// the host's next request.
var errBodyAfterHandler = errors.New("sonde tap: the request's handler has returned")

// takeBody reads a POST's body whole before it is forwarded, when it is
// no longer than MaxMessageBytes (an MCP message: nothing is lost by not
// streaming it). The transport may read a request's body on after the
// answer came back (RoundTrip may close it "even after RoundTrip
// returns"); a body read from the host's connection after the handler
// returned starts the HTTP/1 server's background read on a connection
// that serves the next request, and the server panics ("invalid
// concurrent Body.Read call") and drops the host's connection. A body in
// memory touches no connection. A longer or unreadable body is streamed
// in full duplex, and the returned func, called once the proxy has
// answered, ends its reads: it waits for a read in flight (bodyWait at
// most), and later reads fail. (The transport's Close does not reach the
// body: httputil.ReverseProxy hands it a body whose Close does nothing.)
func (p *Proxy) takeBody(w http.ResponseWriter, r *http.Request, ex *exchange) (wait func()) {
	if ex.hostBody != nil || ex.bodyWhole || r.Body == nil || r.Body == http.NoBody {
		return func() {}
	}
	max := p.opts.MaxMessageBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err == nil && len(body) <= max {
		r.Body.Close()
		ex.bodyWhole = true
		r.Body = wholeBody(body)
		return func() {}
	}
	g := &guardBody{r: io.MultiReader(bytes.NewReader(body), r.Body), c: r.Body, turn: make(chan struct{}, 1)}
	r.Body = g
	// The answer may come back before the body has all been sent (a
	// server answers once it has parsed enough): without full duplex,
	// the HTTP/1 server would close the body when the answer's headers
	// are written, and the transport would drop the upstream connection
	// mid-answer.
	_ = http.NewResponseController(w).EnableFullDuplex()
	return g.end
}

// guardBody is a streamed request body that reads nothing once its
// handler is done. turn is held by a read in flight and by end.
type guardBody struct {
	r    io.Reader
	c    io.Closer
	turn chan struct{}
	done bool // guarded by turn
}

func (g *guardBody) Read(b []byte) (int, error) {
	g.turn <- struct{}{}
	defer func() { <-g.turn }()
	if g.done {
		return 0, errBodyAfterHandler
	}
	return g.r.Read(b)
}

func (g *guardBody) Close() error { return g.c.Close() }

// end stops the body's reads: it takes the turn from a read in flight
// (bodyWait at most; then it gives up, and that read may still finish).
func (g *guardBody) end() {
	t := time.NewTimer(bodyWait)
	defer t.Stop()
	select {
	case g.turn <- struct{}{}:
		g.done = true
		<-g.turn
	case <-t.C:
	}
}
