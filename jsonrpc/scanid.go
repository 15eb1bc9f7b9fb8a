package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// ScanID reads the top-level "id" member of a line that Decode could not
// read, such as a response whose body is broken after its id
// (`{"jsonrpc":"2.0","id":7,"result":…` with a raw NUL in a string, or
// nesting deeper than the decoder allows). It walks the members of the
// top-level object in order and stops at the first byte that breaks the
// object's syntax, keeping what it read before: strings (with their
// escapes) and nested values are skipped whole, so an "id" inside a nested
// object or inside a string value is never taken for the line's. Bytes
// inside strings are not checked (a raw control character does not stop
// the walk).
//
// id is the last "id" member read with an integer or string value (kept
// apart as UnmarshalJSON keeps them; a fraction, null or any other value is
// no id); it is unset when there is none. method reports whether a
// top-level "method" member was seen: then the line is a request or a
// notification, not a response. Keys are matched exactly, after their
// escapes are decoded.
func ScanID(line []byte) (id ID, method bool) {
	s := idScanner{b: line}
	s.ws()
	if !s.eat('{') {
		return ID{}, false
	}
	for {
		s.ws()
		if s.eat('}') {
			return id, method
		}
		key, ok := s.str()
		if !ok {
			return id, method
		}
		s.ws()
		if !s.eat(':') {
			return id, method
		}
		s.ws()
		start := s.i
		if !s.value() {
			if key == "id" {
				// A value cut by the end of the line (or broken) is no id,
				// nor is whatever an earlier "id" member said: the last
				// one would have won.
				id = ID{}
			}
			return id, method
		}
		switch key {
		case "id":
			var v ID
			if v.UnmarshalJSON(line[start:s.i]) != nil {
				v = ID{}
			}
			id = v
		case "method":
			method = true
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return id, method
		}
		return id, method
	}
}

// idScanner walks a possibly broken JSON line.
type idScanner struct {
	b []byte
	i int
}

func (s *idScanner) ws() { s.i = SkipSpace(s.b, s.i) }

// SkipSpace returns the position of the first byte of b at or after i that
// is not JSON white space (len(b) if none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (s *idScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// skipStr moves past a string starting at s.i (a '"'), escapes included;
// false when the line ends first.
func (s *idScanner) skipStr() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
		case '"':
			s.i++
			return true
		default:
			s.i++
		}
	}
	s.i = len(s.b)
	return false
}

// str reads a key: its text with the escapes decoded.
func (s *idScanner) str() (string, bool) {
	start := s.i
	if !s.skipStr() {
		return "", false
	}
	raw := s.b[start:s.i]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return "", false
	}
	return k, true
}

// value moves past one value: a string, an object or array with everything
// nested in it, or a number or literal (the bytes up to the next delimiter).
// false when the line ends first or no value starts at s.i.
func (s *idScanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		return s.skipStr()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.skipStr() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	case ',', '}', ']', ':':
		return false
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r', '"', '{', '[', ':':
			return s.i > start
		}
		s.i++
	}
	// A number or literal that runs to the end of the line may be cut.
	return false
}
