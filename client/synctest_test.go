package client

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// stuckConn is an in-memory server that never reads: every Write blocks
// until Close, and Read blocks until Close.
type stuckConn struct {
	closeOnce sync.Once
	closed    chan struct{}
	mu        sync.Mutex
	writes    [][]byte
}

func newStuckConn() *stuckConn { return &stuckConn{closed: make(chan struct{})} }

func (c *stuckConn) Read() (transport.Frame, error) {
	<-c.closed
	return transport.Frame{}, io.EOF
}

func (c *stuckConn) Write(raw []byte) error {
	c.mu.Lock()
	c.writes = append(c.writes, raw)
	c.mu.Unlock()
	<-c.closed
	return transport.ErrStdinClosed
}

func (c *stuckConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// TestQueuedRequestTimesOutOnTime runs in a synctest bubble: with the writer
// stuck on a server that does not read, queued requests still fail exactly at
// their deadline, and are never handed to the connection.
func TestQueuedRequestTimesOutOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := newStuckConn()
		c := New(Options{Timeout: time.Second})
		if err := c.Connect(func(transport.Observer) (transport.Conn, error) { return conn, nil }); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.initialized = true // no handshake with this fake peer
		c.mu.Unlock()
		start := time.Now()
		first := c.Go(context.Background(), "tools/call", nil, CallOptions{})
		queued := c.Go(context.Background(), "tools/call", nil, CallOptions{Timeout: 300 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		cancelled := c.Go(ctx, "tools/call", nil, CallOptions{})
		time.AfterFunc(100*time.Millisecond, cancel)

		if _, err := cancelled.Wait(); !errors.Is(err, ErrAborted) || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("cancel: %v after %s", err, time.Since(start))
		}
		if _, err := queued.Wait(); !errors.Is(err, ErrTimeout) || time.Since(start) != 300*time.Millisecond {
			t.Fatalf("queued: %v after %s", err, time.Since(start))
		}
		if _, err := first.Wait(); !errors.Is(err, ErrTimeout) || time.Since(start) != time.Second {
			t.Fatalf("first: %v after %s", err, time.Since(start))
		}
		c.Close()
		conn.mu.Lock()
		defer conn.mu.Unlock()
		// Only the first request reached the connection; the cancel
		// notification for it was queued behind the stuck write and dropped
		// at close.
		if len(conn.writes) != 1 {
			t.Fatalf("%d writes: %q", len(conn.writes), conn.writes)
		}
	})
}

// slowConn takes 10ms per write and never answers.
type slowConn struct {
	stuckConn
}

func (c *slowConn) Write(raw []byte) error {
	c.mu.Lock()
	c.writes = append(c.writes, raw)
	c.mu.Unlock()
	select {
	case <-time.After(10 * time.Millisecond):
		return nil
	case <-c.closed:
		return transport.ErrStdinClosed
	}
}

// TestCloseDrainsQueuedCancel: a request times out while its own bytes are
// still being written, so its notifications/cancelled waits in the queue;
// Close lets the queue drain before closing the connection.
func TestCloseDrainsQueuedCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &slowConn{stuckConn: *newStuckConn()}
		c := New(Options{})
		if err := c.Connect(func(transport.Observer) (transport.Conn, error) { return conn, nil }); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.initialized = true
		c.mu.Unlock()
		call := c.Go(context.Background(), "tools/call", nil, CallOptions{Timeout: time.Millisecond})
		if _, err := call.Wait(); !errors.Is(err, ErrTimeout) {
			t.Fatalf("got %v", err)
		}
		c.Close()
		conn.mu.Lock()
		defer conn.mu.Unlock()
		if len(conn.writes) != 2 || !strings.Contains(string(conn.writes[1]), "notifications/cancelled") {
			t.Fatalf("writes %q: want the request, then its cancel", conn.writes)
		}
	})
}
