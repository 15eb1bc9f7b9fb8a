package tap

import (
	"bytes"
	"io"
	"net/http"
	"sync"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/transport"
)

// sseHold passes an SSE stream on its way to the host (a POST's answer or
// a GET stream), offering each message event's data to the Engine. An
// event no breakpoint holds is written as it came, in its place; while no
// breakpoint is enabled, bytes are written as they are read (as without
// breakpoints). A held event is taken out: the events after it go on, and
// the decision writes it later into the same stream (released: its bytes
// as they came; edited: the same event with the edit as its data,
// transport.ReplaceSSEData). The stream to the host ends once the
// server's has ended and nothing of it is held any more; a decision for a
// stream the host closed meanwhile fails (hold reports CodeUndelivered).
type sseHold struct {
	p   *Proxy
	ex  *exchange
	req *http.Request
	up  io.ReadCloser
	pw  *io.PipeWriter

	mu      sync.Mutex // pw's writes; pending, ended, endErr
	pending int        // events held
	ended   bool       // the server's stream ended (endErr: how)
	endErr  error
	once    sync.Once
}

// holdSSE makes resp's body an sseHold of it.
func (p *Proxy) holdSSE(resp *http.Response, ex *exchange) {
	pr, pw := io.Pipe()
	s := &sseHold{p: p, ex: ex, req: resp.Request, up: resp.Body, pw: pw}
	p.streamsMu.Lock()
	if p.streams == nil {
		p.streams = map[*sseHold]struct{}{}
	}
	p.streams[s] = struct{}{}
	p.streamsMu.Unlock()
	resp.Body = pr
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	go s.run()
}

// streamOf is the open stream of the legacy session key (nil: none).
func (p *Proxy) streamOf(key string) *sseHold {
	p.streamsMu.Lock()
	defer p.streamsMu.Unlock()
	for s := range p.streams {
		if k := s.ex.legacyKey.Load(); k != nil && *k == key {
			return s
		}
	}
	return nil
}

// write writes b to the host's stream, whole.
func (s *sseHold) write(b []byte) error {
	if s.req.Context().Err() != nil {
		return errHostGone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.pw.Write(b)
	return err
}

// run reads the server's stream to its end.
func (s *sseHold) run() {
	defer s.up.Close()
	var (
		ev      []byte // the current event's bytes (up to MaxMessageBytes)
		written int    // how many of them went to the host already
		atStart = true // the current event begins the stream
		buf     = make([]byte, 32<<10)
	)
	for {
		n, err := s.up.Read(buf)
		ev = append(ev, buf[:n]...)
		if n > 0 && !s.p.opts.Hold.Armed() {
			if s.write(buf[:n]) != nil {
				s.end(io.ErrClosedPipe)
				return
			}
			written = len(ev)
		}
		for {
			end := transport.SSEEventEnd(ev)
			if end < 0 {
				break
			}
			var werr error
			switch {
			case written >= end:
			case written > 0:
				werr = s.write(ev[written:end])
			default:
				werr = s.event(ev[:end], atStart)
			}
			if werr != nil {
				s.end(io.ErrClosedPipe)
				return
			}
			ev, written, atStart = ev[end:], max(0, written-end), false
		}
		if len(ev) > s.p.opts.MaxMessageBytes {
			// Too long to hold as one event: it passes as it comes.
			if s.write(ev[written:]) != nil {
				s.end(io.ErrClosedPipe)
				return
			}
			ev, written, atStart = ev[:0], 0, false
		}
		if err != nil {
			if written < len(ev) {
				s.write(ev[written:])
			}
			s.end(err)
			return
		}
		if len(ev) == 0 {
			ev = ev[:0:0] // let a big event's buffer go
		}
	}
}

// event writes one whole event, or offers its message to the Engine and
// takes it out of the stream when a breakpoint holds it.
func (s *sseHold) event(raw []byte, atStart bool) error {
	ev, ok := transport.ParseSSEEvent(raw, atStart)
	if !ok || !ev.HasData || (ev.Event != "" && ev.Event != "message") {
		return s.write(raw) // a comment, a priming event, or not a message (endpoint)
	}
	keep := bytes.Clone(raw)
	s.mu.Lock()
	s.pending++
	s.mu.Unlock()
	if s.p.offerHold(s.ex, client.In, ev.Data, func(o hold.Outcome) error { return s.deliver(keep, atStart, o) }) {
		return nil
	}
	s.mu.Lock()
	s.pending--
	s.mu.Unlock()
	return s.write(raw)
}

// deliver carries out the decision on a held event of the stream.
func (s *sseHold) deliver(raw []byte, atStart bool, o hold.Outcome) error {
	var err error
	switch {
	case o.Action == client.HoldDropped:
	case o.Back():
		// A request of the server's, answered in the host's place.
		err = s.p.answerServer(s.ex, s.req, o.Frame)
	case o.Action == client.HoldEdited:
		err = s.write(transport.ReplaceSSEData(raw, atStart, o.Frame))
	default:
		err = s.write(raw)
	}
	s.mu.Lock()
	s.pending--
	last := s.ended && s.pending == 0
	endErr := s.endErr
	s.mu.Unlock()
	if last {
		s.finish(endErr)
	}
	return err
}

// end records that the server's stream ended (err: io.EOF, or why), and
// ends the host's once nothing of it is held.
func (s *sseHold) end(err error) {
	s.mu.Lock()
	s.ended, s.endErr = true, err
	// A host gone takes what is held of its stream with it.
	last := s.pending == 0 || s.req.Context().Err() != nil
	s.mu.Unlock()
	if last {
		s.finish(err)
	}
}

// finish ends the host's stream, once.
func (s *sseHold) finish(err error) {
	s.once.Do(func() {
		s.p.streamsMu.Lock()
		delete(s.p.streams, s)
		s.p.streamsMu.Unlock()
		if err == io.EOF || err == io.ErrClosedPipe {
			s.pw.Close()
		} else {
			s.pw.CloseWithError(err)
		}
	})
}
