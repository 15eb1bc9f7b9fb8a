package client

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzSpliceMeta: spliceMeta against the decode, add and encode it
// replaces. For any valid JSON params and members to add, the output is
// valid JSON that decodes to what the reference makes (params decoded, the
// members _meta lacks set in it, encoded again; params that are not an
// object, or whose _meta is not one, unchanged; absent or null params an
// object holding _meta alone), and every member params had (top level and
// in _meta) keeps its bytes.
func FuzzSpliceMeta(f *testing.F) {
	f.Add([]byte(`{"name":"echo","arguments":{"value":"hi"}}`), "traceparent", []byte(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`), "tracestate", []byte(`"a=b"`))
	f.Add([]byte(`{"_meta":{"traceparent":"mine"},"a":1.50}`), "traceparent", []byte(`"theirs"`), "progressToken", []byte(`7`))
	f.Add([]byte(`{"_meta":{},"x":[1,{"_meta":2}]}`), "k", []byte(`{"n":[true,null]}`), "k", []byte(`2`))
	f.Add([]byte(`null`), "k", []byte(`1`), "", []byte(`""`))
	f.Add([]byte(``), "k", []byte(`1`), "j", []byte(`[]`))
	f.Add([]byte(`[1,2]`), "k", []byte(`1`), "j", []byte(`1`))
	f.Add([]byte(`{"_meta":null}`), "k", []byte(`1`), "j", []byte(`1`))
	f.Add([]byte(`{"_meta":{"a":1},"_meta":{"k":0}}`), "k", []byte(`1`), "a", []byte(`1`))
	f.Add([]byte(`{"\u005fmeta":{"\u006b":0}}`), "k", []byte(`1`), "é", []byte(`"\u00e9"`))
	f.Add([]byte(" {\n \"a\" : \"}\\\"{\" } "), "k\"\\", []byte(`1`), "\x01", []byte(`1`))
	f.Fuzz(func(t *testing.T, params []byte, k1 string, v1 []byte, k2 string, v2 []byte) {
		if len(trimSpace(params)) > 0 && !json.Valid(params) {
			return // encodeParams gives spliceMeta valid JSON only
		}
		if !json.Valid(v1) || !json.Valid(v2) {
			return // RequestMeta drops a member whose value is not JSON
		}
		k1, k2 = strings.ToValidUTF8(k1, "?"), strings.ToValidUTF8(k2, "?")
		add := []MetaMember{{k1, v1}, {k2, v2}}
		out := spliceMeta(json.RawMessage(params), add)
		if !json.Valid(out) {
			t.Fatalf("spliceMeta(%q) = %q: not JSON", params, out)
		}
		want, changed := spliceReference(params, add)
		if !changed {
			if !bytes.Equal(out, params) {
				t.Fatalf("spliceMeta(%q) = %q, want it as given", params, out)
			}
			return
		}
		if got := decodeAny(t, out); !reflect.DeepEqual(got, decodeAny(t, want)) {
			t.Fatalf("spliceMeta(%q) = %q, want the same as %q", params, out, want)
		}
		// The members params had keep their bytes.
		var in, got map[string]json.RawMessage
		if json.Unmarshal(params, &in) != nil || json.Unmarshal(out, &got) != nil {
			return // absent or null params
		}
		for k, v := range in {
			if k != "_meta" && !bytes.Equal(got[k], v) {
				t.Fatalf("spliceMeta(%q): member %q is %q, was %q", params, k, got[k], v)
			}
		}
		var inMeta, gotMeta map[string]json.RawMessage
		if json.Unmarshal(in["_meta"], &inMeta) == nil && json.Unmarshal(got["_meta"], &gotMeta) == nil {
			for k, v := range inMeta {
				if !bytes.Equal(gotMeta[k], v) {
					t.Fatalf("spliceMeta(%q): _meta member %q is %q, was %q", params, k, gotMeta[k], v)
				}
			}
		}
	})
}

// spliceReference is what spliceMeta stands for: params decoded, each
// member of add that params._meta lacks set in it (the last of a repeated
// key wins, as when decoding), encoded again. changed is false when params
// are kept as given: not an object, or a _meta that is not an object.
func spliceReference(params []byte, add []MetaMember) (out []byte, changed bool) {
	var obj map[string]json.RawMessage
	if p := trimSpace(params); len(p) == 0 || string(p) == "null" {
		obj = map[string]json.RawMessage{}
	} else if json.Unmarshal(params, &obj) != nil {
		return params, false
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok {
		if json.Unmarshal(raw, &meta) != nil || meta == nil {
			return params, false
		}
	}
	had := make(map[string]bool, len(meta))
	for k := range meta {
		had[k] = true
	}
	for _, m := range add {
		if !had[m.Key] {
			meta[m.Key] = m.Value
		}
	}
	b, _ := json.Marshal(meta)
	obj["_meta"] = b
	out, _ = json.Marshal(obj)
	return out, true
}

// decodeAny decodes b with numbers kept as written.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}
