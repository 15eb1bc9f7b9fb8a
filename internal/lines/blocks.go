// Package lines holds what the line readers of sonde share (the server's
// stdout in transport, capture files in capture): gathering a line that
// spans many reads without the doubling growth of an appended buffer.
package lines

import "runtime/debug"

// Blocks gathers a long line from the chunks of successive reads (each
// copied, since a bufio.Reader reuses its buffer) and joins them once into
// a slice of exactly the line's length: a line of n bytes costs about 2n
// allocated at the peak and n kept, where appending to one buffer costs up
// to 5n allocated in all (Go grows large slices by 1.25×) and keeps the
// spare capacity. The zero value is empty and ready.
type Blocks struct {
	blocks [][]byte
	n      int
}

// Add appends a copy of chunk.
func (b *Blocks) Add(chunk []byte) {
	b.blocks = append(b.blocks, append([]byte(nil), chunk...))
	b.n += len(chunk)
}

// Len is the number of bytes gathered.
func (b *Blocks) Len() int { return b.n }

// AppendTo appends the gathered blocks and then last to dst, and resets
// (Join into a buffer of the caller's, which may hold more; a big line's
// blocks are handed back as by Join).
func (b *Blocks) AppendTo(dst, last []byte) []byte {
	for _, c := range b.blocks {
		dst = append(dst, c...)
	}
	dst = append(dst, last...)
	b.done(len(dst))
	return dst
}

// Join returns what was gathered followed by last, in one new slice of
// exactly that length, and empties b. For a line of BigLine bytes or more,
// the blocks' memory is handed back to the system at once
// (debug.FreeOSMemory: a collection, a few milliseconds against the
// reading of that many bytes), so that what is allocated next (the line
// decoded) does not come on top of them: a 64 MiB answer then peaks at
// about 2.4× its size in sonde call instead of 3.4× (docs/performance.md).
func (b *Blocks) Join(last []byte) []byte {
	out := make([]byte, 0, b.n+len(last))
	for _, c := range b.blocks {
		out = append(out, c...)
	}
	out = append(out, last...)
	b.done(len(out))
	return out
}

// done empties b once its blocks were copied into a line of n bytes, and
// hands their memory back at once for a big line (see Join).
func (b *Blocks) done(n int) {
	b.Reset()
	if n >= BigLine {
		debug.FreeOSMemory()
	}
}

// BigLine is the length from which Join hands the blocks' memory back.
const BigLine = 16 << 20

// Prefix returns a copy of at most n bytes from the start of what was
// gathered followed by last.
func (b *Blocks) Prefix(last []byte, n int) []byte {
	out := make([]byte, 0, n)
	for _, c := range append(b.blocks, last) {
		out = append(out, c[:min(len(c), n-len(out))]...)
	}
	return out
}

// Reset empties b, letting the blocks be collected.
func (b *Blocks) Reset() {
	clear(b.blocks)
	b.blocks, b.n = b.blocks[:0], 0
}
