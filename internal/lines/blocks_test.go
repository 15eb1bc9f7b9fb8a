package lines

import (
	"bytes"
	"runtime"
	"testing"
)

// FuzzBlocks: whatever the chunks, Join is their concatenation and Prefix
// its start; AppendTo appends the same concatenation.
func FuzzBlocks(f *testing.F) {
	f.Add([]byte("abc"), []byte(""), []byte("defg"), 2)
	f.Add([]byte(""), []byte(""), []byte(""), 0)
	f.Fuzz(func(t *testing.T, a, b, last []byte, n int) {
		n = min(max(n, 0), 1<<12)
		var bl Blocks
		bl.Add(a)
		bl.Add(b)
		want := bytes.Join([][]byte{a, b, last}, nil)
		if bl.Len() != len(a)+len(b) {
			t.Fatalf("Len %d", bl.Len())
		}
		if p := bl.Prefix(last, n); !bytes.Equal(p, want[:min(n, len(want))]) {
			t.Fatalf("Prefix %q, want %q", p, want[:min(n, len(want))])
		}
		got := bl.Join(last)
		if !bytes.Equal(got, want) || cap(got) != len(want) || bl.Len() != 0 {
			t.Fatalf("Join %q (cap %d), want %q; Len after %d", got, cap(got), want, bl.Len())
		}
		bl.Add(a)
		bl.Add(b)
		if got := bl.AppendTo([]byte("x"), last); !bytes.Equal(got, append([]byte("x"), want...)) || bl.Len() != 0 {
			t.Fatalf("AppendTo %q, want x%q; Len after %d", got, want, bl.Len())
		}
	})
}

// TestJoinBigHandsBlocksBack: once a line of BigLine bytes or more is
// joined, its blocks are no longer in the heap (they were collected at
// once, not at the next collection): the heap in use grows by the line,
// not by the line and its blocks.
func TestJoinBigHandsBlocksBack(t *testing.T) {
	const n = 2 * BigLine
	chunk := make([]byte, 1<<20)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var b Blocks
	for b.Len() < n {
		b.Add(chunk)
	}
	line := b.Join(nil)
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > n+n/4 {
		t.Errorf("the heap in use grew by %d MiB for a %d MiB line: its blocks are still there", grew>>20, n>>20)
	}
	runtime.KeepAlive(line)
}
