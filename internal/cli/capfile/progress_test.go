package capfile

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgress: a line every progressEvery events, rewritten in place, and
// erased at the end; nothing at all below progressEvery or without a
// terminal.
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, path: "big\x1b.jsonl"}
	for range 2*progressEvery + 5 {
		p.tick()
	}
	p.done()
	want := "\rsonde: reading big\\x1b.jsonl: 100000 events…\rsonde: reading big\\x1b.jsonl: 200000 events…\r\x1b[K"
	if buf.String() != want {
		t.Errorf("%q, want %q", buf.String(), want)
	}
	buf.Reset()
	p = &progress{w: &buf}
	for range progressEvery - 1 {
		p.tick()
	}
	p.done()
	q := &progress{} // piped: no writer
	for range progressEvery {
		q.tick()
	}
	q.done()
	if buf.Len() != 0 || strings.Contains(buf.String(), "\r") {
		t.Errorf("%q", buf.String())
	}
}
