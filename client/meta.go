package client

import (
	"bytes"
	"encoding/json"
)

// RequestMetaFunc returns members to add to the params._meta of request id
// as it is registered (for example the trace context of sonde's span for
// it: traceparent, tracestate). It is called with the client's lock held,
// once per request (a retry after input_required is a new request): it
// must be quick and must not call the client. Members the params already
// have are kept.
type RequestMetaFunc func(id int64, method string) map[string]json.RawMessage

// withRequestMeta adds the hook's members to params._meta.
func (c *Client) withRequestMeta(params json.RawMessage, id int64, method string) json.RawMessage {
	if c.opts.RequestMeta == nil {
		return params
	}
	meta := c.opts.RequestMeta(id, method)
	if len(meta) == 0 {
		return params
	}
	if out, ok := spliceMeta(params, meta); ok {
		return out
	}
	return withMeta(params, meta)
}

// spliceMeta inserts members into the params object's top-level _meta
// (made when absent) without decoding the params. It declines (ok false)
// what it cannot do by splicing: params that are not an object, a _meta
// that is not an object, \u escapes (a key could be spelt with one), or
// one of the members' names anywhere in params (the caller's value must be
// kept).
func spliceMeta(params json.RawMessage, members map[string]json.RawMessage) (json.RawMessage, bool) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || string(p) == "null" {
		p = []byte("{}")
	}
	if p[0] != '{' || bytes.Contains(p, []byte(`\u`)) {
		return nil, false // not an object, or keys that may be escaped
	}
	var add []byte
	for k, v := range members {
		name, _ := json.Marshal(k)
		if bytes.Contains(p, name) {
			return nil, false
		}
		if len(add) > 0 {
			add = append(add, ',')
		}
		add = append(append(append(add, name...), ':'), v...)
	}
	at, ok := topLevelValue(p, "_meta")
	if !ok {
		// No _meta: a new member first in the object.
		out := make([]byte, 0, len(p)+len(add)+12)
		out = append(append(append(out, `{"_meta":{`...), add...), '}')
		if rest := bytes.TrimSpace(p[1:]); len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, p[1:]...), true
	}
	if at < 0 || p[at] != '{' {
		return nil, false
	}
	out := make([]byte, 0, len(p)+len(add)+1)
	out = append(append(out, p[:at+1]...), add...)
	if rest := bytes.TrimSpace(p[at+1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, p[at+1:]...), true
}

// topLevelValue finds the member key of the object obj (valid JSON) and
// returns the offset of its value; ok is false when there is none.
func topLevelValue(obj []byte, key string) (at int, ok bool) {
	depth := 0
	for i := 0; i < len(obj); i++ {
		switch obj[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			j := i + 1
			for j < len(obj) && obj[j] != '"' {
				if obj[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(obj) {
				return -1, false
			}
			s := obj[i+1 : j]
			i = j
			if depth != 1 {
				continue
			}
			k := j + 1
			for k < len(obj) && (obj[k] == ' ' || obj[k] == '\t' || obj[k] == '\n' || obj[k] == '\r') {
				k++
			}
			if k >= len(obj) || obj[k] != ':' {
				continue // a value, not a key
			}
			if string(s) != key {
				continue
			}
			k++
			for k < len(obj) && (obj[k] == ' ' || obj[k] == '\t' || obj[k] == '\n' || obj[k] == '\r') {
				k++
			}
			return k, k < len(obj)
		}
	}
	return -1, false
}
