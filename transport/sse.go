package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sonde-mcp/sonde/internal/lines"
)

// SSEEvent is one server-sent event as it was on the wire.
type SSEEvent struct {
	// Raw holds the exact bytes of the event: every line with its
	// terminator, up to and including the blank line that ended it.
	Raw []byte
	// Event is the event type ("" when the event named none: "message").
	Event string
	// ID is the event id; HasID says an id line was present (an empty id
	// resets the last event id).
	ID    string
	HasID bool
	// Data is the event's data lines joined by "\n"; HasData says at least
	// one data line was present.
	Data    []byte
	HasData bool
	// Retry is the reconnection delay the server asked for; HasRetry says a
	// valid retry line was present.
	Retry    time.Duration
	HasRetry bool
	// Comments counts comment lines (":" keep-alives); Unknown holds up to
	// a few lines that named no SSE field, for diagnosis.
	Comments int
	Unknown  [][]byte
}

// IsMessage reports whether the event carries a message: a "message" (or
// unnamed) event with data that is not empty. Priming events (an id and an
// empty data line), keep-alives and retry-only events are not messages.
func (e *SSEEvent) IsMessage() bool {
	if e.Event != "" && e.Event != "message" {
		return false
	}
	d := bytes.TrimSpace(e.Data)
	return len(d) > 0 && !bytes.Equal(d, []byte("{}"))
}

// utf8BOM is the byte order mark a stream may start with.
const utf8BOM = "\xEF\xBB\xBF"

// maxUnknownLines bounds SSEEvent.Unknown.
const maxUnknownLines = 4

// ErrSSEEventTooLong matches any *SSEEventTooLongError with errors.Is.
var ErrSSEEventTooLong = errors.New("SSE event too long")

// SSEEventTooLongError reports an event larger than the reader's cap. The
// stream cannot be read further.
type SSEEventTooLongError struct {
	Limit  int
	Prefix []byte
}

// Error says how large an event may be.
func (e *SSEEventTooLongError) Error() string {
	return fmt.Sprintf("SSE event exceeds %d bytes (--max-line-bytes)", e.Limit)
}

// Is makes errors.Is(err, ErrSSEEventTooLong) true.
func (e *SSEEventTooLongError) Is(target error) bool { return target == ErrSSEEventTooLong }

// SSEIncompleteError reports a stream that ended inside an event (no blank
// line after its last field). Such an event is never dispatched; Raw holds
// its bytes so they can be shown.
type SSEIncompleteError struct{ Raw []byte }

// Error describes the cut.
func (e *SSEIncompleteError) Error() string {
	return fmt.Sprintf("stream ended inside an SSE event (%d bytes, no blank line after it): not dispatched", len(e.Raw))
}

// SSEReader parses a text/event-stream body into events, keeping each
// event's raw bytes. Lines may end in "\r\n", "\n" or "\r". Memory is
// bounded by the cap on one event.
type SSEReader struct {
	br        *bufio.Reader
	max       int
	pendingCR bool // the last line ended in "\r": skip a "\n" that follows
	line      []byte
	term      []byte
	ev        SSEEvent
	started   bool // at least one field or comment line in ev
	begun     bool // the first line was read (a leading BOM is dropped from it)

	// A line longer than the read buffer is gathered in blocks (long) and
	// joined once, behind a copy of the event's bytes so far: whole is then
	// ev.Raw followed by the line (line is its tail), with room for the rest
	// of the event, and becomes the event's Raw without another copy.
	long  lines.Blocks
	whole []byte
}

// wholeSlack is the room left after a joined long line for the rest of its
// event (its terminator, the blank line, an id line).
const wholeSlack = 256

// NewSSEReader returns a reader of events of at most max bytes each.
func NewSSEReader(r io.Reader, max int) *SSEReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return newSSEReader(bufio.NewReaderSize(r, sseBufBytes), max)
}

// sseBufBytes is the read buffer of an SSEReader.
const sseBufBytes = 4 << 10

