package textfmt

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestDurExtremes: a hostile capture can carry any int64 as a latency; the
// most negative one used to recurse forever (-d overflows to itself).
func TestDurExtremes(t *testing.T) {
	for _, d := range []time.Duration{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, -1, 0} {
		got := Dur(d)
		if got == "" || (d < 0 && !strings.HasPrefix(got, "-")) {
			t.Errorf("Dur(%d) = %q", int64(d), got)
		}
	}
}

// TestPlural: one for 1, many for anything else (0 and negative too).
func TestPlural(t *testing.T) {
	for n, want := range map[int]string{1: "call", 0: "calls", 2: "calls", -1: "calls"} {
		if got := Plural(n, "call", "calls"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzDur: every int64 renders, finitely, as a short string.
func FuzzDur(f *testing.F) {
	for _, s := range []int64{math.MinInt64, math.MaxInt64, -1, 0, 999, int64(time.Hour)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		if got := Dur(time.Duration(n)); got == "" || len(got) > 40 {
			t.Fatalf("Dur(%d) = %q", n, got)
		}
	})
}

// FuzzSize: every int renders as a short string.
func FuzzSize(f *testing.F) {
	for _, s := range []int{math.MinInt, math.MaxInt, -1, 0, 1 << 20} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n int) {
		if got := Size(n); got == "" || len(got) > 40 {
			t.Fatalf("Size(%d) = %q", n, got)
		}
	})
}
