package lines

import (
	"bytes"
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
