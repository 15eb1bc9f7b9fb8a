package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Class says how a line failed to be a JSON-RPC message.
type Class uint8

// The classes of decode failure, from worst to mildest.
const (
	// ClassNotJSON: the line is not JSON at all (often a server logging to stdout).
	ClassNotJSON Class = iota + 1
	// ClassNotObject: valid JSON, but not an object (an array, string, number...).
	ClassNotObject
	// ClassInvalid: a JSON object that breaks a JSON-RPC rule.
	ClassInvalid
)

// String names the class as shown in frames.
func (c Class) String() string {
	switch c {
	case ClassNotJSON:
		return "not-json"
	case ClassNotObject:
		return "not-object"
	case ClassInvalid:
		return "invalid"
	}
	return "unknown"
}

// DecodeError explains why a line is not a valid JSON-RPC message.
type DecodeError struct {
	Class  Class
	Reason string
	// Broken names the rules of ClassInvalid that consumers branch on
	// (lint), so that none of them reads Reason, which is for people.
	Broken Broken
}

// Broken is a set of JSON-RPC rules a decoded object breaks.
type Broken uint8

// The rules a DecodeError names in Broken.
const (
	// BrokenNullID: a request (it has a method) whose id is null.
	BrokenNullID Broken = 1 << iota
	// BrokenResultAndError: a response with both result and error.
	BrokenResultAndError
)

// The reasons Decode gives for the rules in Broken.
const (
	reasonNullID         = "request id is null"
	reasonResultAndError = "response has both result and error"
)

// BrokenIn returns the rules named in reason, a DecodeError's Reason as
// Decode wrote it: for a DecodeError read back from where only the reason
// was kept (a capture written before Broken was recorded).
func BrokenIn(reason string) Broken {
	var b Broken
	for _, p := range strings.Split(reason, "; ") {
		switch p {
		case reasonNullID:
			b |= BrokenNullID
		case reasonResultAndError:
			b |= BrokenResultAndError
		}
	}
	return b
}

// Error returns the reason, prefixed by the class.
func (e *DecodeError) Error() string { return e.Class.String() + ": " + e.Reason }

// ErrDecode matches any *DecodeError with errors.Is.
var ErrDecode = errors.New("jsonrpc: decode error")

// Is lets errors.Is(err, ErrDecode) match every DecodeError.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	v2      bool            // members saw "jsonrpc":"2.0" (JSONRPC is then nil)
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Decode classifies one line (without its newline; a trailing "\r" is
// ignored). It never loses information: when the line is invalid it returns a
// *DecodeError together with whatever could be read (for a response that has
// both result and error, the Message still carries its ID and Kind
// KindResponse, so the caller can settle that request).
//
// Params and Result are parts of line, not copies (their capacity ends with
// them, so appending to one never writes into the line): decoding a line
// allocates nothing in proportion to them. The caller must not modify line
// while it uses them.
func Decode(line []byte) (Message, error) {
	trimmed, err := object(line)
	if err != nil {
		return Message{}, err
	}
	var w wireMessage
	if !w.members(trimmed) {
		// A member of the wrong type (jsonrpc not a string): encoding/json
		// says which, in its own words.
		u, err := unmarshalWire(trimmed)
		if err != nil {
			return Message{}, &DecodeError{Class: ClassInvalid, Reason: err.Error()}
		}
		w = u
	}
	return classify(&w)
}

// object is line without its white space and a trailing "\r", when that is
// a JSON object; otherwise the error says what it is (not-json,
// not-object).
func object(line []byte) ([]byte, error) {
	line = bytes.TrimRight(line, "\r")
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		return nil, notJSON(trimmed)
	}
	if trimmed[0] != '{' {
		return nil, notObject(trimmed[0])
	}
	return trimmed, nil
}

// unmarshalWire decodes a message the byte scan of members could not (kept
// apart so that Decode's own wireMessage stays off the heap).
func unmarshalWire(obj []byte) (wireMessage, error) {
	w := new(wireMessage)
	err := json.Unmarshal(obj, w)
	return *w, err
}

