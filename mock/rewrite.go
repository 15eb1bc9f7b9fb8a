package mock

import (
	"bytes"
	"encoding/json"
)

// memberSpan finds the value of member key of the JSON object in raw (the
// first one, at the top level) and returns where its bytes start and end.
// ok is false when raw does not start with an object or has no such member.
func memberSpan(raw []byte, key string) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, 0, false
		}
		if k != key {
			continue
		}
		v = bytes.TrimSpace(v)
		end = int(dec.InputOffset())
		start = end - len(v)
		if start < 0 || !bytes.Equal(raw[start:end], v) {
			return 0, 0, false
		}
		return start, end, true
	}
	return 0, 0, false
}

// setMember returns raw with the value of its top-level member key replaced
// by val; every other byte is kept. ok is false (and raw returned) when
// there is no such member.
func setMember(raw []byte, key string, val []byte) ([]byte, bool) {
	start, end, ok := memberSpan(raw, key)
	if !ok {
		return raw, false
	}
	out := make([]byte, 0, len(raw)-(end-start)+len(val))
	out = append(out, raw[:start]...)
	out = append(out, val...)
	return append(out, raw[end:]...), true
}

// RewriteID returns a response line with its id replaced by id (JSON: an
// integer or a string, as the caller sent it), every other byte as recorded.
func RewriteID(raw, id []byte) ([]byte, bool) { return setMember(raw, "id", id) }

// RewriteToken returns a notifications/progress line with
// params.progressToken replaced by token, every other byte as recorded.
func RewriteToken(raw, token []byte) ([]byte, bool) {
	ps, pe, ok := memberSpan(raw, "params")
	if !ok {
		return raw, false
	}
	params, ok := setMember(raw[ps:pe], "progressToken", token)
	if !ok {
		return raw, false
	}
	out := make([]byte, 0, len(raw)+len(token))
	out = append(out, raw[:ps]...)
	out = append(out, params...)
	return append(out, raw[pe:]...), true
}
