// Package filter is sonde's filter language, shared by the UI's `/` in
// Frames, Pending and the Timeline and the --filter flag of `sonde lint`,
// `stats` and `export`:
//
//	method:tools/call tool:search status:error id:7 dir:in kind:notification duration:>500ms text
//
// Terms are ANDed. A term is field:value or plain text; a value with spaces
// is quoted ("two words"); a leading - negates a term. Fields:
//
//   - method: the method contains the value (method:tools matches every
//     tools/ method); tool: the tool (or prompt, resource) name contains it.
//   - id: the id is the value: 7 is the integer id, "7" the string id, abc
//     (or "abc") the string id abc; ids keep their type.
//   - dir: in (from the server) or out (from sonde).
//   - kind: request, response, notification or error.
//   - status: the state or verdict is the value (resolved, timeout, late,
//     malformed…); status:error matches every failure, including a tool
//     result with isError (status:iserror matches those alone).
//   - duration: a comparison with a Go duration: >500ms, <2s, >=1s, <=10ms, =0s.
//
// Plain text matches, case-insensitively, the method, the tool, the id or
// the payload. Parse reports a mistake with its position (SyntaxError).
package filter

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Filter is a parsed query: every term must match.
type Filter struct {
	terms []term
	src   string
}

// String returns the query the filter was parsed from.
func (f *Filter) String() string { return f.src }

// Empty reports whether the filter has no terms (it matches everything).
func (f *Filter) Empty() bool { return f == nil || len(f.terms) == 0 }

type field uint8

const (
	fText field = iota
	fMethod
	fTool
	fID
	fDir
	fKind
	fStatus
	fDuration
)

var fields = map[string]field{
	"method": fMethod, "tool": fTool, "id": fID, "dir": fDir, "kind": fKind,
	"status": fStatus, "duration": fDuration,
}

// Fields lists the field names, for help texts.
func Fields() []string {
	return []string{"method", "tool", "id", "dir", "kind", "status", "duration"}
}

type term struct {
	field field
	not   bool
	value string // lower case, except for id
	op    string // duration: > < >= <= =
	dur   time.Duration
}

// SyntaxError is a mistake in a query, at byte offset Pos.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter: %s (at character %d)", e.Msg, e.Pos+1)
}

// ErrSyntax is matched (errors.Is) by every SyntaxError.
var ErrSyntax = errors.New("filter syntax error")

// Is makes a SyntaxError match ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Parse parses a query; the empty query matches everything.
func Parse(s string) (*Filter, error) {
	f := &Filter{src: s}
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return f, nil
		}
		start := i
		t := term{}
		if s[i] == '-' && i+1 < len(s) && s[i+1] != ' ' {
			t.not = true
			i++
		}
		// A field name is letters up to a colon.
		j := i
		for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		if j < len(s) && s[j] == ':' && j > i {
			name := s[i:j]
			fl, ok := fields[name]
			if !ok {
				return nil, &SyntaxError{Pos: i, Msg: fmt.Sprintf("unknown field %q (fields: %s)", name, strings.Join(Fields(), ", "))}
			}
			t.field = fl
			i = j + 1
		}
		v, quoted, next, err := value(s, i)
		if err != nil {
			return nil, err
		}
		if v == "" {
			return nil, &SyntaxError{Pos: start, Msg: "a term without a value"}
		}
		if t.field == fID && (quoted || !isInt(v)) {
			v = `"` + v + `"` // a string id, shown quoted: "3" is not 3
		}
		if err := t.set(v, i); err != nil {
			return nil, err
		}
		f.terms = append(f.terms, t)
		i = next
	}
}

// value reads a plain or quoted value at i; next is the offset after it.
func value(s string, i int) (v string, quoted bool, next int, err error) {
	if i < len(s) && s[i] == '"' {
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			return "", false, 0, &SyntaxError{Pos: i, Msg: "a quote that is not closed"}
		}
		return s[i+1 : i+1+end], true, i + 2 + end, nil
	}
	end := strings.IndexByte(s[i:], ' ')
	if end < 0 {
		end = len(s) - i
	}
	return s[i : i+end], false, i + end, nil
}

// isInt reports whether v is an integer id (digits, maybe a minus).
func isInt(v string) bool {
	v = strings.TrimPrefix(v, "-")
	return v != "" && strings.Trim(v, "0123456789") == ""
}

// set checks and stores the value v (found at pos) of t.
func (t *term) set(v string, pos int) error {
	switch t.field {
	case fID:
		t.value = v
		return nil
	case fDir:
		v = strings.ToLower(v)
		if v != "in" && v != "out" {
			return &SyntaxError{Pos: pos, Msg: "dir is in or out"}
		}
	case fKind:
		v = strings.ToLower(v)
		switch v {
		case "request", "response", "notification", "error":
		default:
			return &SyntaxError{Pos: pos, Msg: "kind is request, response, notification or error"}
		}
	case fDuration:
		op := ""
		for _, o := range []string{">=", "<=", ">", "<", "="} {
			if strings.HasPrefix(v, o) {
				op = o
				break
			}
		}
		if op == "" {
			return &SyntaxError{Pos: pos, Msg: "duration needs a comparison: >500ms, <2s, >=1s, <=10ms or =0s"}
		}
		d, err := time.ParseDuration(v[len(op):])
		if err != nil {
			return &SyntaxError{Pos: pos + len(op), Msg: fmt.Sprintf("%q is not a duration (like 500ms or 2s)", v[len(op):])}
		}
		t.op, t.dur = op, d
		return nil
	}
	t.value = strings.ToLower(v)
	return nil
}
