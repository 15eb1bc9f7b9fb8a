package hostconfig

import (
	"encoding/json"
	"errors"
)

// A span is one JSON value of a file and where it is: the byte range
// [start, end) of its text, and for an object or an array what it holds.
// It is read from the text stripJSONC returns, whose offsets are the
// file's, so a range locates the same bytes in the file as written.
type span struct {
	start, end int
	kind       byte // '{', '[', '"', or 'v' for a number, true, false, null
	members    []spanMember
	elems      []*span
	// sep is, for an array whose elements are not separated by ", " (a
	// YAML block sequence), the text between two of them.
	sep string
}

// spanMember is one member of an object: its key (decoded) and value.
type spanMember struct {
	key   string
	value *span
}

// member returns the value of the last member named key (the one a host's
// JSON parser keeps), or nil.
func (s *span) member(key string) *span {
	if s == nil || s.kind != '{' {
		return nil
	}
	for i := len(s.members) - 1; i >= 0; i-- {
		if s.members[i].key == key {
			return s.members[i].value
		}
	}
	return nil
}

// errSpan is what scanSpans returns for text it cannot read.
var errSpan = errors.New("not valid JSON")

// maxSpanDepth bounds the nesting scanSpans follows.
const maxSpanDepth = 512

// scanSpans reads the JSON value of b (stripped of JSONC comments, a
// UTF-8 BOM allowed) into spans.
func scanSpans(b []byte) (*span, error) {
	p := &spanScanner{b: b}
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		p.i = 3
	}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(b) {
		return nil, errSpan
	}
	return v, nil
}

type spanScanner struct {
	b []byte
	i int
}

func (p *spanScanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *spanScanner) value(depth int) (*span, error) {
	if p.i >= len(p.b) || depth > maxSpanDepth {
		return nil, errSpan
	}
	s := &span{start: p.i, kind: p.b[p.i]}
	var err error
	switch p.b[p.i] {
	case '"':
		err = p.str()
	case '{':
		err = p.object(s, depth)
	case '[':
		err = p.array(s, depth)
	default:
		s.kind = 'v'
		err = p.bare()
	}
	if err != nil {
		return nil, err
	}
	s.end = p.i
	return s, nil
}

// object moves past the object that starts at p.i, its members into s.
func (p *spanScanner) object(s *span, depth int) error {
	if p.empty('}') {
		return nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return errSpan
		}
		k := p.i
		if err := p.str(); err != nil {
			return err
		}
		var key string
		if json.Unmarshal(p.b[k:p.i], &key) != nil {
			return errSpan
		}
		if !p.colon() {
			return errSpan
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		s.members = append(s.members, spanMember{key: key, value: v})
		end, err := p.next('}')
		if err != nil || end {
			return err
		}
	}
}

// colon steps over the colon after a member's key, and the space around
// it; false when there is none.
func (p *spanScanner) colon() bool {
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != ':' {
		return false
	}
	p.i++
	p.space()
	return true
}

// array moves past the array that starts at p.i, its elements into s.
func (p *spanScanner) array(s *span, depth int) error {
	if p.empty(']') {
		return nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		s.elems = append(s.elems, v)
		end, err := p.next(']')
		if err != nil || end {
			return err
		}
	}
}

// bare moves past the number, true, false or null that starts at p.i (any
// run of bytes up to a delimiter; empty is errSpan).
func (p *spanScanner) bare() error {
	j := p.i
	for j < len(p.b) {
		c := p.b[j]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		j++
	}
	if j == p.i {
		return errSpan
	}
	p.i = j
	return nil
}

// empty steps over the opening bracket of an object or an array and
// reports whether close ends it at once (then stepping over that too).
func (p *spanScanner) empty(close byte) bool {
	p.i++
	p.space()
	if p.i < len(p.b) && p.b[p.i] == close {
		p.i++
		return true
	}
	return false
}

// next steps over what follows a member or an element: close, the end of
// its object or array (true), or a comma before the next one (false);
// anything else is errSpan.
func (p *spanScanner) next(close byte) (bool, error) {
	p.space()
	if p.i >= len(p.b) {
		return false, errSpan
	}
	switch p.b[p.i] {
	case close:
		p.i++
		return true, nil
	case ',':
		p.i++
		return false, nil
	}
	return false, errSpan
}

// str moves past the string that starts at p.i.
func (p *spanScanner) str() error {
	for j := p.i + 1; j < len(p.b); j++ {
		switch p.b[j] {
		case '\\':
			j++
		case '"':
			p.i = j + 1
			return nil
		}
	}
	return errSpan
}
