package filter

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf8"
)

// Item is what a filter looks at: the facts of a frame or a request, as far
// as they are known ("" or false for what is not).
type Item struct {
	Method string
	Tool   string
	// ID is the id as sonde shows it: 7, or "abc" with its quotes.
	ID string
	// Dir is "in" (from the server) or "out" (from sonde); "" when unknown.
	Dir string
	// Kind is request, response, notification or error ("" when unknown).
	Kind string
	// Status holds the state and the verdict known (resolved, timeout,
	// late…); Failed says the request or the frame is a failure; IsError
	// that the tool's result had isError.
	Status  []string
	Failed  bool
	IsError bool
	// Duration is the latency, when HasDuration.
	Duration    time.Duration
	HasDuration bool
	// Payload is the raw frame (or params), for plain text.
	Payload []byte
}

// Match reports whether it satisfies every term.
func (f *Filter) Match(it *Item) bool {
	if f == nil {
		return true
	}
	for i := range f.terms {
		if f.terms[i].match(it) == f.terms[i].not {
			return false
		}
	}
	return true
}

func (t *term) match(it *Item) bool {
	switch t.field {
	case fMethod:
		return containsFold(it.Method, t.value)
	case fTool:
		return containsFold(it.Tool, t.value)
	case fID:
		return it.ID == t.value
	case fDir:
		return it.Dir == t.value
	case fKind:
		return it.Kind == t.value
	case fStatus:
		switch t.value {
		case "error":
			return it.Failed || it.IsError
		case "iserror":
			return it.IsError
		}
		for _, s := range it.Status {
			if strings.EqualFold(s, t.value) {
				return true
			}
		}
		return false
	case fDuration:
		if !it.HasDuration {
			return false
		}
		switch t.op {
		case ">":
			return it.Duration > t.dur
		case "<":
			return it.Duration < t.dur
		case ">=":
			return it.Duration >= t.dur
		case "<=":
			return it.Duration <= t.dur
		}
		return it.Duration == t.dur
	}
	return containsFold(it.Method, t.value) || containsFold(it.Tool, t.value) ||
		containsFold(it.ID, t.value) || bytesContainsFold(it.Payload, t.value)
}

// containsFold reports whether s contains sub (lower case), ignoring case.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	if len(s) < len(sub) {
		return false
	}
	return strings.Contains(strings.ToLower(s), sub)
}

// bytesContainsFold is containsFold over bytes, without copying when the
// payload is ASCII and the query has no upper case to fold.
func bytesContainsFold(b []byte, sub string) bool {
	if sub == "" {
		return true
	}
	if bytes.Contains(b, []byte(sub)) {
		return true
	}
	if !utf8.Valid(b) {
		return false
	}
	return strings.Contains(strings.ToLower(string(b)), sub)
}
