package client

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzEraParams: the params of a modern request (any JSON the caller gave)
// with the era's _meta added, and the params of the retry of an input
// request. Params that are an object, absent or null come out a JSON
// object with the same other members, the _meta keys added where params
// did not have them, and a retry's inputResponses and requestState set as
// given (or removed); other params are sent as given by spliceMeta and
// refused with an error by retryParams. Valid JSON never comes out invalid.
// (spliceMeta is given valid JSON only, as encodeParams makes sure.)
func FuzzEraParams(f *testing.F) {
	f.Add([]byte(`{"name":"echo","arguments":{"value":"hi"}}`), "k", []byte(`"v"`), []byte(`{"s":1}`))
	f.Add([]byte(`{"_meta":{"progressToken":3,"k":"mine"},"a":[1,2]}`), "k", []byte(`1`), []byte(`"opaque"`))
	f.Add([]byte(`{"inputResponses":{"old":1},"requestState":"old","x":null}`), "", []byte(`{}`), []byte(``))
	f.Add([]byte(`null`), "io.modelcontextprotocol/protocolVersion", []byte(`"2026-07-28"`), []byte(`null`))
	f.Add([]byte(` null `), "k", []byte(`true`), []byte(`"s"`))
	f.Add([]byte(``), "k", []byte(`[]`), []byte(``))
	f.Add([]byte(`[1,2]`), "k", []byte(`1`), []byte(`1`))
	f.Add([]byte(`"text"`), "k", []byte(`1`), []byte(``))
	f.Add([]byte(`{"_meta":null}`), "k", []byte(`1`), []byte(``))
	f.Add([]byte(`{"_meta":5,"a":1}`), "k", []byte(`1`), []byte(``))
	f.Add([]byte(`{"a":1,"a":2}`), "k", []byte(`{"\u0000":"\ud800"}`), []byte(`{`))
	f.Add([]byte("{\n\t\"a\" : 1\r\n}"), "k", []byte(`1`), []byte(`1`))
	f.Fuzz(func(t *testing.T, params []byte, key string, val, state []byte) {
		if !json.Valid(val) {
			val = []byte(`"v"`)
		}
		key = strings.ToValidUTF8(key, "?") // keys are the era's own, or a server's decoded from JSON
		meta := map[string]json.RawMessage{"io.modelcontextprotocol/protocolVersion": json.RawMessage(`"2026-07-28"`), key: val}
		add := []MetaMember{{"io.modelcontextprotocol/protocolVersion", json.RawMessage(`"2026-07-28"`)}}
		if key != add[0].Key {
			add = append(add, MetaMember{key, val})
		} else {
			add[0].Value = val
		}
		answers := map[string]json.RawMessage{key: val}
		objectLike := false
		var in map[string]json.RawMessage
		if t := bytes.TrimSpace(params); len(t) == 0 || string(t) == "null" {
			objectLike, in = true, map[string]json.RawMessage{}
		} else if err := json.Unmarshal(params, &in); err == nil && in != nil {
			objectLike = true
		}

		validIn := len(params) == 0 || json.Valid(params) // what encodeParams lets through
		out := json.RawMessage(params)
		if validIn {
			out = spliceMeta(json.RawMessage(params), add)
		}
		var inMeta map[string]json.RawMessage
		metaObject := in["_meta"] == nil || (json.Unmarshal(in["_meta"], &inMeta) == nil && inMeta != nil)
		switch {
		case !validIn:
		case !objectLike || !metaObject:
			if !bytes.Equal(out, params) {
				t.Fatalf("spliceMeta(%q) = %q, want it sent as given", params, out)
			}
		default:
			got := eraObject(t, "spliceMeta", params, out)
			eraSameMembers(t, "spliceMeta", params, in, got, "_meta")
			var m map[string]json.RawMessage
			if err := json.Unmarshal(got["_meta"], &m); err != nil || m == nil {
				t.Fatalf("spliceMeta(%q) = %q: _meta not an object", params, out)
			}
			for k, v := range meta {
				want := v
				if old, ok := inMeta[k]; ok {
					want = old // the caller's own keys are kept
				}
				if !eraSameJSON(m[k], want) {
					t.Fatalf("spliceMeta(%q) = %q: _meta[%q] = %s, want %s", params, out, k, m[k], want)
				}
			}
		}

		for _, ans := range []map[string]json.RawMessage{answers, nil} {
			out, err := retryParams(json.RawMessage(params), ans, state)
			switch {
			case !objectLike:
				if err == nil {
					t.Fatalf("retryParams(%q) = %q, want an error", params, out)
				}
			case err != nil:
				if len(state) > 0 && json.Valid(state) {
					t.Fatalf("retryParams(%q, state %q): %v", params, state, err)
				}
			default:
				got := eraObject(t, "retryParams", params, out)
				eraSameMembers(t, "retryParams", params, in, got, "inputResponses", "requestState")
				if r, ok := got["inputResponses"]; ok != (len(ans) > 0) || (ok && !eraSameJSON(r, eraJSON(t, ans))) {
					t.Fatalf("retryParams(%q) = %q: inputResponses %s, want %v", params, out, r, ans)
				}
				if s, ok := got["requestState"]; ok != (len(state) > 0) || (ok && !eraSameJSON(s, state)) {
					t.Fatalf("retryParams(%q) = %q: requestState %s, want %q", params, out, s, state)
				}
			}
		}
	})
}

// eraObject decodes out, which must be a JSON object.
func eraObject(t *testing.T, fn string, params, out []byte) map[string]json.RawMessage {
	t.Helper()
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil || got == nil {
		t.Fatalf("%s(%q) = %q: not a JSON object (%v)", fn, params, out, err)
	}
	return got
}

// eraSameMembers checks that got has the members of in, but the ones named.
func eraSameMembers(t *testing.T, fn string, params []byte, in, got map[string]json.RawMessage, but ...string) {
	t.Helper()
	skip := map[string]bool{}
	for _, k := range but {
		skip[k] = true
	}
	for k, v := range in {
		if !skip[k] && !eraSameJSON(got[k], v) {
			t.Fatalf("%s(%q): member %q is %s, was %s", fn, params, k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := in[k]; !ok && !skip[k] {
			t.Fatalf("%s(%q): member %q added", fn, params, k)
		}
	}
}

func eraSameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func eraJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
