package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Errors of Inject.
var (
	// ErrNotRequest: what was given to inject is not a JSON-RPC request.
	ErrNotRequest = errors.New("not a JSON-RPC request")
	// ErrTapEnded: the session ended before the answer came.
	ErrTapEnded = errors.New("the tapped session ended")
	// ErrNoSession: an HTTP tap's host has not opened a session yet.
	ErrNoSession = errors.New("the host has not opened a session through the tap yet")
	// ErrSessionGone: the HTTP session asked for has ended (or the tap
	// keeps too many newer ones to remember it).
	ErrSessionGone = errors.New("the host's session has ended")
	// ErrLegacyInject: a legacy HTTP+SSE session takes no injected
	// request, because the server would answer it on the host's own
	// stream, where the host would see it.
	ErrLegacyInject = errors.New("a legacy HTTP+SSE session takes no injected requests: the server answers them on the host's own event stream, which the tap forwards as it is")
)

// Injector sends requests of sonde's own into a tapped stdio session (a
// watcher's "call this tool in the host's session"). Each is written
// between two of the host's lines, never inside one, and only once the
// host's handshake is done; it goes under an id of the tap's own (a
// string the host's ids cannot be), and its answer is taken out of the
// server's stdout before the host's: the host never sees it. Every
// injected request is noted in the recording.
//
// An Injector is used by one Run (Options.Injector); Inject may be called
// from any goroutine, before or during the run.
type Injector struct {
	mu   sync.Mutex
	cond *sync.Cond
	t    *tap      // set by Run
	dst  io.Writer // the server's stdin (or the fault rules' writer)

	// writing: a write to the server's stdin is under way (the host's
	// chunk or an injected line). The server's stdin has two writers, and
	// they take turns through this flag, not by holding mu across the
	// write: a write to a server that is not reading blocks, and mu is
	// what the server → host path takes to find an injected answer, so
	// holding it there would stop the tap reading the server's stdout
	// (and a single-threaded server, blocked writing it, never reads
	// again). No lock of the tap is held across a write or a send that
	// can block.
	writing   bool
	atStart   bool   // the last byte written to the server ended a line
	first     []byte // the host's first line, until it is whole
	firstDone bool
	ready     bool // the handshake is done (legacy), or there is none (modern)
	ended     bool
	seen      []byte // the end of what the host wrote, to find a split method name

	seq     uint64
	prefix  string
	pending map[string]chan []byte // by the injected id's JSON text
	gone    []string               // ids whose caller gave up: a late answer is still not the host's
	count   atomic.Int32           // len(pending)+len(gone), read without the lock
}

// maxGone bounds the injected ids remembered after their caller gave up.
const maxGone = 256

// NewInjector returns an injector for one tap run.
func NewInjector() *Injector {
	in := &Injector{atStart: true, pending: map[string]chan []byte{}}
	in.cond = sync.NewCond(&in.mu)
	return in
}

// attach wires the injector to a run: w is the server's stdin as the
// tap writes it.
func (in *Injector) attach(t *tap, w io.Writer) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.t, in.dst = t, w
	in.prefix = "sonde-" + strconv.Itoa(t.proc.Pid()) + "-"
	in.cond.Broadcast()
}

// end wakes every Inject waiting: the session is over.
func (in *Injector) end() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.ended = true
	for id, c := range in.pending {
		close(c)
		delete(in.pending, id)
	}
	in.gone = nil
	in.count.Store(0)
	in.cond.Broadcast()
}

// initializedMethod is the notification that ends a legacy handshake.
var initializedMethod = []byte(`"notifications/initialized"`)

// serverWriter is the host → server path with an injector: each chunk
// is offered to the observer and written in the host's turn on the
// server's stdin (Injector.writing), so an injected line goes only
// between two of the host's lines.
type serverWriter struct {
	in *Injector
	// quiet: the chunks are not offered (breakpoints come first, and the
	// forwarder offers what the host sent).
	quiet bool
}

