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
