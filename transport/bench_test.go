package transport

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// BenchmarkLineReader frames 1000 lines of 200 bytes per op.
func BenchmarkLineReader(b *testing.B) {
	line := append(bytes.Repeat([]byte("x"), 199), '\n')
	input := bytes.Repeat(line, 1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(input)))
	for b.Loop() {
		r := NewLineReader(bytes.NewReader(input), DefaultMaxLineBytes)
		for {
			if _, err := r.ReadLine(); errors.Is(err, io.EOF) {
				break
			}
		}
	}
}

// BenchmarkLineReaderHugeLine measures refusing a 64 MiB line with the
// default 8 MiB cap: the reader stops buffering at the cap.
func BenchmarkLineReaderHugeLine(b *testing.B) {
	input := bytes.Repeat([]byte("x"), 64<<20)
	b.ReportAllocs()
	b.SetBytes(int64(len(input)))
	for b.Loop() {
		r := NewLineReader(bytes.NewReader(input), DefaultMaxLineBytes)
		if _, err := r.ReadLine(); !errors.Is(err, ErrLineTooLong) {
			b.Fatal(err)
		}
		for {
			if _, err := r.ReadLine(); errors.Is(err, io.EOF) {
				break
			}
		}
	}
}
