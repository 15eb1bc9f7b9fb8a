package client

import (
	"context"
	"errors"
	"io"
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
