package diagram

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bound is one end of a window: a time from the start, or an event number
// (seq). The zero Bound is open.
type Bound struct {
	Set   bool
	IsSeq bool
	Seq   uint64
	Time  time.Duration
}

// ParseBound reads a window bound: a duration from the start ("1.5s",
// "250ms", "0s") or an event number ("120", "#120"). "" is an open bound.
func ParseBound(s string) (Bound, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Bound{}, nil
	}
	if n, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 10, 64); err == nil {
		return Bound{Set: true, IsSeq: true, Seq: n}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return Bound{}, fmt.Errorf("%q is neither a duration from the start (1.5s, 250ms) nor an event number (120)", s)
	}
	return Bound{Set: true, Time: d}, nil
}

// String is the bound as ParseBound reads it.
func (b Bound) String() string {
	switch {
	case !b.Set:
		return ""
	case b.IsSeq:
		return "#" + strconv.FormatUint(b.Seq, 10)
	}
	return b.Time.String()
}

// before reports whether an event (seq, at) is at or after b, as a From.
func (b Bound) before(seq uint64, at time.Duration) bool {
	switch {
	case !b.Set:
		return true
	case b.IsSeq:
		return seq >= b.Seq
	}
	return at >= b.Time
}

// after reports whether an event (seq, at) is at or before b, as a To.
func (b Bound) after(seq uint64, at time.Duration) bool {
	switch {
	case !b.Set:
		return true
	case b.IsSeq:
		return seq <= b.Seq
	}
	return at <= b.Time
}
