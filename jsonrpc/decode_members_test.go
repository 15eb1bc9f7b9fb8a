package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeUnmarshal is Decode as it was before it read the members itself:
// json.Unmarshal into wireMessage, copying every value.
func decodeUnmarshal(line []byte) (Message, error) {
	trimmed, err := object(line)
	if err != nil {
		return Message{}, err
	}
	var w wireMessage
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return Message{}, &DecodeError{Class: ClassInvalid, Reason: err.Error()}
	}
	return classify(&w)
}

// FuzzDecodeMembers: Decode gives the same message and error as
// json.Unmarshal into the wire struct, whatever the line (repeated keys,
// keys in another case or escaped, values of every type).
func FuzzDecodeMembers(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"a":"b"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"m","params":[1,{"id":2}]}`,
		`{"JSONRPC":"2.0","Id":1,"RESULT":null,"error":{"code":1,"message":"m","data":[1]}}`,
		`{"jsonrpc":5,"id":1}`,
		`{"jsonrpc":null,"id":1,"result":1}`,
		`{"j\u0073onrpc":"2.0","\u0069d":1,"result":1,"result":2}`,
		` {"jsonrpc" : "2.0" , "method" : "n" } ` + "\r",
		`{"jsonrpc":"2.0","id":1.5,"result":1}`,
		`{"jsonrpc":"2.0","method":3}`,
		`{"jsonrpc":"2.0","id":1,"error":"x"}`,
		`[1]`, `x`, ``, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, gerr := Decode(line)
		want, werr := decodeUnmarshal(line)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("Decode(%q) = %+v, %v; json.Unmarshal gives %+v, %v", line, got, gerr, want, werr)
		}
	})
}

// TestDecodeKeepsPartsOfTheLine: params and result are parts of the line,
// and appending to one does not write into the line.
func TestDecodeKeepsPartsOfTheLine(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"` + strings.Repeat("y", 1000) + `"},"z":1}`)
	m, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(line, []byte(`{"x"`))
	if &m.Result[0] != &line[at] {
		t.Fatal("result is a copy")
	}
	if cap(m.Result) != len(m.Result) {
		t.Fatalf("result has capacity %d beyond its %d bytes", cap(m.Result), len(m.Result))
	}
	before := string(line)
	_ = append(m.Result, "!!!!"...)
	if string(line) != before {
		t.Fatal("append wrote into the line")
	}
	allocs := testing.AllocsPerRun(10, func() { _, _ = Decode(line) })
	if allocs > 6 {
		t.Errorf("%v allocations decoding a response", allocs)
	}
}
