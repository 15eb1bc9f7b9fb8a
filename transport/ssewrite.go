package transport

import (
	"bytes"
	"strconv"
)

// AppendSSEEvent appends ev to dst as an event of a stream: an "event:"
// line when it names a type, an "id:" line when it has an id, a "retry:"
// line when it has one, then its data, one "data:" line a line of it
// (split at "\n"; none when ev has no data), and the blank line that
// dispatches it. Lines end in "\n"; each value follows its ": ". Raw,
// comments and unknown lines are not written.
func AppendSSEEvent(dst []byte, ev *SSEEvent) []byte {
	if ev.Event != "" {
		dst = append(append(append(dst, "event: "...), ev.Event...), '\n')
	}
	if ev.HasID {
		dst = append(append(append(dst, "id: "...), ev.ID...), '\n')
	}
	if ev.HasRetry {
		dst = strconv.AppendInt(append(dst, "retry: "...), ev.Retry.Milliseconds(), 10)
		dst = append(dst, '\n')
	}
	if ev.HasData {
		for l := range bytes.SplitSeq(ev.Data, []byte("\n")) {
			dst = append(append(append(dst, "data: "...), l...), '\n')
		}
	}
	return append(dst, '\n')
}

// SSEEventEnd returns the index just after the blank line that ends the
// first event of b (or a blank line b starts with), or -1 when b holds no
// whole event yet. A line ending in "\r" at the end of b is not taken as
// ended: a "\n" may follow.
func SSEEventEnd(b []byte) int {
	start := 0 // where the current line starts
	for start < len(b) {
		i := bytes.IndexAny(b[start:], "\r\n")
		if i < 0 {
			return -1
		}
		i += start
		j := i + 1
		if b[i] == '\r' {
			if j == len(b) {
				return -1
			}
			if b[j] == '\n' {
				j++
			}
		}
		if i == start {
			return j
		}
		start = j
	}
	return -1
}

// ParseSSEEvent parses one event's bytes (as SSEEventEnd frames them) by
// SSESplitter's rules; atStart says they begin the stream (a byte order
// mark is dropped). ok is false when they hold no event (blank lines, or
// no blank line to end one). The event's Raw is raw without the blank
// lines before it.
func ParseSSEEvent(raw []byte, atStart bool) (ev SSEEvent, ok bool) {
	s := NewSSESplitter(len(raw) + 1)
	s.begun = !atStart
	s.Feed(raw, func(e SSEEvent, err error) {
		if err == nil && !ok {
			ev, ok = e, true
		}
	})
	return ev, ok
}

// ReplaceSSEData returns one event's bytes (raw, as SSEEventEnd frames
// them; atStart as for ParseSSEEvent) with its data replaced: every line
// that is not a data field stays as it is, in its place; the first data
// line's place holds data, one line a line of it (split at "\n"), each
// with that line's "data:" or "data: " and its terminator; the other data
// lines go. Without a data line, raw is returned.
func ReplaceSSEData(raw []byte, atStart bool, data []byte) []byte {
	orig := raw
	out := make([]byte, 0, len(raw)+len(data))
	replaced := false
	for len(raw) > 0 {
		n, end := sseLine(raw)
		line, term := raw[:n], raw[n:end]
		raw = raw[end:]
		name := line
		if atStart {
			if bom, ok := bytes.CutPrefix(line, []byte(utf8BOM)); ok {
				out, name = append(out, utf8BOM...), bom
			}
			line, atStart = name, false
		}
		if f, _, _ := bytes.Cut(name, []byte(":")); string(f) != "data" {
			out = append(append(out, line...), term...)
			continue
		}
		if replaced {
			continue
		}
		replaced = true
		prefix := "data:"
		if bytes.HasPrefix(line, []byte("data: ")) {
			prefix = "data: "
		}
		if len(term) == 0 {
			term = []byte("\n")
		}
		for l := range bytes.SplitSeq(data, []byte("\n")) {
			out = append(append(append(out, prefix...), l...), term...)
		}
	}
	if !replaced {
		return orig
	}
	return out
}

// sseLine returns the length of b's first line and the index just after
// its terminator ("\r\n", "\n" or "\r"; none at the end of b).
func sseLine(b []byte) (n, end int) {
	i := bytes.IndexAny(b, "\r\n")
	switch {
	case i < 0:
		return len(b), len(b)
	case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
		return i, i + 2
	}
	return i, i + 1
}
