package client

import (
	"encoding/json"
	"testing"
)

// TestSpliceMeta: the members are spliced into params' bytes, the rest kept
// byte for byte (order, spacing, numbers as written); what is not an object,
// or whose _meta is not one, is returned as given.
func TestSpliceMeta(t *testing.T) {
	tok := []MetaMember{{"progressToken", json.RawMessage(`7`)}}
	two := []MetaMember{{"progressToken", json.RawMessage(`7`)}, {"traceparent", json.RawMessage(`"00-a-b-01"`)}}
	for _, tc := range []struct {
		params string
		add    []MetaMember
		want   string
	}{
		{``, tok, `{"_meta":{"progressToken":7}}`},
		{` null `, tok, `{"_meta":{"progressToken":7}}`},
		{`{}`, tok, `{"_meta":{"progressToken":7}}`},
		{` { } `, tok, `{"_meta":{"progressToken":7} }`},
		{`{"name":"echo","arguments":{"n":1.50,"_meta":1}}`, tok, `{"_meta":{"progressToken":7},"name":"echo","arguments":{"n":1.50,"_meta":1}}`},
		{`{"z":1, "_meta" : {"x":"}"} }`, tok, `{"z":1, "_meta" : {"progressToken":7,"x":"}"} }`},
		{`{"_meta":{}}`, two, `{"_meta":{"progressToken":7,"traceparent":"00-a-b-01"}}`},
		{`{"_meta":{"progressToken":"mine"}}`, two, `{"_meta":{"traceparent":"00-a-b-01","progressToken":"mine"}}`},
		{`{"_meta":{"progress\u0054oken":"mine"}}`, tok, `{"_meta":{"progress\u0054oken":"mine"}}`},
		{`{"\u005fmeta":{"a":1}}`, tok, `{"\u005fmeta":{"progressToken":7,"a":1}}`},
		{`{"_meta":{"a":1},"_meta":{"b":2}}`, tok, `{"_meta":{"a":1},"_meta":{"progressToken":7,"b":2}}`},
		{`{"_meta":null}`, tok, `{"_meta":null}`},
		{`{"_meta":[1]}`, tok, `{"_meta":[1]}`},
		{`[1,2]`, tok, `[1,2]`},
		{`"s"`, tok, `"s"`},
		{`{"a":1}`, nil, `{"a":1}`},
	} {
		got := spliceMeta(json.RawMessage(tc.params), tc.add)
		if string(got) != tc.want {
			t.Errorf("spliceMeta(%s) = %s, want %s", tc.params, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("spliceMeta(%s) = %s: not valid JSON", tc.params, got)
		}
	}
}

// BenchmarkSpliceMeta is the progress token added to a tools/call's params.
func BenchmarkSpliceMeta(b *testing.B) {
	params := json.RawMessage(`{"name":"echo","arguments":{"value":"hello"}}`)
	b.ReportAllocs()
	for b.Loop() {
		spliceMeta(params, []MetaMember{{"progressToken", json.RawMessage(`12345`)}})
	}
}

// FuzzToolIsError: ToolIsError, which reads only the top-level members,
// agrees with ToolResult's full decode whenever that succeeds, and fails only
// when it fails.
func FuzzToolIsError(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[],"isError":true}`,
		`{"isError":false,"isError":true}`,
		`{"IsError":true}`,
		`{"is\u0045rror":true}`,
		"{\"i\u017fError\":true}",
		`{"isError":1}`,
		`{"isError":null,"content":null}`,
		`{"content":{}}`,
		`{"content":[1]}`,
		`[1]`, `null`, `"x"`, ``, ` { } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 0 && !json.Valid(raw) {
			return // a result is a part of a decoded line: valid JSON
		}
		got, gerr := ToolIsError("t", raw)
		res, werr := ToolResult("t", raw)
		switch {
		case werr == nil && (gerr != nil || got != res.IsError):
			t.Fatalf("ToolIsError(%s) = %v, %v; ToolResult says isError %v", raw, got, gerr, res.IsError)
		case gerr != nil && werr == nil:
			t.Fatalf("ToolIsError(%s) failed (%v) where ToolResult did not", raw, gerr)
		}
	})
}

// TestRequestMetaHook: the Options.RequestMeta members reach the request's
// _meta beside the progress token, in the order of their names; a member
// the caller's _meta has already is kept as the caller wrote it, and one
// whose value is not JSON is left out.
func TestRequestMetaHook(t *testing.T) {
	c := &Client{opts: Options{RequestMeta: func(dst []MetaMember, _ int64, _ string) []MetaMember {
		return append(dst, MetaMember{"tracestate", json.RawMessage(`"k=v"`)}, MetaMember{"bad", json.RawMessage(`{`)},
			MetaMember{"traceparent", json.RawMessage(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)})
	}}}
	meta := c.meta.requestMeta(c.opts.RequestMeta, []MetaMember{{"progressToken", json.RawMessage("7")}}, 7, "tools/call")
	got := string(encodeRequest(7, "tools/call", json.RawMessage(`{"name":"echo","_meta":{"tracestate":"mine"}}`), meta))
	want := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":7,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"mine"}}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
