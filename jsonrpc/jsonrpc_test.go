package jsonrpc

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestIDKeepsType(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want ID
		out  string
	}{
		{"int", `3`, Int(3), `3`},
		{"string", `"3"`, String("3"), `"3"`},
		{"negative", `-7`, Int(-7), `-7`},
		{"empty string", `""`, String(""), `""`},
		{"null", `null`, ID{}, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var id ID
			if err := json.Unmarshal([]byte(tt.in), &id); err != nil {
				t.Fatal(err)
			}
			if id != tt.want {
				t.Fatalf("got %#v, want %#v", id, tt.want)
			}
			b, err := json.Marshal(id)
			if err != nil || string(b) != tt.out {
				t.Fatalf("marshal: %s %v, want %s", b, err, tt.out)
			}
		})
	}
	if Int(3) == String("3") {
		t.Fatal("Int(3) and String(\"3\") must differ")
	}
	m := map[ID]int{Int(3): 1, String("3"): 2}
	if len(m) != 2 {
		t.Fatal("ids of different types collide as map keys")
	}
}

func TestIDRejects(t *testing.T) {
	for _, in := range []string{`1.5`, `1e3`, `true`, `{}`, `[1]`, `99999999999999999999`} {
		var id ID
		if err := json.Unmarshal([]byte(in), &id); !errors.Is(err, ErrBadID) {
			t.Errorf("%s: got %v, want ErrBadID", in, err)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		kind   Kind
		class  Class // 0 means valid
		id     ID
		method string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, KindRequest, 0, Int(1), "ping"},
		{"request string id", `{"jsonrpc":"2.0","id":"a","method":"ping"}`, KindRequest, 0, String("a"), "ping"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, KindNotification, 0, ID{}, "notifications/progress"},
		{"result", `{"jsonrpc":"2.0","id":3,"result":{}}`, KindResponse, 0, Int(3), ""},
		{"result key order", `{"result":{"x":1},"jsonrpc":"2.0","id":3}`, KindResponse, 0, Int(3), ""},
		{"null result", `{"jsonrpc":"2.0","id":3,"result":null}`, KindResponse, 0, Int(3), ""},
		{"error", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`, KindResponse, 0, Int(3), ""},
		{"error without id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, KindResponse, 0, ID{}, ""},
		{"crlf", "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\r", KindResponse, 0, Int(3), ""},
		{"noise", `Server started on stdio`, KindInvalid, ClassNotJSON, ID{}, ""},
		{"empty", ``, KindInvalid, ClassNotJSON, ID{}, ""},
		{"truncated", `{"jsonrpc":"2.0","id":3,"res`, KindInvalid, ClassNotJSON, ID{}, ""},
		{"array", `[1,2,3]`, KindInvalid, ClassNotObject, ID{}, ""},
		{"string", `"hello"`, KindInvalid, ClassNotObject, ID{}, ""},
		{"number", `42`, KindInvalid, ClassNotObject, ID{}, ""},
		{"both", `{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1,"message":"x"}}`, KindResponse, ClassInvalid, Int(4), ""},
		{"neither", `{"jsonrpc":"2.0","id":4}`, KindResponse, ClassInvalid, Int(4), ""},
		{"no version", `{"id":4,"result":{}}`, KindResponse, ClassInvalid, Int(4), ""},
		{"wrong version", `{"jsonrpc":"1.0","id":4,"result":{}}`, KindResponse, ClassInvalid, Int(4), ""},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"result":{}}`, KindInvalid, ClassInvalid, ID{}, ""},
		{"bad error object", `{"jsonrpc":"2.0","id":4,"error":"boom"}`, KindResponse, ClassInvalid, Int(4), ""},
		{"method not string", `{"jsonrpc":"2.0","id":4,"method":5}`, KindInvalid, ClassInvalid, Int(4), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.line))
			var de *DecodeError
			if tt.class == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
			} else if !errors.As(err, &de) || de.Class != tt.class || !errors.Is(err, ErrDecode) {
				t.Fatalf("got error %v, want class %s", err, tt.class)
			}
			if m.Kind != tt.kind || m.ID != tt.id || m.Method != tt.method {
				t.Fatalf("got kind=%s id=%s method=%q, want kind=%s id=%s method=%q", m.Kind, m.ID, m.Method, tt.kind, tt.id, tt.method)
			}
			if de != nil && de.Reason == "" {
				t.Fatal("decode error without a reason")
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	b, err := EncodeError(String("srv-1"), &Error{Code: CodeMethodNotFound, Message: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil || m.Kind != KindResponse || m.ID != String("srv-1") || m.Error == nil || m.Error.Code != CodeMethodNotFound {
		t.Fatalf("round trip: %+v %v (%s)", m, err, b)
	}
	b, _ = EncodeResult(Int(9), nil)
	if string(b) != `{"jsonrpc":"2.0","id":9,"result":{}}` {
		t.Fatalf("empty result encodes as %s", b)
	}
}

// FuzzDecode checks that Decode never panics, and that whatever it accepts
// re-encodes to something it accepts again with the same id and kind.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":"1","result":{}}`,
		`{"jsonrpc":"2.0","method":"x"}`, `[]`, `noise`, `{"id":1e400}`, `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":""}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Decode(line)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Reason == "" {
				t.Fatalf("error is not a DecodeError with a reason: %v", err)
			}
			return
		}
		var b []byte
		switch m.Kind {
		case KindRequest:
			b, err = EncodeRequest(m.ID, m.Method, m.Params)
		case KindNotification:
			b, err = EncodeNotification(m.Method, m.Params)
		case KindResponse:
			if m.Error != nil {
				b, err = EncodeError(m.ID, m.Error)
			} else {
				b, err = EncodeResult(m.ID, m.Result)
			}
		default:
			t.Fatalf("valid message of kind %s", m.Kind)
		}
		if err != nil {
			return // e.g. params that are valid JSON but not re-encodable as raw (cannot happen for valid input)
		}
		m2, err := Decode(b)
		if err != nil || m2.Kind != m.Kind || m2.ID != m.ID || m2.Method != m.Method {
			t.Fatalf("re-decode of %s: %+v %v", b, m2, err)
		}
	})
}
