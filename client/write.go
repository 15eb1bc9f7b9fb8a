package client

import (
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// outItem is one message waiting to be written: a request (p set), or a
// notification or response of sonde's.
type outItem struct {
	p      *pending
	raw    []byte
	method string
	id     jsonrpc.ID // for responses to the server's requests
}

// writeQueue is a bounded FIFO between callers and the single writer
// goroutine. Pushing never blocks: callers are never held up by a server
// that stopped reading.
type writeQueue struct {
	mu       sync.Mutex
	items    []outItem
	limit    int
	stopped  bool
	draining bool // pop ends once the queue is empty
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
}

func (q *writeQueue) init(limit int) {
	q.limit = limit
	q.wake = make(chan struct{}, 1)
	q.quit = make(chan struct{})
	q.done = make(chan struct{})
}

// push appends it, or reports false when the queue is full or stopped.
func (q *writeQueue) push(it outItem) bool {
	q.mu.Lock()
	if q.stopped || q.draining || len(q.items) >= q.limit {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// maxBatchBytes bounds the bytes of one batch of popped items (a single
// item may be larger).
const maxBatchBytes = 64 << 10

// popBatch waits for at least one item, then appends to dst the items queued
// (in order), up to maxBatchBytes, or only the first unless many; it returns
// false once the queue is stopped.
func (q *writeQueue) popBatch(dst []outItem, many bool) ([]outItem, bool) {
	for {
		q.mu.Lock()
		if q.stopped {
			q.mu.Unlock()
			return dst, false
		}
		if len(q.items) > 0 {
			n, size := 0, 0
			for n < len(q.items) && (n == 0 || many && size+len(q.items[n].raw) <= maxBatchBytes) {
				size += len(q.items[n].raw)
				n++
			}
			dst = append(dst, q.items[:n]...)
			clear(q.items[:n])
			q.items = q.items[n:]
			q.mu.Unlock()
			return dst, true
		}
		if q.draining {
			q.mu.Unlock()
			return dst, false
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-q.quit:
		}
	}
}

// drain refuses new items and lets the writer finish what is queued, then
// stop. Idempotent.
func (q *writeQueue) drain() {
	q.mu.Lock()
	q.draining = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// stop makes pop return false and drops what is queued. Idempotent.
func (q *writeQueue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.stopped {
		q.stopped = true
		q.items = nil
		close(q.quit)
	}
}

// writeLoop is the only writer of conn. Before writing a request it checks,
// under the client's lock, that the request is still pending: a request that
// was settled while queued (timeout, cancel) is never written. The frame and
// the request's sent transition are emitted as the bytes are handed to the
// connection, so no response can appear in the stream before its request.
//
// A connection that is a transport.BatchWriter (stdio) gets everything queued
// at once (up to maxBatchBytes) in one write system call: those requests are
// handed to the connection together, and when that write fails, every one
// of them fails as its own write would have. Any other connection gets one
// message at a time, each checked just before its write.
func (c *Client) writeLoop(conn transport.Conn) {
	defer close(c.out.done)
	bw, batches := conn.(transport.BatchWriter)
	var items, sending []outItem
	var raws [][]byte
	for {
		var ok bool
		items, ok = c.out.popBatch(items[:0], batches)
		if !ok {
			return
		}
		if !batches {
			if it := items[0]; c.beforeWrite(it) {
				c.watch.writeStarted(it)
				err := conn.Write(it.raw)
				c.watch.writeEnded()
				if err != nil {
					c.mu.Lock()
					c.writeFailedLocked(it, err)
					c.mu.Unlock()
				}
			}
			clear(items)
			continue
		}
		sending, raws = sending[:0], raws[:0]
		for _, it := range items {
			if c.beforeWrite(it) {
				sending = append(sending, it)
				raws = append(raws, it.raw)
			}
		}
		clear(items)
		if len(sending) > 0 {
			c.watch.writeStarted(sending...)
			err := bw.WriteBatch(raws)
			c.watch.writeEnded()
			if err != nil {
				c.mu.Lock()
				for _, it := range sending {
					c.writeFailedLocked(it, err)
				}
				c.mu.Unlock()
			}
		}
		clear(sending)
		clear(raws)
	}
}

// beforeWrite records the frame as sent, or reports false for a request
// that settled while it was queued.
func (c *Client) beforeWrite(it outItem) bool {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if it.p != nil {
		if c.pending[it.p.id] != it.p {
			return false
		}
		it.p.wstate, it.p.sentAt = written, now
	}
	c.stats.Sent++
	f := transport.Frame{Dir: transport.Out, Time: now, Raw: it.raw}
	f.Msg.Method = it.method
	switch {
	case it.p != nil:
		f.Msg.Kind, f.Msg.ID = jsonrpc.KindRequest, jsonrpc.Int(it.p.id)
	case it.id.IsValid():
		f.Msg.Kind, f.Msg.ID = jsonrpc.KindResponse, it.id
	default:
		f.Msg.Kind = jsonrpc.KindNotification
	}
	c.hub.emit(Event{Time: now, Kind: EvFrame, Frame: &FrameInfo{Frame: f, Verdict: VerdictSent}})
	if it.p != nil && it.p.held {
		// Written while its clock stands still: it stays held.
		c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.Out, ID: jsonrpc.Int(it.p.id), Method: it.p.method, Tool: it.p.tool, State: StateHeld, RetryOf: it.p.retryOf}})
	} else if it.p != nil {
		c.hub.emit(Event{Time: now, Kind: EvRequest, Req: &ReqInfo{Dir: transport.Out, ID: jsonrpc.Int(it.p.id), Method: it.p.method, Tool: it.p.tool, State: StateSent, Deadline: it.p.deadline, RetryOf: it.p.retryOf}})
	}
	return true
}

// writeFailedLocked settles a request whose bytes could not be written (its
// frame event is followed by this note). The server has usually exited (its
// exit will settle the rest) or closed its stdin.
func (c *Client) writeFailedLocked(it outItem, err error) {
	c.hub.emit(Event{Kind: EvNote, Note: it.method + " " + it.id.String() + ": write failed: " + err.Error()})
	if it.p == nil || c.pending[it.p.id] != it.p {
		return
	}
	if c.closed {
		c.settleLocked(it.p, outcome{state: StateClosed, err: newErr(CodeClosed, "%s %s: client closed before it was written", it.p.method, idText(it.p.id))})
		return
	}
	c.settleLocked(it.p, outcome{state: StateExited, err: &Error{Code: CodeProcessExit, Message: it.p.method + " " + idText(it.p.id) + ": could not write to the server (it exited or closed its stdin): " + err.Error(), Err: err}})
}