// members fills w from the top-level members of obj, a valid JSON object,
// as json.Unmarshal would (keys matched without regard to case, the last of
// a repeated key wins), but with each value a part of obj rather than a
// copy. It reports false when json.Unmarshal would fail: a jsonrpc that is
// neither a string nor null.
func (w *wireMessage) members(obj []byte) bool {
	s := idScanner{b: obj}
	s.ws()
	s.eat('{')
	for {
		s.ws()
		if s.eat('}') {
			return true
		}
		kstart := s.i
		if !s.skipStr() {
			return true // cannot happen: obj is valid
		}
		key := obj[kstart+1 : s.i-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			_ = json.Unmarshal(obj[kstart:s.i], &k)
			key = []byte(k)
		}
		s.ws()
		s.eat(':')
		s.ws()
		start := s.i
		if !s.value() && s.i < len(obj) {
			return true // cannot happen: obj is valid and its last byte is '}'
		}
		v := obj[start:s.i:s.i]
		switch {
		case bytes.EqualFold(key, []byte("jsonrpc")):
			switch {
			case string(v) == "null":
				w.JSONRPC, w.v2 = nil, false
			case string(v) == `"`+Version+`"`:
				w.JSONRPC, w.v2 = nil, true
			case v[0] == '"':
				str := string(v[1 : len(v)-1])
				if bytes.IndexByte(v, '\\') >= 0 || !utf8.ValidString(str) {
					_ = json.Unmarshal(v, &str)
				}
				w.JSONRPC, w.v2 = &str, false
			default:
				return false
			}
		case bytes.EqualFold(key, []byte("id")):
			w.ID = v
		case bytes.EqualFold(key, []byte("method")):
			w.Method = v
		case bytes.EqualFold(key, []byte("params")):
			w.Params = v
		case bytes.EqualFold(key, []byte("result")):
			w.Result = v
		case bytes.EqualFold(key, []byte("error")):
			w.Error = v
		}
		s.ws()
		s.eat(',')
	}
}

func notJSON(b []byte) error {
	if len(b) == 0 {
		return &DecodeError{Class: ClassNotJSON, Reason: "empty line: stdout carries one JSON-RPC message per line"}
	}
	if b[0] == '{' || b[0] == '[' {
		return &DecodeError{Class: ClassNotJSON, Reason: "line is not valid JSON (truncated or corrupt message)"}
	}
	return &DecodeError{Class: ClassNotJSON, Reason: "line on stdout is not JSON: servers must log to stderr"}
}

func notObject(first byte) error {
	what := "a JSON value"
	switch {
	case first == '[':
		return &DecodeError{Class: ClassNotObject, Reason: "JSON array, not an object (batches are not part of MCP since 2025-06-18)"}
	case first == '"':
		what = "a JSON string"
	case first == 't' || first == 'f':
		what = "a JSON boolean"
	case first == 'n':
		what = "JSON null"
	default:
		what = "a JSON number"
	}
	return &DecodeError{Class: ClassNotObject, Reason: what + ", not an object: every JSON-RPC message is an object"}
}

func classify(w *wireMessage) (Message, error) {
	var m Message
	var problems []string
	var broken Broken
	if w.v2 {
		// "2.0", as it should be
	} else if w.JSONRPC == nil {
		problems = append(problems, `missing "jsonrpc":"2.0"`)
	} else if *w.JSONRPC != Version {
		problems = append(problems, fmt.Sprintf("jsonrpc is %q, want \"2.0\"", *w.JSONRPC))
	}
	hasID := len(w.ID) > 0 && string(w.ID) != "null"
	if hasID {
		id, err := parseID(w.ID)
		if err != nil {
			return m, &DecodeError{Class: ClassInvalid, Reason: err.Error()}
		}
		m.ID = id
	}
	m.Params = w.Params
	if len(w.Method) > 0 {
		method, ok := plainString(w.Method)
		if !ok && json.Unmarshal(w.Method, &method) != nil {
			return m, &DecodeError{Class: ClassInvalid, Reason: "method is not a string"}
		}
		m.Method = method
		m.Kind = KindNotification
		if hasID {
			m.Kind = KindRequest
		} else if len(w.ID) > 0 {
			problems = append(problems, reasonNullID)
			broken |= BrokenNullID
		}
		if len(w.Result) > 0 || len(w.Error) > 0 {
			problems = append(problems, "a request or notification has result or error")
		}
		return m, joinProblems(problems, broken)
	}
	m.Kind = KindResponse
	hasResult, hasError := len(w.Result) > 0, len(w.Error) > 0
	m.Result = w.Result
	if hasError {
		var e Error
		if err := json.Unmarshal(w.Error, &e); err != nil {
			problems = append(problems, "error is not an object with an integer code and a message")
		} else {
			m.Error = &e
		}
	}
	switch {
	case hasResult && hasError:
		problems = append(problems, reasonResultAndError)
		broken |= BrokenResultAndError
	case !hasResult && !hasError:
		problems = append(problems, "response has neither result nor error (and no method)")
	}
	if !hasID && hasResult {
		problems = append(problems, "response has no id")
	}
	return m, joinProblems(problems, broken)
}

func joinProblems(p []string, broken Broken) error {
	if len(p) == 0 {
		return nil
	}
	return &DecodeError{Class: ClassInvalid, Reason: strings.Join(p, "; "), Broken: broken}
}
