package client

import (
	"encoding/json"
	"reflect"
	"testing"
)

var traceMeta = map[string]json.RawMessage{"traceparent": json.RawMessage(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)}

func TestSpliceMeta(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`},
		{`null`, `{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`},
		{`{}`, `{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`},
		{`{"name":"echo"}`, `{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"name":"echo"}`},
		{`{"a":{"_meta":{}},"_meta":{"progressToken":2}}`, `{"a":{"_meta":{}},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","progressToken":2}}`},
		{`{"s":"\"_meta\":{","_meta" : { } }`, `{"s":"\"_meta\":{","_meta" : {"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } }`},
	} {
		got, ok := spliceMeta(json.RawMessage(tc.in), traceMeta)
		if !ok || string(got) != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{`[1]`, `{"_meta":3}`, `{"_meta":{"traceparent":"mine"}}`, `{"_m\u0065ta":{}}`} {
		if got, ok := spliceMeta(json.RawMessage(in), traceMeta); ok {
			t.Errorf("%s: spliced %s", in, got)
		}
	}
	// The hook's members reach the wire; a caller's own are kept.
	c := &Client{opts: Options{RequestMeta: func(int64, string) map[string]json.RawMessage { return traceMeta }}}
	if got := string(c.withRequestMeta(json.RawMessage(`{"_meta":{"traceparent":"mine"}}`), 1, "x")); got != `{"_meta":{"traceparent":"mine"}}` {
		t.Errorf("caller's traceparent: %s", got)
	}
}

// FuzzSpliceMeta: whatever the params, a splice is valid JSON that decodes
// as withMeta's (the slow path) does.
func FuzzSpliceMeta(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"_meta":{"b":2}}`, `{"x":[{"_meta":{}}],"_meta":{}}`, `{"s":"\\\"_meta\":{"}`, `[]`, `{"_meta":[]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		got, ok := spliceMeta(json.RawMessage(in), traceMeta)
		if !ok {
			return
		}
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%s → %s: %v", in, got, err)
		}
		_ = json.Unmarshal(withMeta(json.RawMessage(in), traceMeta), &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: splice %s, withMeta %v", in, got, b)
		}
	})
}
