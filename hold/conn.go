package hold

import (
	"errors"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/transport"
)

// ErrConnClosed is what a held frame's delivery reports when its Conn
// closed first (the decision is noted; the frame went nowhere).
var ErrConnClosed = errors.New("the connection is closed")

// connQueue bounds the frames waiting for Read (the server's, and the
// held ones let go); past it the pump waits for the reader.
const connQueue = 64

// Conn is a transport.Conn of sonde's own session whose frames are
// offered to an Engine: every frame written (Out, to the server) and
// read (In, from it). A frame no breakpoint matches passes as it would
// without the wrapper. A held write returns at once; its release (or
// edit) is written to the inner Conn later, writes serialised; the answer
// to a held request of sonde's comes back as a frame to Read, and the
// server never sees the request. A held frame of the server's is handed
// to Read when it is let go. A pump goroutine reads the inner Conn; Close
// ends it, after releasing the frames this Conn holds.
type Conn struct {
	inner transport.Conn
	e     *Engine

	wmu sync.Mutex // serialises writes to inner

	frames   chan readItem // for Read, in the order let go
	readDone chan struct{} // closed when the pump ends; readErr set before
	readErr  error
	closing  chan struct{} // closed by Close
	pumped   chan struct{} // closed when the pump goroutine has returned

	mu     sync.Mutex
	mine   map[string]bool // handles of the frames this Conn offered and still holds
	closed bool
	once   sync.Once
	cerr   error
}

// readItem is one Read's result: a frame, or an error the reader goes on
// after (a line too long, a failed HTTP exchange).
type readItem struct {
	f   transport.Frame
	err error
}

// NewConn wraps inner so that its frames are offered to e, and starts the
// pump that reads inner.
func NewConn(inner transport.Conn, e *Engine) *Conn {
	c := &Conn{inner: inner, e: e, frames: make(chan readItem, connQueue), readDone: make(chan struct{}),
		closing: make(chan struct{}), pumped: make(chan struct{}), mine: map[string]bool{}}
	go c.pump()
	return c
}

// Dialer wraps what dial connects with a Conn offering its frames to e.
func Dialer(dial client.Dialer, e *Engine) client.Dialer {
	return func(obs transport.Observer) (transport.Conn, error) {
		inner, err := dial(obs)
		if err != nil {
			return nil, err
		}
		return NewConn(inner, e), nil
	}
}

// pump reads the inner Conn: each frame is offered (In) and, unless held,
// queued for Read. Once Close has begun it reads on, discarding, until the
// inner Conn ends, so that Read's last error is the inner Conn's (the
// process's exit).
func (c *Conn) pump() {
	defer close(c.pumped)
	discard := false
	for {
		f, err := c.inner.Read()
		if err != nil && !goesOn(err) {
			c.readErr = err
			close(c.readDone)
			return
		}
		if discard {
			continue
		}
		if err == nil {
			if h := c.e.OfferHandle(client.In, f.Raw, c.deliverIn); h != "" {
				c.own(h)
				continue
			}
		}
		discard = !c.queue(readItem{f: f, err: err})
	}
}

// goesOn reports whether the client reads on after err.
func goesOn(err error) bool {
	var tooLong *transport.LineTooLongError
	var xe *transport.ExchangeError
	return errors.As(err, &tooLong) || errors.As(err, &xe)
}

// own notes that handle is this Conn's (unless it was let go already).
func (c *Conn) own(handle string) {
	c.mu.Lock()
	c.mine[handle] = true
	c.mu.Unlock()
}

func (c *Conn) disown(handle string) {
	c.mu.Lock()
	delete(c.mine, handle)
	c.mu.Unlock()
}

// queue hands f to Read; false once Close has begun.
func (c *Conn) queue(it readItem) bool {
	select {
	case c.frames <- it:
		return true
	case <-c.closing:
		return false
	}
}

// deliverIn carries out the decision on a held frame of the server's:
// on to Read (released, edited), or back to the server (an answer to a
// request of the server's).
func (c *Conn) deliverIn(o Outcome) error {
	c.disown(o.Handle)
	switch {
	case o.Frame == nil:
		return nil // dropped
	case o.Back():
		return c.write(o.Frame)
	}
	if !c.queue(readItem{f: transport.NewInFrame(o.Frame, time.Now())}) {
		return ErrConnClosed
	}
	return nil
}

// deliverOut carries out the decision on a held frame of sonde's: on to
// the server (released, edited), or back to Read (the answer).
func (c *Conn) deliverOut(o Outcome) error {
	c.disown(o.Handle)
	switch {
	case o.Frame == nil:
		return nil
	case o.Back():
		if !c.queue(readItem{f: transport.NewInFrame(o.Frame, time.Now())}) {
			return ErrConnClosed
		}
		return nil
	}
	return c.write(o.Frame)
}

func (c *Conn) write(raw []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrConnClosed
	}
	return c.inner.Write(raw)
}

// Read returns the next frame for the client: the server's frames no
// breakpoint held, and the held ones as they are let go.
func (c *Conn) Read() (transport.Frame, error) {
	select {
	case it := <-c.frames:
		return it.f, it.err
	case <-c.readDone:
		select {
		case it := <-c.frames: // what was queued before the end
			return it.f, it.err
		default:
			return transport.Frame{}, c.readErr
		}
	}
}

// Write offers raw (Out) and, unless a breakpoint holds it, writes it.
func (c *Conn) Write(raw []byte) error {
	if h := c.e.OfferHandle(client.Out, raw, c.deliverOut); h != "" {
		c.own(h)
		return nil
	}
	return c.write(raw)
}

// Close releases the frames this Conn holds (sonde's own go to the
// server first), then closes the inner Conn and waits for the pump.
func (c *Conn) Close() error {
	c.once.Do(func() {
		close(c.closing) // a frame let go to Read from now on goes nowhere
		c.mu.Lock()
		handles := make([]string, 0, len(c.mine))
		for _, h := range c.e.handles() {
			if c.mine[h] {
				handles = append(handles, h)
			}
		}
		c.mu.Unlock()
		for _, h := range handles {
			_ = c.e.Release(client.HoldByEnd, h) // one let go meanwhile: no matter
		}
		c.wmu.Lock()
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.wmu.Unlock()
		c.cerr = c.inner.Close()
		<-c.pumped
	})
	return c.cerr
}

// Kill ends the server at once when the inner Conn can.
func (c *Conn) Kill() {
	if k, ok := c.inner.(interface{ Kill() }); ok {
		k.Kill()
	}
}

// Abort closes the inner Conn without grace when it can (else as Close).
func (c *Conn) Abort() error {
	if a, ok := c.inner.(interface{ Abort() error }); ok {
		return a.Abort()
	}
	return c.inner.Close()
}
