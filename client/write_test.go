package client

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// batchConn is an in-memory transport.BatchWriter: its first write waits
// for release, and every write after the first fails when fail is set. It
// records the number of messages of each write, and says each on wrote
// once it is recorded.
type batchConn struct {
	entered, release chan struct{}
	wrote            chan int
	fail             bool
	mu               sync.Mutex
	sizes            []int
	closeOnce        sync.Once
	closed           chan struct{}
}

func newBatchConn(fail bool) *batchConn {
	return &batchConn{entered: make(chan struct{}), release: make(chan struct{}), wrote: make(chan int, 64), fail: fail, closed: make(chan struct{})}
}

func (c *batchConn) Read() (transport.Frame, error) {
	<-c.closed
	return transport.Frame{}, io.EOF
}

func (c *batchConn) Write(raw []byte) error { return c.WriteBatch([][]byte{raw}) }

func (c *batchConn) WriteBatch(raws [][]byte) error {
	c.mu.Lock()
	c.sizes = append(c.sizes, len(raws))
	first := len(c.sizes) == 1
	c.mu.Unlock()
	select {
	case c.wrote <- len(raws):
	default: // more writes than anyone waits for
	}
	if first {
		close(c.entered)
		<-c.release
		return nil
	}
	if c.fail {
		return errors.New("broken pipe")
	}
	return nil
}

func (c *batchConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// TestWritesBatched: the requests queued while a write is under way go out
// together in the next write, each with its sent frame; when that write
// fails, every request of it fails with MCP_PROCESS_EXIT, once.
func TestWritesBatched(t *testing.T) {
	for _, fail := range []bool{false, true} {
		name := "written"
		if fail {
			name = "write fails"
		}
		t.Run(name, func(t *testing.T) {
			conn := newBatchConn(fail)
			c := New(Options{Timeout: time.Minute})
			sub := c.Subscribe(1024)
			if err := c.Connect(func(transport.Observer) (transport.Conn, error) { return conn, nil }); err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.mu.Lock()
			c.initialized = true // no handshake with this peer
			c.mu.Unlock()
			c.Go(context.Background(), "tools/call", nil, CallOptions{})
			<-conn.entered
			var calls []*Call
			for range 5 {
				calls = append(calls, c.Go(context.Background(), "tools/call", nil, CallOptions{}))
			}
			close(conn.release)
			if fail {
				for _, call := range calls {
					if _, err := call.Wait(); !errors.Is(err, ErrProcessExit) {
						t.Errorf("call %s: %v, want MCP_PROCESS_EXIT", call.ID, err)
					}
				}
			}
			deadline := time.After(10 * time.Second) // guards against a hang only
			sent := 0
			for sent < 6 {
				select {
				case ev := <-sub.C:
					if ev.Kind == EvFrame && ev.Frame.Verdict == VerdictSent {
						sent++
					}
				case <-deadline:
					t.Fatalf("%d sent frames, want 6", sent)
				}
			}
			// A request's sent frame is emitted as its bytes are handed to
			// the connection, before the write returns: wait for the
			// second write itself before counting.
			for range 2 {
				select {
				case <-conn.wrote:
				case <-deadline:
					t.Fatal("no second write")
				}
			}
			conn.mu.Lock()
			defer conn.mu.Unlock()
			if len(conn.sizes) != 2 || conn.sizes[0] != 1 || conn.sizes[1] != 5 {
				t.Fatalf("writes of %v messages, want [1 5]", conn.sizes)
			}
		})
	}
}
