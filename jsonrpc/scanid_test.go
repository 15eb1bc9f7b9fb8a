package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestScanID(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":7,"result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`
	tests := []struct {
		name   string
		line   string
		want   ID
		method bool
	}{
		{"int at the start", `{"jsonrpc":"2.0","id":7,"result":{"text":"a` + "\x00" + `b"}}`, Int(7), false},
		{"string id", `{"id":"7","result":{}}`, String("7"), false},
		{"cut after the id", `{"jsonrpc":"2.0","id":12,"result":{"content":[{"te`, Int(12), false},
		{"deep nesting", deep, Int(7), false},
		{"id after a broken string", `{"result":{"t":"a` + "\x00" + `"},"id":-3}`, Int(-3), false},
		{"escaped key", `{"\u0069d":5}`, Int(5), false},
		{"escaped quote before", `{"x":"\"id\":9","id":4}`, Int(4), false},
		{"id in a string value", `{"x":"\"id\":9"`, ID{}, false},
		{"id in a nested object", `{"result":{"id":9},"error`, ID{}, false},
		{"id in a nested array", `{"result":[{"id":9}],"x":1}`, ID{}, false},
		{"number cut by the end", `{"id":7`, ID{}, false},
		{"fraction", `{"id":7.5,"result":1}`, ID{}, false},
		{"null", `{"id":null,"result":1}`, ID{}, false},
		{"bool", `{"id":true}`, ID{}, false},
		{"garbage after number", `{"id":7x,"result":1}`, ID{}, false},
		{"last wins", `{"id":1,"id":"b"}`, String("b"), false},
		{"broken last one", `{"id":1,"id":`, ID{}, false},
		{"request", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":"` + "\x00" + `"}}`, Int(7), true},
		{"upper case key", `{"ID":7}`, ID{}, false},
		{"not an object", `[{"id":7}]`, ID{}, false},
		{"log line", `id":7`, ID{}, false},
		{"empty", ``, ID{}, false},
		{"leading space and crlf", " \t{ \"id\" : 8 }\r", Int(8), false},
		{"bad escape in string id", `{"id":"a\x"}`, ID{}, false},
		{"huge int", `{"id":99999999999999999999,"result":1}`, ID{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, method := ScanID([]byte(tt.line))
			if id != tt.want || method != tt.method {
				t.Fatalf("ScanID = %v, %v; want %v, %v", id, method, tt.want, tt.method)
			}
		})
	}
}

// FuzzScanID: ScanID never panics; on a valid JSON object it reads the
// top-level "id" and "method" exactly as decoding into a map does, and on a
// line cut anywhere it never reads an id the whole line does not have.
func FuzzScanID(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"a":"b"}}`,
		`{"jsonrpc":"2.0","id":"x\"y","method":"m","params":[1,{"id":2}]}`,
		`{"\u0069d":5,"x":"\\"}`,
		`{"id":1,"id":null}`,
		`{"id":7,"result":"` + "\x00" + `"}`,
		`{"id":-0,"result":[[[]]]}`,
		`[1]`, `"id"`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		id, method := ScanID(line)
		if !json.Valid(line) || bytes.TrimSpace(line)[0] != '{' {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("valid object did not decode: %v", err)
		}
		var want ID
		if raw, ok := m["id"]; ok {
			if want.UnmarshalJSON(raw) != nil {
				want = ID{}
			}
		}
		_, wantMethod := m["method"]
		if id != want || method != wantMethod {
			t.Fatalf("ScanID(%q) = %v, %v; decoding says %v, %v", line, id, method, want, wantMethod)
		}
		// A cut line may stop before a later "id" member, but any id it
		// reads is one of the whole line's top-level ids.
		for _, n := range []int{len(line) / 2, len(line) - 1} {
			cut, _ := ScanID(line[:n])
			if cut.IsValid() && !idAmong(line, cut) {
				t.Fatalf("ScanID(%q) = %v, which no top-level id of %q is", line[:n], cut, line)
			}
		}
	})
}

// idAmong reports whether some top-level "id" member of the valid object
// line has the value id.
func idAmong(line []byte, id ID) bool {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return false
		}
		if tok == "id" {
			var v ID
			if v.UnmarshalJSON(raw) == nil && v == id {
				return true
			}
		}
	}
	return false
}
