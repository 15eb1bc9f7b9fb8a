// Package jsonrpc holds the JSON-RPC 2.0 wire types used by MCP: ids that keep
// their JSON type, requests, notifications, responses, errors, and a decoder
// that classifies one line without losing any of it.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

type idKind uint8

const (
	idNone idKind = iota
	idInt
	idString
)

// ID is a JSON-RPC request id. Integer and string ids are kept apart: Int(3)
// and String("3") are different ids, as the spec requires. The zero ID is
// "no id" (a notification).
type ID struct {
	kind idKind
	num  int64
	str  string
}

// Int returns an integer id.
func Int(n int64) ID { return ID{kind: idInt, num: n} }

// String returns a string id.
func String(s string) ID { return ID{kind: idString, str: s} }

// IsValid reports whether the id is set (integer or string).
func (id ID) IsValid() bool { return id.kind != idNone }

// IsInt reports whether the id is an integer id.
func (id ID) IsInt() bool { return id.kind == idInt }

// IsString reports whether the id is a string id.
func (id ID) IsString() bool { return id.kind == idString }

// Int64 returns the integer value and whether the id is an integer.
func (id ID) Int64() (int64, bool) { return id.num, id.kind == idInt }

// Str returns the string value and whether the id is a string.
func (id ID) Str() (string, bool) { return id.str, id.kind == idString }

// String formats the id as it appears on the wire: 3 for an integer id and
// "3" (quoted) for a string id; an unset id prints as null.
func (id ID) String() string {
	switch id.kind {
	case idInt:
		return strconv.FormatInt(id.num, 10)
	case idString:
		return strconv.Quote(id.str)
	}
	return "null"
}

// MarshalJSON writes the id with its JSON type.
func (id ID) MarshalJSON() ([]byte, error) {
	switch id.kind {
	case idInt:
		return strconv.AppendInt(nil, id.num, 10), nil
	case idString:
		return json.Marshal(id.str)
	}
	return []byte("null"), nil
}

// ErrBadID is returned when an id is neither an integer nor a string.
var ErrBadID = errors.New("id must be an integer or a string")

// UnmarshalJSON reads an integer or string id. null leaves the id unset;
// fractions, exponents, booleans, objects and arrays are ErrBadID.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := parseID(b)
	if err == nil {
		*id = v
	}
	return err
}

// parseID reads the raw JSON of an id as UnmarshalJSON does, without the
// reflection of json.Unmarshal on the common ids.
func parseID(b []byte) (ID, error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return ID{}, ErrBadID
	case string(b) == "null":
		return ID{}, nil
	case b[0] == '"':
		s, ok := plainString(b)
		if !ok {
			if err := json.Unmarshal(b, &s); err != nil {
				return ID{}, fmt.Errorf("%w: %v", ErrBadID, err)
			}
		}
		return String(s), nil
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return ID{}, fmt.Errorf("%w: %s is not a 64-bit integer", ErrBadID, b)
		}
		return Int(n), nil
	}
	return ID{}, fmt.Errorf("%w: got %.20s", ErrBadID, b)
}

// plainString returns the JSON string b (quotes included) when it has no
// escapes and is valid UTF-8, the common case that needs no decoding; ok is
// false for anything else.
func plainString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	in := b[1 : len(b)-1]
	for _, c := range in {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}
