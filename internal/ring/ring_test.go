package ring

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPushEvicts(t *testing.T) {
	r := New[int](3)
	for i := range 5 {
		old, ev := r.Push(i)
		if want := i >= 3; ev != want || (ev && old != i-3) {
			t.Fatalf("Push(%d) = %d, %v", i, old, ev)
		}
	}
	if r.Len() != 3 || r.Cap() != 3 || r.Evicted() != 2 || r.Total() != 5 {
		t.Fatalf("len %d cap %d evicted %d total %d", r.Len(), r.Cap(), r.Evicted(), r.Total())
	}
	var got []int
	for _, v := range r.All() {
		got = append(got, v)
	}
	if !slices.Equal(got, []int{2, 3, 4}) {
		t.Fatalf("All = %v", got)
	}
	*r.At(0) = 20
	if *r.At(0) != 20 || *r.At(2) != 4 {
		t.Fatal("At does not address the held elements")
	}
}

func TestZeroAndSmall(t *testing.T) {
	var z Ring[string]
	z.Push("a")
	if _, ev := z.Push("b"); !ev || z.Len() != 1 || *z.At(0) != "b" {
		t.Fatal("the zero Ring does not hold one element")
	}
	if r := New[int](-4); r.Cap() != 1 {
		t.Fatalf("New(-4).Cap() = %d", r.Cap())
	}
	if _, ok := (&Ring[int]{}).DropOldest(); ok {
		t.Fatal("DropOldest of an empty ring")
	}
}

func TestAtPanics(t *testing.T) {
	r := New[int](4)
	r.Push(1)
	defer func() {
		if recover() == nil {
			t.Fatal("At(1) of a one-element ring did not panic")
		}
	}()
	r.At(1)
}

func TestAllStops(t *testing.T) {
	r := New[int](8)
	for i := range 8 {
		r.Push(i)
	}
	n := 0
	for range r.All() {
		n++
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("n = %d", n)
	}
}

// TestModel checks Ring against a slice doing the same thing the slow way,
// over random pushes and drops at random capacities.
func TestModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		capacity := 1 + rng.IntN(40)
		r := New[int](capacity)
		var model []int
		var evicted uint64
		for op := range 400 {
			if rng.IntN(4) == 0 {
				v, ok := r.DropOldest()
				if ok != (len(model) > 0) || ok && v != model[0] {
					t.Fatalf("round %d op %d: DropOldest = %d, %v; model %v", round, op, v, ok, model)
				}
				if ok {
					model = model[1:]
					evicted++
				}
			} else {
				old, ev := r.Push(op)
				if full := len(model) == capacity; ev != full || full && old != model[0] {
					t.Fatalf("round %d op %d: Push = %d, %v; model %v", round, op, old, ev, model)
				}
				if len(model) == capacity {
					model = model[1:]
					evicted++
				}
				model = append(model, op)
			}
			if r.Len() != len(model) || r.Evicted() != evicted || r.Total() != evicted+uint64(len(model)) {
				t.Fatalf("round %d op %d: len %d evicted %d; model %d %d", round, op, r.Len(), r.Evicted(), len(model), evicted)
			}
			for i, v := range r.All() {
				if v != model[i] || *r.At(i) != v {
					t.Fatalf("round %d op %d: [%d] = %d, model %v", round, op, i, v, model)
				}
			}
			if len(r.buf) > capacity {
				t.Fatalf("round %d: storage %d over capacity %d", round, len(r.buf), capacity)
			}
		}
	}
}
