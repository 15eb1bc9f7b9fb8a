package transport

import (
	"sync"
	"unicode/utf8"
)

// Tail keeps the last bytes written to it, up to a fixed capacity, and counts
// what it dropped. It is safe for concurrent use.
type Tail struct {
	mu      sync.Mutex
	buf     []byte // ring storage, len == capacity once full
	start   int    // index of the oldest byte when full
	full    bool
	total   int64
	capable int
}

// NewTail returns a tail that keeps at most capacity bytes (at least 1).
func NewTail(capacity int) *Tail {
	if capacity < 1 {
		capacity = 1
	}
	return &Tail{capable: capacity, buf: make([]byte, 0, min(capacity, 4096))}
}

// Write appends p, dropping the oldest bytes beyond the capacity. It never
// fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	n := len(p)
	if len(p) > t.capable {
		p = p[len(p)-t.capable:]
	}
	for len(p) > 0 {
		if !t.full {
			room := t.capable - len(t.buf)
			k := min(room, len(p))
			t.buf = append(t.buf, p[:k]...)
			p = p[k:]
			if len(t.buf) == t.capable {
				t.full = true
				t.start = 0
			}
			continue
		}
		k := copy(t.buf[t.start:], p)
		p = p[k:]
		t.start = (t.start + k) % t.capable
	}
	return n, nil
}

// Snapshot returns a copy of the kept bytes, starting at a UTF-8 character
// boundary (a character cut by the capacity is dropped whole), and the number
// of bytes dropped before it.
func (t *Tail) Snapshot() (data []byte, dropped int64) {
	t.mu.Lock()
	out := make([]byte, 0, len(t.buf))
	if t.full {
		out = append(out, t.buf[t.start:]...)
		out = append(out, t.buf[:t.start]...)
	} else {
		out = append(out, t.buf...)
	}
	total := t.total
	t.mu.Unlock()
	if total > int64(len(out)) {
		// Only a cut tail can start inside a character.
		for i := 0; i < utf8.UTFMax && len(out) > 0 && !utf8.RuneStart(out[0]); i++ {
			out = out[1:]
		}
	}
	return out, total - int64(len(out))
}
