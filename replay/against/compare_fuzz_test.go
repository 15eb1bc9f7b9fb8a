package against

import (
	"encoding/json"
	"testing"
)

// FuzzCompare: any two texts (JSON or not) compare without a panic; a
// valid JSON value compared with itself has no differences, and every
// difference found has a path under the root.
func FuzzCompare(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"a"}],"isError":false}`), []byte(`{"content":[{"type":"text","text":"b"}]}`))
	f.Add([]byte(`[1,2,{"a":null}]`), []byte(`[1,2]`))
	f.Add([]byte(`"2026-01-01T00:00:00Z"`), []byte(`1e400`))
	f.Add([]byte(`{"a":`), []byte(``))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		for _, d := range compare("result", a, b, nil) {
			if len(d.Path) < len("result") || d.Path[:len("result")] != "result" {
				t.Fatalf("diff path %q not under result", d.Path)
			}
		}
		if json.Valid(a) {
			if diffs := compare("result", a, a, nil); len(diffs) != 0 {
				t.Fatalf("%s differs from itself: %+v", a, diffs)
			}
		}
	})
}
