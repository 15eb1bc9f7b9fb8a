package against

import (
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"result.content[0].text", ""},
		{"$.result.content[*].text", ""},
		{"..timestamp", ""},
		{"$..etag", ""},
		{`result["odd key"].x`, ""},
		{"result.*.x", ""},
		{"", `--ignore "": an empty path`},
		{"result[x]", `--ignore "result[x]": [x] is not an index (want [N] or [*])`},
		{"result[-1]", `--ignore "result[-1]": [-1] is not an index (want [N] or [*])`},
		{"result[0", `--ignore "result[0": [ without ]`},
		{"result..x", `--ignore "result..x": expected a member name at ".x" (quote odd names: ["a b"])`},
		{"a b", `--ignore "a b": unexpected " b"`},
		{`result["x"`, `--ignore "result[\"x\"": want ] after the quoted key`},
	} {
		_, err := ParsePath(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.err {
			t.Errorf("ParsePath(%q) = %q, want %q", tc.in, got, tc.err)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		ignore     []string
		want       string
	}{
		{"equal", `{"content":[{"type":"text","text":"a"}]}`, `{"content":[{"text":"a","type":"text"}]}`, nil, ""},
		{"changed", `{"content":[{"type":"text","text":"a"}]}`, `{"content":[{"type":"text","text":"b"}]}`, nil, `result.content[0].text: "a" → "b"`},
		{"added and removed", `{"a":1,"b":[1,2]}`, `{"c":true,"b":[1]}`, nil, "result.a: 1 → (absent)\nresult.b[1]: 2 → (absent)\nresult.c: (absent) → true"},
		{"numbers by value", `{"n":1.0}`, `{"n":1}`, nil, ""},
		{"type change", `{"n":"1"}`, `{"n":1}`, nil, `result.n: "1" → 1`},
		{"volatile", `{"_meta":{"x":1},"timestamp":"a","v":{"sessionId":"s1"}}`, `{"_meta":{"x":2},"timestamp":"b","v":{"sessionId":"s2"}}`, nil, ""},
		{"times and uuids", `{"t":"2026-11-29T13:40:19Z","u":"0b6f4a9e-3c1d-4e2f-9a8b-7c6d5e4f3a2b"}`, `{"t":"2026-11-30T01:02:03.5+01:00","u":"11111111-2222-3333-4444-555555555555"}`, nil, ""},
		{"ignored by path", `{"content":[{"text":"a"},{"text":"b"}],"x":1}`, `{"content":[{"text":"c"},{"text":"d"}],"x":2}`, []string{"result.content[*].text"}, "result.x: 1 → 2"},
		{"ignored anywhere", `{"a":{"etag":1},"b":[{"etag":2}]}`, `{"a":{"etag":3},"b":[{"etag":4}]}`, []string{"..etag"}, ""},
		{"ignored subtree", `{"a":{"b":1}}`, `{"a":{"b":2,"c":3}}`, []string{"result.a"}, ""},
		{"odd key", `{"a b":1}`, `{"a b":2}`, nil, `result["a b"]: 1 → 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ps []Path
			for _, s := range tc.ignore {
				p, err := ParsePath(s)
				if err != nil {
					t.Fatal(err)
				}
				ps = append(ps, p)
			}
			var got []string
			for _, d := range compare("result", []byte(tc.a), []byte(tc.b), ps) {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}

// FuzzParsePath: any text parses or is refused with an error naming it;
// a parsed path matches the path it describes when that has no wildcard.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"result.content[0].text", "..x", `$["a"][*].*`, "a[", "[0]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--ignore ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		concrete := true
		for _, sg := range p.segs {
			if sg.index == -2 || sg.key == "*" {
				concrete = false
			}
		}
		if concrete && !p.matches(p.segs) {
			t.Fatalf("%q does not match its own path", s)
		}
		if concrete {
			if q, err := ParsePath(formatPath(p.segs)); err != nil || !q.matches(p.segs) {
				t.Fatalf("%q formatted as %q does not parse back: %v", s, formatPath(p.segs), err)
			}
		}
	})
}
