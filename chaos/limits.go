package chaos

import (
	"errors"
	"time"
)

// The limits of the rule language (docs/chaos.md, "Limits"): nothing a
// rule asks for may grow memory or time without bound. A value over its
// limit is refused when the rule is parsed (a *ParseError that matches
// ErrLimit); what several rules add up to for one frame is cut to the
// same limits where the rules act, and the note says so.
const (
	// MaxRules is how many rules one session takes (--fault and --faults
	// together).
	MaxRules = 256
	// MaxRuleBytes is the length of one rule's text.
	MaxRuleBytes = 4096
	// MaxValueBytes is the length of a match value (method=, tool=, id=).
	// A frame's method, tool or id longer than that matches no rule's.
	MaxValueBytes = 256
	// MaxTextBytes is the length of text= (noise, stderr) and message=
	// (error).
	MaxTextBytes = 1024
	// MaxCount bounds every=, after= and max=.
	MaxCount = 1_000_000_000
	// MaxMS bounds ms= (delay, stall, reorder, duplicate): one hour. It
	// is also what the delays of all the rules that act on one frame add
	// up to at most, and their stalls.
	MaxMS = 3_600_000
	// MaxCopies bounds duplicate's n=, and the copies one frame gets from
	// all the duplicate rules that act on it (sent at once and later).
	MaxCopies = 1000
	// MaxWindow bounds reorder's window=.
	MaxWindow = 1000
	// MaxDuring bounds during='s FROM and TO (a year).
	MaxDuring = 366 * 24 * time.Hour
	// MaxCode bounds code= either way: the integers a JSON number keeps
	// exactly in every host (2^53-1).
	MaxCode = 1<<53 - 1
	// MaxHeldBytes is what the reorder rules of one direction hold at
	// most: a frame that takes them past it releases its rule's frames at
	// once (noted), as a full window does.
	MaxHeldBytes = 64 << 20
	// MaxLaterBytes is what the copies that duplicate's ms= sends later
	// may hold at once, per session: a copy past it is not sent (noted).
	MaxLaterBytes = 64 << 20
	// MaxLaterCopies is how many such copies may wait at once, per
	// session.
	MaxLaterCopies = 4 * MaxCopies
)

// ErrLimit is matched (errors.Is) by the error of a rule whose value, or
// whose number, is over one of the limits above.
var ErrLimit = errors.New("over a fault rule limit")

// MaxDelay is MaxMS as a duration.
const MaxDelay = MaxMS * time.Millisecond
