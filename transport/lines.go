package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sonde-mcp/sonde/internal/lines"
)

// DefaultMaxLineBytes is the default cap on one line from the server (8 MiB).
const DefaultMaxLineBytes = 8 << 20

// ErrLineTooLong matches any *LineTooLongError with errors.Is.
var ErrLineTooLong = errors.New("line too long")

// LineTooLongError reports a line longer than the cap. The reader stopped
// buffering at the cap; Prefix holds the first bytes for display.
type LineTooLongError struct {
	Limit  int
	Prefix []byte
}

// Error says how long the line was allowed to be.
func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line from server exceeds %d bytes without a newline", e.Limit)
}

// Is makes errors.Is(err, ErrLineTooLong) true.
func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// prefixBytes is how much of an oversized line is kept for display.
const prefixBytes = 256

// LineReader splits a stream into newline-terminated lines with a hard cap on
// line length, enforced before the line is buffered whole: memory stays
// bounded by the cap whatever the peer writes. A line longer than the read
// buffer is gathered in blocks (lines.Blocks): reading a line of n bytes
// allocates about 2n and keeps n.
type LineReader struct {
	br       *bufio.Reader
	max      int
	long     lines.Blocks // the line so far, when it spans several reads
	skipping bool         // discarding the rest of an oversized line
}

// NewLineReader returns a reader of lines of at most max bytes (without the
// newline).
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &LineReader{br: bufio.NewReaderSize(r, min(max+1, 64<<10)), max: max}
}

// ReadLine returns the next line without its "\n". The returned slice is a
// fresh copy owned by the caller. A line over the cap yields a
// *LineTooLongError; the next call resumes after that line's newline. At the
// end of the stream it returns io.EOF, after returning any final unterminated
// line (with io.ErrUnexpectedEOF, so a half-written message is visible).
func (r *LineReader) ReadLine() ([]byte, error) {
	r.long.Reset()
	for {
		chunk, err := r.br.ReadSlice('\n')
		if r.skipping {
			if err == nil {
				r.skipping = false
				continue
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return nil, err
		}
		n := r.long.Len() + len(chunk)
		if n > r.max+1 || (err != nil && n > r.max) {
			e := &LineTooLongError{Limit: r.max, Prefix: r.long.Prefix(chunk, prefixBytes)}
			r.long.Reset()
			r.skipping = err != nil
			return nil, e
		}
		switch {
		case err == nil:
			return r.long.Join(chunk[:len(chunk)-1]), nil
		case errors.Is(err, bufio.ErrBufferFull):
			r.long.Add(chunk)
		case errors.Is(err, io.EOF) && n > 0:
			return r.long.Join(chunk), io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

func firstN(a, b []byte, n int) []byte {
	out := make([]byte, 0, n)
	out = append(out, a[:min(len(a), n)]...)
	return append(out, b[:min(len(b), n-len(out))]...)
}

// LineSplitter is LineReader's framing for bytes pushed to it rather than
// read (a tap's copy of a stream it forwards): the same lines, the same
// cap, with LineTooLongError for a line over it and the same 256-byte
// prefix kept. The cap bounds what the splitter holds, never what the
// caller forwards. The zero value is not usable: use NewLineSplitter.
type LineSplitter struct {
	max      int
	long     lines.Blocks // the line so far
	skipping bool         // discarding the rest of an oversized or cut line
}

// NewLineSplitter returns a splitter of lines of at most max bytes
// (without the newline; max <= 0 means DefaultMaxLineBytes).
func NewLineSplitter(max int) *LineSplitter {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &LineSplitter{max: max}
}

// Feed splits the next chunk of the stream. For each line it completes it
// calls emit with the line without its "\n" (a fresh copy; a "\r" before
// the newline is kept) and a nil error; for a line over the cap, once,
// with nil and a *LineTooLongError, as soon as the line passes the cap.
func (s *LineSplitter) Feed(chunk []byte, emit func(line []byte, err error)) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part, chunk = chunk[:i], chunk[i+1:]
		} else {
			chunk = nil
		}
		if !s.skipping {
			if s.long.Len()+len(part) > s.max {
				emit(nil, &LineTooLongError{Limit: s.max, Prefix: s.long.Prefix(part, prefixBytes)})
				s.long.Reset()
				s.skipping = true
			} else if i >= 0 {
				emit(s.long.Join(part), nil)
			} else {
				s.long.Add(part)
			}
		}
		if i >= 0 {
			s.skipping = false
		}
	}
}

// End is the end of the stream: a last line without a newline is given to
// emit with io.ErrUnexpectedEOF, as LineReader returns it.
func (s *LineSplitter) End(emit func(line []byte, err error)) {
	if !s.skipping && s.long.Len() > 0 {
		emit(s.long.Join(nil), io.ErrUnexpectedEOF)
	}
	s.long.Reset()
	s.skipping = false
}

// Skip forgets the line in progress: bytes of the stream were not fed
// (missed). With atLineStart (the missed bytes ended with a newline) the
// next byte fed starts a line; otherwise everything up to the next newline
// is discarded, as it is the rest of a line whose start was lost.
func (s *LineSplitter) Skip(atLineStart bool) {
	s.long.Reset()
	s.skipping = !atLineStart
}
