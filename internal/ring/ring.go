// Package ring holds Ring, a bounded first-in first-out buffer that counts
// what it evicts: the history of a pane (frames, requests, results, log
// lines) kept in fixed memory however long a session runs.
package ring

import "iter"

// Ring keeps at most Cap elements in the order they were pushed. Pushing
// onto a full ring evicts the oldest element; Evicted counts the elements
// that have left the ring (evicted by Push or taken by DropOldest). Index 0
// is the oldest element held.
//
// Storage grows as elements arrive, up to the capacity, so a large
// capacity costs nothing until it is used. A Ring is not safe for
// concurrent use; the zero Ring holds one element.
type Ring[T any] struct {
	buf     []T // storage: len(buf) <= capacity
	head    int // index in buf of the oldest element
	n       int // elements held
	cap     int
	evicted uint64
}

// New returns an empty ring that holds at most capacity elements (at least
// one).
func New[T any](capacity int) Ring[T] { return Ring[T]{cap: max(capacity, 1)} }

// Cap returns the most elements the ring holds.
func (r *Ring[T]) Cap() int { return max(r.cap, 1) }

// Len returns the number of elements held.
func (r *Ring[T]) Len() int { return r.n }

// Evicted returns the number of elements that have left the ring: the
// absolute index (counting every element ever pushed from 0) of the oldest
// element held.
func (r *Ring[T]) Evicted() uint64 { return r.evicted }

// Total returns the number of elements ever pushed: Evicted() + Len().
func (r *Ring[T]) Total() uint64 { return r.evicted + uint64(r.n) }

// At returns the i-th oldest element held (0 <= i < Len()), which the
// caller may change in place. It panics when i is out of range.
func (r *Ring[T]) At(i int) *T {
	if i < 0 || i >= r.n {
		panic("ring: index out of range")
	}
	return &r.buf[(r.head+i)%len(r.buf)]
}

// Push adds v as the newest element. When the ring was full, the oldest
// element is evicted and returned, with evicted true.
func (r *Ring[T]) Push(v T) (old T, evicted bool) {
	if r.n == r.Cap() {
		old, evicted = r.buf[r.head], true
		r.buf[r.head] = v
		r.head = (r.head + 1) % len(r.buf)
		r.evicted++
		return old, evicted
	}
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)%len(r.buf)] = v
	r.n++
	return old, false
}

// grow makes room for more elements, up to the capacity, keeping their
// order.
func (r *Ring[T]) grow() {
	buf := make([]T, min(max(2*len(r.buf), 16), r.Cap()))
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	r.buf, r.head = buf, 0
}

// DropOldest removes the oldest element and returns it, counting it as
// evicted; ok is false when the ring is empty.
func (r *Ring[T]) DropOldest() (v T, ok bool) {
	if r.n == 0 {
		return v, false
	}
	var zero T
	v, r.buf[r.head] = r.buf[r.head], zero // let go of what it refers to
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	r.evicted++
	return v, true
}

// All yields the elements held, oldest first, with their index.
func (r *Ring[T]) All() iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		for i := range r.n {
			if !yield(i, r.buf[(r.head+i)%len(r.buf)]) {
				return
			}
		}
	}
}
