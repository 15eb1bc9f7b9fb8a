package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// splitAll feeds data to a splitter in chunks of the given sizes and lists
// what it emitted, as readerLines lists LineReader's.
func splitAll(data []byte, max int, sizes func() int) []string {
	s := NewLineSplitter(max)
	var out []string
	emit := func(line []byte, err error) { out = append(out, describe(line, err)) }
	for len(data) > 0 {
		n := min(sizes(), len(data))
		s.Feed(data[:n], emit)
		data = data[n:]
	}
	s.End(emit)
	return out
}

func readerLines(data []byte, max int) []string {
	r := NewLineReader(bytes.NewReader(data), max)
	var out []string
	for {
		line, err := r.ReadLine()
		if errors.Is(err, io.EOF) {
			return out
		}
		out = append(out, describe(line, err))
	}
}

func describe(line []byte, err error) string {
	var tl *LineTooLongError
	if errors.As(err, &tl) {
		// The prefix's length depends on how the bytes came (LineReader
		// keeps what its buffer held): compare its start.
		return fmt.Sprintf("too long %d %q", tl.Limit, tl.Prefix[:min(len(tl.Prefix), 16)])
	}
	return fmt.Sprintf("%q %v", line, err)
}

// TestLineSplitterFramesAsLineReader: whatever the chunking, a splitter
// emits exactly what LineReader reads from the same bytes: lines, lines
// over the cap with their prefix, CRLF kept, the last unterminated line.
func TestLineSplitterFramesAsLineReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	long := bytes.Repeat([]byte("y"), 1000)
	cases := map[string][]byte{
		"plain":           []byte("a\nbb\n\nccc\n"),
		"crlf":            []byte("{\"a\":1}\r\n{}\r\n"),
		"unterminated":    []byte("a\nlast"),
		"over cap":        append(append([]byte("x\n"), long...), []byte("\nafter\n")...),
		"cap exactly":     append(bytes.Repeat([]byte("z"), 100), '\n'),
		"cap plus one":    append(bytes.Repeat([]byte("z"), 101), '\n'),
		"over cap at end": append([]byte("x\n"), long...),
	}
	for name, data := range cases {
		want := readerLines(data, 100)
		for _, size := range []int{1, 2, 7, 100, 101, 4096} {
			if got := splitAll(data, 100, func() int { return size }); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, chunks of %d:\n got %v\nwant %v", name, size, got, want)
			}
		}
		if got := splitAll(data, 100, func() int { return 1 + rng.IntN(50) }); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s, random chunks:\n got %v\nwant %v", name, got, want)
		}
	}
}

// TestLineSplitterSkip: after missed bytes, the line in progress is
// dropped, and so is the rest of the line they cut unless they ended one.
func TestLineSplitterSkip(t *testing.T) {
	for _, tc := range []struct {
		atStart bool
		want    []string
	}{{true, []string{`"tail" <nil>`, `"next" <nil>`}}, {false, []string{`"next" <nil>`}}} {
		s := NewLineSplitter(100)
		var out []string
		emit := func(line []byte, err error) { out = append(out, describe(line, err)) }
		s.Feed([]byte("partial"), emit)
		s.Skip(tc.atStart)
		s.Feed([]byte("tail\nnext\n"), emit)
		s.End(emit)
		if fmt.Sprint(out) != fmt.Sprint(tc.want) {
			t.Errorf("Skip(%v): %v, want %v", tc.atStart, out, tc.want)
		}
	}
}
