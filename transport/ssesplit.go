package transport

import (
	"bytes"
	"strconv"
	"time"
)

// SSESplitter is SSEReader's parser for bytes pushed to it rather than
// read (a tap's copy of a stream it forwards): the same lines, the same
// fields (the rules of the HTML standard's event-stream parsing, shared
// with SSEReader), the same cap on one event, with the same 256-byte
// prefix kept of an event over it. What it holds is bounded by the cap,
// never what the caller forwards. The zero value is not usable: use
// NewSSESplitter.
type SSESplitter struct {
	max      int
	raw      []byte // the event so far, with its line terminators
	lineAt   int    // where the current line starts in raw
	lineLen  int    // bytes in the current line (kept or not)
	cr       bool   // the last line ended in "\r": a "\n" that follows is its terminator's
	ev       SSEEvent
	started  bool // at least one field or comment line in ev
	begun    bool // the first line of the stream was ended (its BOM dropped)
	skipping bool // discarding up to the next blank line (an event over the cap, or cut)
}

// NewSSESplitter returns a splitter of events of at most max bytes each
// (with their line terminators and the blank line that ends them; max <= 0
// means DefaultMaxLineBytes).
func NewSSESplitter(max int) *SSESplitter {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &SSESplitter{max: max}
}

// Feed parses the next chunk of the stream. For each event it completes it
// calls emit with the event (its Raw a fresh copy) and a nil error; for an
// event over the cap, once, with an empty event and an
// *SSEEventTooLongError, as soon as the event passes the cap, after which
// the rest of that event (up to its blank line) is discarded. A blank line
// that ends in "\r" dispatches at once: a "\n" after it, in the next chunk,
// is dropped (it belongs to no event's Raw).
func (s *SSESplitter) Feed(chunk []byte, emit func(SSEEvent, error)) {
	for len(chunk) > 0 {
		if s.cr {
			s.cr = false
			if chunk[0] == '\n' {
				if s.started {
					s.keep(chunk[:1], emit)
					s.lineAt = len(s.raw)
				}
				chunk = chunk[1:]
				continue
			}
		}
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			s.keep(chunk, emit)
			s.lineLen += len(chunk)
			return
		}
		s.keep(chunk[:i], emit)
		s.lineLen += i
		j := i + 1
		if chunk[i] == '\r' {
			switch {
			case j == len(chunk):
				s.cr = true
			case chunk[j] == '\n':
				j++
			}
		}
		s.keep(chunk[i:j], emit)
		s.endLine(emit)
		chunk = chunk[j:]
	}
}

// keep adds p to the event's bytes, unless the event is being discarded;
// past the cap it reports the event too long and discards the rest.
func (s *SSESplitter) keep(p []byte, emit func(SSEEvent, error)) {
	if s.skipping || len(p) == 0 {
		return
	}
	if len(s.raw)+len(p) > s.max {
		emit(SSEEvent{}, &SSEEventTooLongError{Limit: s.max, Prefix: firstN(s.raw, p, prefixBytes)})
		s.Skip()
		return
	}
	s.raw = append(s.raw, p...)
}

// endLine ends the current line (its terminator is the end of raw, when
// kept).
func (s *SSESplitter) endLine(emit func(SSEEvent, error)) {
	n := s.lineLen
	s.lineLen = 0
	first := !s.begun
	s.begun = true
	if s.skipping {
		if n == 0 {
			s.skipping = false
		}
		return
	}
	line := s.raw[s.lineAt : s.lineAt+n]
	if first {
		// The standard drops one byte order mark at the start of the
		// stream; Raw keeps it.
		line = bytes.TrimPrefix(line, []byte(utf8BOM))
	}
	if len(line) > 0 {
		s.started = true
		s.ev.apply(line, false)
		s.lineAt = len(s.raw)
		return
	}
	if !s.started {
		s.raw, s.lineAt = s.raw[:0], 0 // a blank line before any field
		return
	}
	ev := s.ev
	ev.Raw = append([]byte(nil), s.raw...)
	s.reset()
	emit(ev, nil)
}

// End is the end of the stream: an event without the blank line that
// would dispatch it is given to emit, with an *SSEIncompleteError holding
// its bytes, as SSEReader returns it. The splitter can then take a new
// stream.
func (s *SSESplitter) End(emit func(SSEEvent, error)) {
	if !s.skipping && (s.started || s.lineLen > 0) {
		emit(SSEEvent{}, &SSEIncompleteError{Raw: append([]byte(nil), s.raw...)})
	}
	s.reset()
	s.skipping, s.cr, s.begun = false, false, false
}

// Skip forgets the event in progress and discards the stream up to the
// next blank line (bytes of the stream were missed, or the event passed
// the cap).
func (s *SSESplitter) Skip() {
	s.reset()
	s.skipping = true
}

// Pending returns the bytes of the event in progress (not a copy; nil
// when it is being discarded).
func (s *SSESplitter) Pending() []byte { return s.raw }

func (s *SSESplitter) reset() {
	s.raw, s.lineAt, s.ev, s.started = nil, 0, SSEEvent{}, false
}

// apply applies one non-empty line to the event, by the rules of the
// standard: a comment, or a field name up to the first ":" and its value
// after it, one leading space dropped. owned means line is a part of the
// event's Raw that outlives it, so the first data value may be that part
// instead of a copy.
func (e *SSEEvent) apply(line []byte, owned bool) {
	if line[0] == ':' {
		e.Comments++
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		switch {
		case owned && !e.HasData:
			e.Data = value[:len(value):len(value)] // a later append copies
		case e.HasData:
			e.Data = append(e.Data, '\n')
			fallthrough
		default:
			e.Data = append(e.Data, value...)
		}
		e.HasData = true
	case "event":
		e.Event = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			e.ID, e.HasID = string(value), true
		}
	case "retry":
		if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil && len(value) > 0 && value[0] != '+' {
			e.Retry, e.HasRetry = time.Duration(ms)*time.Millisecond, true
		}
	default:
		if len(e.Unknown) < maxUnknownLines {
			e.Unknown = append(e.Unknown, append([]byte(nil), line[:min(len(line), prefixBytes)]...))
		}
	}
}
