package serve

import (
	"bytes"
	"encoding/json"
)

// span is where a member's value starts and ends in a line.
type span struct{ start, end int }

// memberSpans finds the values of member key of the JSON object in raw (at
// the top level; a key may repeat, and decoders take the last) and returns
// where their bytes are. It is empty when raw does not start with an object
// or has no such member.
func memberSpans(raw []byte, key string) []span {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []span
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		if k != key {
			continue
		}
		v = bytes.TrimSpace(v)
		end := int(dec.InputOffset())
		start := end - len(v)
		if start < 0 || !bytes.Equal(raw[start:end], v) {
			return nil
		}
		out = append(out, span{start, end})
	}
	return out
}

// setMember returns raw with the value of its top-level member key (every
// occurrence) replaced by val; every other byte is kept. ok is false (and
// raw returned) when there is no such member.
func setMember(raw []byte, key string, val []byte) ([]byte, bool) {
	spans := memberSpans(raw, key)
	if len(spans) == 0 {
		return raw, false
	}
	out := make([]byte, 0, len(raw)+len(spans)*len(val))
	prev := 0
	for _, sp := range spans {
		out = append(out, raw[prev:sp.start]...)
		out = append(out, val...)
		prev = sp.end
	}
	return append(out, raw[prev:]...), true
}

// RewriteID returns a response line with its id replaced by id (JSON: an
// integer or a string, as the caller sent it), every other byte as recorded.
func RewriteID(raw, id []byte) ([]byte, bool) { return setMember(raw, "id", id) }

// RewriteToken returns a notifications/progress line with
// params.progressToken replaced by token, every other byte as recorded.
func RewriteToken(raw, token []byte) ([]byte, bool) {
	return setInner(raw, "params", "progressToken", token)
}

// setInner returns raw with member key of its object member outer (the
// last, when repeated) set to val (JSON), every other byte as it was; ok
// is false, and raw returned, when there is no such member to set.
func setInner(raw []byte, outer, key string, val []byte) ([]byte, bool) {
	spans := memberSpans(raw, outer)
	if len(spans) == 0 {
		return raw, false
	}
	start, end := spans[len(spans)-1].start, spans[len(spans)-1].end
	inner, ok := setMember(raw[start:end], key, val)
	if !ok {
		return raw, false
	}
	out := make([]byte, 0, len(raw)+len(val))
	out = append(out, raw[:start]...)
	out = append(out, inner...)
	return append(out, raw[end:]...), true
}
