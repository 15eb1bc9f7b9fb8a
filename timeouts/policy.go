// Package timeouts answers "would these calls have passed under that
// client's timeouts?": it folds a session's client events (a capture, a
// tapped host's session) into the recorded timing of each request (sent,
// progress, answer or none) and evaluates it under client timeout
// policies, offline. It is pure: events in, verdicts out.
package timeouts

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Policy is a client's timeout policy.
type Policy struct {
	// Name is the preset's name, or the spec as it was given.
	Name string `json:"name"`
	// Timeout is the deadline of a request from when it was sent; 0 is
	// none (the request waits for ever).
	Timeout time.Duration `json:"timeout"`
	// ResetOnProgress restarts the deadline at each progress notification
	// that comes before it.
	ResetOnProgress bool `json:"reset_on_progress"`
	// MaxTotal caps a request's life from when it was sent; 0 is none.
	MaxTotal time.Duration `json:"max_total,omitempty"`
	// TotalOnProgress: MaxTotal is checked only when a progress
	// notification arrives, as the TypeScript SDK does (its _resetTimeout),
	// not as a deadline of its own.
	TotalOnProgress bool `json:"total_on_progress,omitempty"`
	// Session is the sonde preset: each request's own budget, as the
	// recorded session had it (its queued record's timeout and max end).
	Session bool `json:"session,omitempty"`
}

// ErrPolicy is the error of a policy that cannot be parsed.
var ErrPolicy = errors.New("bad timeout policy")

// MaxDuration bounds a policy's durations (a day): anything longer is a
// typing mistake, and keeps the arithmetic far from overflow.
const MaxDuration = 24 * time.Hour

// Spec is p written back in the policy language.
func (p Policy) Spec() string {
	if p.Session {
		return "the session's own"
	}
	var b strings.Builder
	b.WriteString("timeout=")
	if p.Timeout == 0 {
		b.WriteString("none")
	} else {
		b.WriteString(p.Timeout.String())
	}
	if p.ResetOnProgress {
		b.WriteString(",reset-on-progress")
	}
	if p.MaxTotal > 0 {
		b.WriteString(",max-total=" + p.MaxTotal.String())
	}
	if p.TotalOnProgress {
		b.WriteString(",total-on-progress")
	}
	return b.String()
}

// ParsePolicy reads a --policy value: a preset's name (Presets), or a spec
// timeout=D[,reset-on-progress][,max-total=D][,total-on-progress], where D
// is a Go duration (60s, 1m30s) or none. total-on-progress needs
// reset-on-progress and max-total.
func ParsePolicy(s string) (Policy, error) {
	if p, ok := Preset(s); ok {
		return p.Policy, nil
	}
	p := Policy{Name: s}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		key, val, hasVal := strings.Cut(strings.TrimSpace(part), "=")
		if seen[key] {
			return Policy{}, fmt.Errorf("%w %q: %s given twice", ErrPolicy, s, key)
		}
		seen[key] = true
		var err error
		switch {
		case key == "timeout" && hasVal:
			p.Timeout, err = parseDur(val)
		case key == "max-total" && hasVal:
			p.MaxTotal, err = parseDur(val)
		case key == "reset-on-progress" && !hasVal:
			p.ResetOnProgress = true
		case key == "total-on-progress" && !hasVal:
			p.TotalOnProgress = true
		default:
			err = fmt.Errorf("unknown part %q (want timeout=D, reset-on-progress, max-total=D, total-on-progress, or a preset: %s)", part, strings.Join(PresetNames(), ", "))
		}
		if err != nil {
			return Policy{}, fmt.Errorf("%w %q: %v", ErrPolicy, s, err)
		}
	}
	switch {
	case !seen["timeout"]:
		return Policy{}, fmt.Errorf("%w %q: timeout=D is required (timeout=none for no deadline)", ErrPolicy, s)
	case p.TotalOnProgress && (!p.ResetOnProgress || p.MaxTotal == 0):
		return Policy{}, fmt.Errorf("%w %q: total-on-progress needs reset-on-progress and max-total=D", ErrPolicy, s)
	}
	return p, nil
}

func parseDur(s string) (time.Duration, error) {
	if s == "none" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration (60s, 1m30s, none)", s)
	case d <= 0:
		return 0, fmt.Errorf("%q must be above zero (none for no deadline)", s)
	case d > MaxDuration:
		return 0, fmt.Errorf("%q is over %s", s, MaxDuration)
	}
	return d, nil
}
