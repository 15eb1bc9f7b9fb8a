package tap

import "bytes"

// sseEvent is one event, as the observer splits it.
type sseEvent struct {
	event, id string
	data      []byte
	raw       []byte
	tooLong   bool
}

// sseSplitter splits pushed bytes into SSE events (the rules of
// transport.SSEReader, for bytes pushed rather than read): lines end in
// "\r\n", "\n" or "\r"; a blank line dispatches. An event over max is
// reported as too long and the rest of it skipped.
type sseSplitter struct {
	max      int
	line     []byte
	raw      []byte
	cr       bool // the last byte was '\r' (a '\n' may follow)
	ev       sseEvent
	hasData  bool
	skipping bool // until the next blank line
	over     bool // the current event is over max
}

// skip drops the event being built and what follows up to the next blank
// line (after a gap in what was observed).
func (s *sseSplitter) skip() {
	s.line, s.raw, s.ev, s.hasData, s.over = nil, nil, sseEvent{}, false, false
	s.skipping = true
}

func (s *sseSplitter) feed(b []byte, end bool, emit func(sseEvent)) {
	for _, c := range b {
		if s.cr {
			s.cr = false
			if c == '\n' {
				if !s.over && !s.skipping {
					s.raw = append(s.raw, c)
				}
				continue
			}
		}
		if c == '\n' || c == '\r' {
			if !s.over && !s.skipping {
				s.raw = append(s.raw, c)
			}
			s.cr = c == '\r'
			s.endLine(emit)
			continue
		}
		if s.skipping {
			continue
		}
		if s.over {
			continue
		}
		if len(s.raw) >= s.max {
			s.over = true
			continue
		}
		s.line = append(s.line, c)
		s.raw = append(s.raw, c)
	}
	_ = end // an event cut by the end of its stream is never dispatched
}

func (s *sseSplitter) endLine(emit func(sseEvent)) {
	line := s.line
	s.line = s.line[:0]
	if len(line) == 0 {
		// Blank line: dispatch.
		switch {
		case s.skipping:
			s.skipping = false
		case s.over:
			emit(sseEvent{tooLong: true, raw: append([]byte(nil), s.raw[:min(len(s.raw), 256)]...)})
		case len(s.raw) > 1 || s.hasData || s.ev.event != "" || s.ev.id != "":
			ev := s.ev
			ev.raw = append([]byte(nil), s.raw...)
			emit(ev)
		}
		s.raw, s.ev, s.hasData, s.over = nil, sseEvent{}, false, false
		return
	}
	if s.skipping || s.over {
		return
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "event":
		s.ev.event = string(value)
	case "id":
		s.ev.id = string(value)
	case "data":
		if s.hasData {
			s.ev.data = append(s.ev.data, '\n')
		}
		s.ev.data = append(s.ev.data, value...)
		s.hasData = true
	}
}