func (w serverWriter) Write(p []byte) (int, error) {
	in := w.in
	in.mu.Lock()
	for in.writing {
		in.cond.Wait()
	}
	in.writing = true
	staged := !w.quiet && in.t.stage(chunk{s: streamIn, data: append([]byte(nil), p...), t: time.Now()})
	in.mu.Unlock()

	n, err := in.dst.Write(p) // may block: no lock held

	in.mu.Lock()
	in.writing = false
	if n > 0 {
		in.atStart = p[n-1] == '\n'
		in.watchHandshake(p[:n])
	}
	in.cond.Broadcast()
	in.mu.Unlock()
	if staged {
		in.t.queue.wake()
	}
	return n, err
}

// watchHandshake follows what the host wrote: its first line says the
// era (initialize: legacy, whose handshake ends with
// notifications/initialized; anything else: modern, no handshake).
func (in *Injector) watchHandshake(p []byte) {
	if in.ready {
		return
	}
	if !in.firstDone {
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			in.first = append(in.first, p[:i]...)
			in.firstDone = true
			id, method := jsonrpc.ScanID(in.first)
			if !method || !id.IsValid() || !bytes.Contains(in.first, []byte(`"initialize"`)) {
				in.ready = true // the modern era: no handshake
			}
		} else if len(in.first) < 1<<16 {
			in.first = append(in.first, p...)
		}
	}
	in.seen = append(in.seen, p...)
	if bytes.Contains(in.seen, initializedMethod) {
		in.ready = true
	}
	if keep := len(initializedMethod); len(in.seen) > keep {
		in.seen = append(in.seen[:0], in.seen[len(in.seen)-keep:]...)
	}
}

// Inject sends req (a JSON-RPC request line) into the session and returns
// the server's answer, with req's own id put back. It waits for the
// host's handshake and for a line boundary, and for the answer until ctx
// ends.
func (in *Injector) Inject(ctx context.Context, req []byte) ([]byte, error) {
	msg, ownID, err := parseInjected(req)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() {
		in.mu.Lock()
		in.cond.Broadcast()
		in.mu.Unlock()
	})
	defer stop()

	in.mu.Lock()
	for !in.ended && ctx.Err() == nil && (in.t == nil || !in.ready || !in.atStart || in.writing) {
		in.cond.Wait()
	}
	if in.ended {
		in.mu.Unlock()
		return nil, ErrTapEnded
	}
	if err := ctx.Err(); err != nil {
		in.mu.Unlock()
		return nil, err
	}
	in.seq++
	id, _ := json.Marshal(in.prefix + strconv.FormatUint(in.seq, 10))
	line := injectedLine(msg, id)
	answer := make(chan []byte, 1) // take sends once, under mu: never blocks
	in.pending[string(id)] = answer
	in.count.Add(1)
	in.writing = true // this line's turn on the server's stdin
	t := in.t
	in.mu.Unlock()

	// In this turn no chunk of the host's is staged or written, so the
	// note and the line are observed in the order they went. The note
	// may wait for room in the observer's queue, and the write for the
	// server to read: neither holds mu.
	method := string(msg["method"])
	t.note(fmt.Sprintf("sonde inject: request %s %s written to the server between the host's lines; its answer is not forwarded to the host", id, method))
	t.offer(chunk{s: streamIn, data: line, t: time.Now()})
	_, err = in.dst.Write(line)
	in.mu.Lock()
	in.writing = false
	in.cond.Broadcast()
	in.mu.Unlock()
	if err != nil {
		in.forget(string(id))
		return nil, fmt.Errorf("writing to the server: %w", err)
	}
	select {
	case a, ok := <-answer:
		if !ok {
			return nil, ErrTapEnded
		}
		return withID(a, ownID), nil
	case <-ctx.Done():
		in.forget(string(id))
		return nil, ctx.Err()
	}
}

// parseInjected reads a request to inject: its members, and its own id
// (which the answer gets back in place of the tap's).
func parseInjected(req []byte) (map[string]json.RawMessage, json.RawMessage, error) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(req, &msg); err != nil || msg["method"] == nil || msg["id"] == nil {
		return nil, nil, ErrNotRequest
	}
	return msg, msg["id"], nil
}

// injectedLine is the line written to the server for a request parsed
// by parseInjected, under the tap's id: one line (json.Marshal compacts
// every member, so no newline of the request's own is left in it), with
// its newline.
func injectedLine(msg map[string]json.RawMessage, id json.RawMessage) []byte {
	msg["id"] = id
	line, _ := json.Marshal(msg)
	return append(line, '\n')
}

