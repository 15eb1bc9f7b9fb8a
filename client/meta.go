package client

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// MetaMember is one member a request adds to params._meta (the progress
// token, the modern era's fields; tracing adds its own the same way,
// through Options.RequestMeta).
type MetaMember struct {
	Key   string
	Value json.RawMessage // valid JSON
}

// spliceMeta adds to params._meta the members of add that it does not have
// yet (see appendMeta).
func spliceMeta(params json.RawMessage, add []MetaMember) json.RawMessage {
	if len(add) == 0 {
		return params
	}
	return appendMeta(make([]byte, 0, len(params)+12+membersLen(add)), params, add)
}

// appendMeta appends params to dst with the members of add that its _meta
// does not have yet spliced in: their bytes are inserted into params instead
// of decoding and re-encoding it, so the rest of params is kept byte for
// byte. Absent or null params become an object; params that are not an
// object, or whose _meta is not one, are appended as given (the server will
// say). params must be valid JSON (encodeParams checks it); anything the
// scan does not understand is appended as given too.
func appendMeta(dst, params []byte, add []MetaMember) []byte {
	p := trimSpace(params)
	if len(add) == 0 {
		return append(dst, params...)
	}
	if len(p) == 0 || string(p) == "null" {
		dst = append(dst, `{"_meta":{`...)
		dst = appendMembers(dst, add)
		return append(dst, "}}"...)
	}
	if p[0] != '{' {
		return append(dst, params...)
	}
	metaStart, metaEnd := -1, -1 // the value of the last top-level _meta
	if _, ok := scanObject(p, 0, func(key []byte, vs, ve int) {
		if keyIs(key, "_meta") {
			metaStart, metaEnd = vs, ve
		}
	}); !ok {
		return append(dst, params...)
	}
	if metaStart < 0 {
		// No _meta: insert it as the first member.
		dst = append(dst, `{"_meta":{`...)
		dst = appendMembers(dst, add)
		dst = append(dst, '}')
		if !emptyObject(p) {
			dst = append(dst, ',')
		}
		return append(dst, p[1:]...)
	}
	meta := p[metaStart:metaEnd]
	if meta[0] != '{' {
		return append(dst, params...)
	}
	var missing []MetaMember
	var have [][]byte
	if _, ok := scanObject(meta, 0, func(key []byte, _, _ int) { have = append(have, key) }); !ok {
		return append(dst, params...)
	}
	for _, m := range add {
		found := false
		for _, k := range have {
			if keyIs(k, m.Key) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return append(dst, params...)
	}
	dst = append(dst, p[:metaStart+1]...)
	dst = appendMembers(dst, missing)
	if len(have) > 0 {
		dst = append(dst, ',')
	}
	return append(dst, p[metaStart+1:]...)
}

// membersLen is about the length of add's members encoded.
func membersLen(add []MetaMember) int {
	n := 0
	for _, m := range add {
		n += len(m.Key) + len(m.Value) + 8
	}
	return n
}

// appendMembers appends add as object members, comma-separated.
func appendMembers(out []byte, add []MetaMember) []byte {
	for i, m := range add {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendKey(out, m.Key)
		out = append(out, ':')
		out = append(out, m.Value...)
	}
	return out
}

// appendKey appends key as a JSON string (escaped as encoding/json would
// when it is not plain ASCII).
func appendKey(out []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			b, _ := json.Marshal(key)
			return append(out, b...)
		}
	}
	out = append(out, '"')
	out = append(out, key...)
	return append(out, '"')
}

// keyIs reports whether the raw JSON string key (quotes included) is want.
func keyIs(key []byte, want string) bool {
	if len(key) == len(want)+2 && string(key[1:len(key)-1]) == want {
		return true
	}
	for _, c := range key {
		if c == '\\' {
			var s string
			return json.Unmarshal(key, &s) == nil && s == want
		}
	}
	return false
}

// keyFold reports whether the raw JSON string key matches the struct field
// name want as encoding/json matches them (without regard to case).
func keyFold(key []byte, want string) bool {
	if len(key) == len(want)+2 && bytes.EqualFold(key[1:len(key)-1], []byte(want)) {
		return true
	}
	plain := true
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return false
	}
	var s string
	return json.Unmarshal(key, &s) == nil && strings.EqualFold(s, want)
}

// emptyObject reports whether the object p has no members.
func emptyObject(p []byte) bool {
	i := skipSpace(p, 1)
	return i < len(p) && p[i] == '}'
}

// trimSpace drops JSON whitespace around b.
func trimSpace(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanObject walks the object starting at b[i] ('{'), calling member with
// each member's raw key (quotes included) and the span [vs, ve) of its
// value. It returns the index after the closing '}', and false if b is not
// a well-formed object there.
func scanObject(b []byte, i int, member func(key []byte, vs, ve int)) (int, bool) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		ke, ok := skipString(b, i)
		if !ok {
			return 0, false
		}
		key := b[i:ke]
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		vs := skipSpace(b, i+1)
		ve, ok := skipValue(b, vs)
		if !ok {
			return 0, false
		}
		member(key, vs, ve)
		i = skipSpace(b, ve)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index after the JSON value starting at b[i]. Nested
// values are skipped by counting brackets outside strings (b is valid JSON).
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				e, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j, j > i
}

// RequestMetaFunc appends to dst the members to add to the params._meta
// of request id as it is registered (for example the trace context of
// sonde's span for it: traceparent, tracestate), and returns it. It is
// called with the client's lock held, once per request (a retry after
// input_required is a new request): it must be quick and must not call
// the client. Members the params' _meta already has are kept; a member
// whose value is not valid JSON is left out.
type RequestMetaFunc func(dst []MetaMember, id int64, method string) []MetaMember

// requestMetaState is where each request's _meta is made. It is guarded by
// Client.mu: start (call.go) uses it with the lock held, for one request
// at a time.
type requestMetaState struct {
	// scratch is where the hook appends its members (a slice handed to a
	// hook escapes, so the request's own members stay on its stack and
	// these are copied over).
	scratch []MetaMember
	// token holds the digits of the request's progress token while its
	// line is made (on the request's stack it would escape).
	token [20]byte
}

// requestMeta appends the members of hook (Options.RequestMeta) for request
// id to meta, in the order of their names (the same bytes every time).
func (s *requestMetaState) requestMeta(hook RequestMetaFunc, meta []MetaMember, id int64, method string) []MetaMember {
	if hook == nil {
		return meta
	}
	// The hook appends to the client's scratch slice, not to meta: a slice
	// handed to a function value escapes, and meta's backing array is the
	// request's own, on its stack.
	added := hook(s.scratch[:0], id, method)
	added = slices.DeleteFunc(added, func(m MetaMember) bool { return !json.Valid(m.Value) })
	slices.SortFunc(added, func(a, b MetaMember) int { return strings.Compare(a.Key, b.Key) })
	meta = append(meta, added...)
	clear(added) // keep nothing of this request's values alive
	s.scratch = added[:0]
	return meta
}
