package transport

import (
	"bytes"
	"testing"

	"github.com/sonde-mcp/sonde/internal/memtest"
)

// TestLineReaderAllocatesTwiceTheLine: reading one huge line allocates
// about twice its length in all (the blocks and the line), not the
// doubling growth of an appended buffer plus a copy. TotalAlloc counts
// bytes, not time, so the bound holds on a busy machine; it bounds the peak.
func TestLineReaderAllocatesTwiceTheLine(t *testing.T) {
	const n = 32 << 20
	src := bytes.NewReader(append(bytes.Repeat([]byte{'x'}, n), '\n'))
	r := NewLineReader(src, 64<<20)
	var line []byte
	var err error
	use := memtest.Measure(func() { line, err = r.ReadLine() })
	if err != nil || len(line) != n {
		t.Fatalf("read %d bytes, %v", len(line), err)
	}
	if use.Total > n*9/4 {
		t.Fatalf("allocated %d bytes for a %d-byte line (%.2f×), want at most 2.25×", use.Total, n, memtest.Ratio(use.Total, n))
	}
}

// TestSSEReaderAllocatesTwiceTheEvent: one event with a huge data line
// (after an event line, as servers send them) allocates about twice its
// length in all: the line gathered in blocks, then joined once behind the
// event's first bytes into the buffer that becomes its Raw, whose data
// Data is a part of (before: an appended line grown by 1.25× steps, then
// copied into Raw and again into Data, about 8×).
func TestSSEReaderAllocatesTwiceTheEvent(t *testing.T) {
	const n = 32 << 20
	stream := append([]byte("event: message\ndata: "), bytes.Repeat([]byte{'x'}, n)...)
	stream = append(stream, "\nid: 7\n\n"...)
	r := NewSSEReader(bytes.NewReader(stream), 64<<20)
	var ev SSEEvent
	var err error
	use := memtest.Measure(func() { ev, err = r.Next() })
	if err != nil || len(ev.Data) != n || !bytes.Equal(ev.Raw, stream) || ev.ID != "7" || ev.Event != "message" {
		t.Fatalf("event of %d data bytes, id %q, event %q, raw equal %v: %v", len(ev.Data), ev.ID, ev.Event, bytes.Equal(ev.Raw, stream), err)
	}
	if use.Total > n*9/4 {
		t.Fatalf("allocated %d bytes for a %d-byte event (%.2f×), want at most 2.25×", use.Total, n, memtest.Ratio(use.Total, n))
	}
}
