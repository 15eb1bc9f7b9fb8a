package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
// bounded by the cap whatever the peer writes.
//
// A line longer than the read buffer is gathered in blocks and copied once
// into a slice of exactly its length, so reading a line of n bytes
// allocates about 2n at the peak (the blocks and the line) and keeps n.
type LineReader struct {
	br       *bufio.Reader
	max      int
	blocks   [][]byte // the line so far, when it spans several reads
	n        int      // its length
	skipping bool     // discarding the rest of an oversized line
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
	r.reset()
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
		if r.n+len(chunk) > r.max+1 || (err != nil && r.n+len(chunk) > r.max) {
			e := &LineTooLongError{Limit: r.max, Prefix: r.prefix(chunk)}
			r.reset()
			r.skipping = err != nil
			return nil, e
		}
		switch {
		case err == nil:
			return r.join(chunk[:len(chunk)-1]), nil
		case errors.Is(err, bufio.ErrBufferFull):
			r.blocks = append(r.blocks, append([]byte(nil), chunk...))
			r.n += len(chunk)
		case errors.Is(err, io.EOF) && r.n+len(chunk) > 0:
			return r.join(chunk), io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// join returns the blocks gathered so far followed by last, in one slice of
// exactly that length, and forgets the blocks.
func (r *LineReader) join(last []byte) []byte {
	out := make([]byte, 0, r.n+len(last))
	for _, b := range r.blocks {
		out = append(out, b...)
	}
	out = append(out, last...)
	r.reset()
	return out
}

func (r *LineReader) reset() {
	clear(r.blocks)
	r.blocks, r.n = r.blocks[:0], 0
}

// prefix is the first prefixBytes of the line so far followed by chunk,
// for display.
func (r *LineReader) prefix(chunk []byte) []byte {
	out := make([]byte, 0, prefixBytes)
	for _, b := range append(r.blocks, chunk) {
		out = append(out, b[:min(len(b), prefixBytes-len(out))]...)
	}
	return out
}

func firstN(a, b []byte, n int) []byte {
	out := make([]byte, 0, n)
	out = append(out, a[:min(len(a), n)]...)
	return append(out, b[:min(len(b), n-len(out))]...)
}
