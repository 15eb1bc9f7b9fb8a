package frames

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func plain(lines [][]span) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, sp := range l {
			b.WriteString(sp.s)
		}
	}
	return b.String()
}

func TestColorJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty object", `{}`, `{}`},
		{"empty with space", `[ ]`, `[]`},
		{"scalar", ` "a" `, `"a"`},
		{"nested", `{"a":[1,-2.5e3,{"b":null}],"c":true,"d":{}}`, "{\n  \"a\": [\n    1,\n    -2.5e3,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": true,\n  \"d\": {}\n}"},
		{"escapes", `{"k\"":"x\\y\u0041"}`, "{\n  \"k\\\"\": \"x\\\\y\\u0041\"\n}"},
		{"crlf", "[1]\r", "[\n  1\n]"},
		{"unterminated", `{"a":"b`, "{\n  \"a\": \"b"},
		{"garbage", `hello world`, `helloworld`},
		{"extra close", `]]}`, "]\n]\n}"},
		{"trailing comma", `[1,]`, "[\n  1,\n]"},
		{"control", "[\"\x1b[31m\"]", "[\n  \"\\x1b[31m\"\n]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plain(colorJSON([]byte(tt.in))); got != tt.want {
				t.Errorf("colorJSON(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
	kinds := colorJSON([]byte(`{"k":"v","n":1,"b":false,"z":null}`))
	var got []sk
	for _, l := range kinds {
		for _, sp := range l {
			if sp.k != skText && sp.k != skPunct {
				got = append(got, sp.k)
			}
		}
	}
	want := []sk{skKey, skString, skKey, skNumber, skKey, skBool, skKey, skNull}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("span styles %v, want %v", got, want)
	}
}

// FuzzColorJSON checks that the colourer never fails and, for valid JSON,
// prints the same value.
func FuzzColorJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"c"}]}`, `[`, `"\`, `{"a":}`, "\xff\xfe", `[1,2,3]`, `nul`, "\"\u0085\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := plain(colorJSON(b))
		if !json.Valid(b) || !utf8.Valid(b) {
			return
		}
		var want, got any
		_ = json.Unmarshal(b, &want)
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("pretty output of %q is not JSON: %v\n%s", b, err, out)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("pretty output of %q changed the value:\n%s", b, out)
		}
	})
}

func TestWrapSpans(t *testing.T) {
	l := []span{{skKey, "abcdef"}, {skText, "gh"}, {skString, "日本語"}}
	got := wrapSpans(l, 4)
	want := []string{"abcd", "efgh", "日本", "語"}
	if len(got) != len(want) {
		t.Fatalf("wrapSpans: %d lines %q, want %q", len(got), plain(got), want)
	}
	for i := range want {
		if p := plain(got[i : i+1]); p != want[i] {
			t.Errorf("line %d = %q, want %q", i, p, want[i])
		}
	}
	if got[1][0].k != skKey || got[1][1].k != skText {
		t.Errorf("a span cut by the wrap lost its style: %v", got[1])
	}
	if got := wrapSpans([]span{{skText, "日"}}, 1); plain(got) != "日" {
		t.Errorf("a rune wider than the line: %q", plain(got))
	}
	if got := wrapSpans(nil, 10); len(got) != 1 {
		t.Errorf("an empty line must stay one line, got %d", len(got))
	}
}