// newSSEReader is NewSSEReader over a given buffered reader (reused by HTTP
// for the response streams: the reader copies what it returns out of br).
func newSSEReader(br *bufio.Reader, max int) *SSEReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &SSEReader{br: br, max: max}
}

// Next returns the next event. At the end of the stream it returns io.EOF,
// or an *SSEIncompleteError first when the stream stopped inside an event.
// An event over the cap yields an *SSEEventTooLongError, after which the
// reader must not be used again.
func (s *SSEReader) Next() (SSEEvent, error) {
	for {
		err := s.readLine()
		if err != nil {
			if s.started && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
				raw := append(s.ev.Raw, s.line...)
				s.reset()
				return SSEEvent{}, &SSEIncompleteError{Raw: raw}
			}
			return SSEEvent{}, err
		}
		if len(s.ev.Raw)+len(s.line)+len(s.term) > s.max {
			return SSEEvent{}, &SSEEventTooLongError{Limit: s.max, Prefix: firstN(s.ev.Raw, s.line, prefixBytes)}
		}
		line, owned := s.line, false
		if s.whole != nil {
			// A long line, already behind the event's bytes: the event
			// takes the buffer, and its fields may point into it.
			n := len(s.whole)
			s.ev.Raw = append(s.whole, s.term...)
			line, owned = s.ev.Raw[n-len(s.line):n:n], true
			s.whole, s.line = nil, nil
		} else {
			s.ev.Raw = append(append(s.ev.Raw, s.line...), s.term...)
		}
		if !s.begun {
			// The standard drops one byte order mark at the start of the
			// stream; Raw keeps it.
			s.begun = true
			line = bytes.TrimPrefix(line, []byte(utf8BOM))
		}
		if len(line) == 0 {
			if !s.started {
				s.ev.Raw = s.ev.Raw[:0]
				continue
			}
			ev := s.ev
			s.reset()
			return ev, nil
		}
		s.started = true
		s.ev.apply(line, owned)
	}
}

func (s *SSEReader) reset() {
	s.ev = SSEEvent{}
	s.started = false
}

// readLine reads the next line into s.line and its terminator into s.term.
// It reads what is buffered in bulk, so long data lines cost no per-byte
// calls; a line longer than the cap stops being buffered at the cap.
func (s *SSEReader) readLine() error {
	s.line, s.term = s.line[:0], s.term[:0]
	s.long.Reset()
	for {
		if s.br.Buffered() == 0 {
			if _, err := s.br.Peek(1); err != nil {
				if s.long.Len() > 0 {
					s.line = s.long.Join(nil)
				}
				if len(s.line) > 0 && errors.Is(err, io.EOF) {
					return io.ErrUnexpectedEOF
				}
				return err
			}
		}
		buf, _ := s.br.Peek(s.br.Buffered())
		if s.pendingCR {
			s.pendingCR = false
			if buf[0] == '\n' {
				s.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			if len(s.ev.Raw)+s.long.Len()+len(buf) > s.max {
				return &SSEEventTooLongError{Limit: s.max, Prefix: firstN(s.ev.Raw, s.long.Prefix(buf, prefixBytes), prefixBytes)}
			}
			s.long.Add(buf)
			s.br.Discard(len(buf))
			continue
		}
		if s.long.Len() > 0 {
			w := make([]byte, 0, len(s.ev.Raw)+s.long.Len()+i+wholeSlack)
			w = append(w, s.ev.Raw...)
			w = s.long.AppendTo(w, buf[:i])
			s.whole, s.line = w, w[len(s.ev.Raw):]
		} else {
			s.line = append(s.line, buf[:i]...)
		}
		s.term = append(s.term, buf[i])
		if buf[i] == '\r' {
			if i+1 < len(buf) {
				if buf[i+1] == '\n' {
					s.term = append(s.term, '\n')
					i++
				}
			} else {
				s.pendingCR = true
			}
		}
		s.br.Discard(i + 1)
		return nil
	}
}