// forget stops waiting for id's answer; a late one is still taken out
// (while maxGone later give-ups have not pushed it out).
func (in *Injector) forget(id string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.pending[id]; !ok {
		return
	}
	delete(in.pending, id)
	if len(in.gone) == maxGone {
		in.gone = in.gone[1:]
		in.count.Add(-1)
	}
	in.gone = append(in.gone, id)
}

// take hands line to its Inject call when it answers an injected request,
// and reports whether it did (then the host must not get it).
func (in *Injector) take(line []byte) bool {
	id, method := jsonrpc.ScanID(line)
	if method || !id.IsValid() {
		return false
	}
	key := id.String()
	in.mu.Lock()
	defer in.mu.Unlock()
	c, ok := in.pending[key]
	if !ok {
		for i, g := range in.gone {
			if g == key {
				in.gone = append(in.gone[:i], in.gone[i+1:]...)
				in.count.Add(-1)
				go in.t.note(fmt.Sprintf("sonde inject: a late answer to %s, after its caller gave up: not forwarded to the host", key))
				return true
			}
		}
		return false
	}
	delete(in.pending, key)
	in.count.Add(-1)
	c <- append([]byte(nil), bytes.TrimRight(line, "\r\n")...)
	return true
}

// WireIDMember is the member the answer to an injected request carries
// besides JSON-RPC's own: the id the request had on the wire (the tap's,
// "sonde-PID-N" or "sonde-inject-N"), under which the recording and the
// panes show it.
const WireIDMember = "sonde/wireId"

// withID returns the answer line with its id replaced by id, and the id
// it had kept as WireIDMember.
func withID(line []byte, id json.RawMessage) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	if wire, ok := msg["id"]; ok {
		msg[WireIDMember] = wire
	}
	msg["id"] = id
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return out
}

// hostFilter is the server → host path with an injector: the answers to
// injected requests are taken out, every other byte goes on as it came.
// While no injected request waits, chunks pass as they are; while one
// does, whole lines are looked at (a line not yet whole is held, up to
// max bytes, then passed on).
type hostFilter struct {
	in *Injector
	// taken, when set, is given each answer taken out (the host's stdout
	// is observed as written: breakpoints; the recording still has them).
	taken func([]byte)
	w     io.Writer
	max   int
	mid   bool   // the last byte passed on did not end a line
	part  []byte // the start of a line held while an answer is awaited
	out   []byte
}

func (f *hostFilter) Write(p []byte) (int, error) {
	n := len(p)
	if len(f.part) == 0 && f.in.count.Load() == 0 {
		if _, err := f.w.Write(p); err != nil {
			return 0, err
		}
		if n > 0 {
			f.mid = p[n-1] != '\n'
		}
		return n, nil
	}
	f.out = f.out[:0]
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if f.mid {
			// The rest of a line that began before: it passes.
			if i < 0 {
				f.out = append(f.out, p...)
				break
			}
			f.out = append(f.out, p[:i+1]...)
			p, f.mid = p[i+1:], false
			continue
		}
		if i < 0 {
			if len(f.part)+len(p) > f.max {
				f.out = append(append(f.out, f.part...), p...)
				f.part, f.mid = f.part[:0], true
				break
			}
			f.part = append(f.part, p...)
			break
		}
		line := p[:i+1]
		if len(f.part) > 0 {
			line = append(f.part, line...)
		}
		p = p[i+1:]
		if !f.in.take(line) {
			f.out = append(f.out, line...)
		} else if f.taken != nil {
			if len(f.out) > 0 { // what came before it is observed before it
				if _, err := f.w.Write(f.out); err != nil {
					return 0, err
				}
				f.out = f.out[:0]
			}
			f.taken(line)
		}
		f.part = f.part[:0]
	}
	if len(f.out) > 0 {
		if _, err := f.w.Write(f.out); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// flush passes on a line held when the stream ends.
func (f *hostFilter) flush() {
	if len(f.part) > 0 {
		f.w.Write(f.part)
		f.part = f.part[:0]
	}
}
