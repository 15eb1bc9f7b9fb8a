package cmdutil

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// resultLine is what WriteResultJSON writes for ok and raw.
func resultLine(ok bool, raw string) string {
	var b bytes.Buffer
	WriteResultJSON(&b, ok, json.RawMessage(raw))
	return b.String()
}

// TestWriteResultJSON: the line is {"ok","result"} with the result as the
// server wrote it when compact, compacted when not (whitespace inside
// strings, escapes included, kept), null when empty.
func TestWriteResultJSON(t *testing.T) {
	for _, c := range []struct {
		ok        bool
		raw, want string
	}{
		{true, `{"content":[{"type":"text","text":"a b\t\"c \\\" d"}]}`, `{"ok":true,"result":{"content":[{"type":"text","text":"a b\t\"c \\\" d"}]}}` + "\n"},
		{false, "{\"isError\": true,\n  \"content\": [ ]}", `{"ok":false,"result":{"isError":true,"content":[]}}` + "\n"},
		{true, `{"text":"<b>&</b>"}`, `{"ok":true,"result":{"text":"<b>&</b>"}}` + "\n"},
		{true, "", `{"ok":true,"result":null}` + "\n"},
		{true, ` "x" `, `{"ok":true,"result":"x"}` + "\n"},
	} {
		if got := resultLine(c.ok, c.raw); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.raw, got, c.want)
		}
	}
}

// FuzzWriteResultJSON: for any JSON result, the line is one line of JSON
// whose value is json.Marshal's for the same object, and the same bytes
// but for the HTML characters json.Marshal escapes.
func FuzzWriteResultJSON(f *testing.F) {
	for _, s := range []string{`{"content":[]}`, `{"a": "b c", "d" :[1, 2]}`, `"\u2028<>&"`, "[\n1\r,\t2]", `{"s":"\\\""}`} {
		f.Add(true, s)
	}
	f.Fuzz(func(t *testing.T, ok bool, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		got := resultLine(ok, raw)
		if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
			t.Fatalf("not one line: %q", got)
		}
		want, err := json.Marshal(map[string]any{"ok": ok, "result": json.RawMessage(raw)})
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal([]byte(got), &a); err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		json.Unmarshal(want, &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q:\n got %s\nwant %s", raw, got, want)
		}
		var unescaped bytes.Buffer
		json.Compact(&unescaped, []byte(raw))
		if !strings.Contains(got, unescaped.String()) {
			t.Fatalf("%q: the result is not as compacted: %s", raw, got)
		}
	})
}
