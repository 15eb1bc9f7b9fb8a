package pending

// ring is a bounded FIFO that grows up to its capacity and then overwrites
// its oldest element. Index 0 is the oldest element kept.
type ring[T any] struct {
	buf   []T
	start int
	cap   int
}

func newRing[T any](capacity int) ring[T] { return ring[T]{cap: max(capacity, 1)} }

// push appends v and reports whether the oldest element was evicted.
func (r *ring[T]) push(v T) bool {
	if len(r.buf) < r.cap {
		r.buf = append(r.buf, v)
		return false
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % r.cap
	return true
}

func (r *ring[T]) len() int { return len(r.buf) }

// at returns the i-th oldest element.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.start+i)%len(r.buf)] }
