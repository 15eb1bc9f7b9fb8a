package serve

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
)

func TestRewriteID(t *testing.T) {
	for _, tc := range []struct {
		name, raw, id, want string
		ok                  bool
	}{
		{"int to string", `{"jsonrpc":"2.0","id":3,"result":{"id":3}}`, `"a"`, `{"jsonrpc":"2.0","id":"a","result":{"id":3}}`, true},
		{"string to int", `{"jsonrpc":"2.0","id":"x","result":{}}`, `12`, `{"jsonrpc":"2.0","id":12,"result":{}}`, true},
		{"spaces and CR kept", "{ \"result\" : [1, 2] , \"id\" :  7 , \"jsonrpc\":\"2.0\"}\r", `"b"`, "{ \"result\" : [1, 2] , \"id\" :  \"b\" , \"jsonrpc\":\"2.0\"}\r", true},
		{"id last", `{"jsonrpc":"2.0","result":{"id":1},"id":1}`, `2`, `{"jsonrpc":"2.0","result":{"id":1},"id":2}`, true},
		{"escaped key is not id", `{"i\u0064":1}`, `2`, `{"i\u0064":2}`, true},
		{"no id", `{"jsonrpc":"2.0","result":{}}`, `2`, `{"jsonrpc":"2.0","result":{}}`, false},
		{"not an object", `[1]`, `2`, `[1]`, false},
		{"not JSON", `fixture noise`, `2`, `fixture noise`, false},
		{"repeated id", `{"id":1,"id":2,"result":{}}`, `3`, `{"id":3,"id":3,"result":{}}`, true},
		{"cut line", `{"jsonrpc":"2.0","id":3,"res`, `"z"`, `{"jsonrpc":"2.0","id":"z","res`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := RewriteID([]byte(tc.raw), []byte(tc.id))
			if string(got) != tc.want || ok != tc.ok {
				t.Errorf("RewriteID(%s, %s) = %s, %v; want %s, %v", tc.raw, tc.id, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRewriteToken(t *testing.T) {
	raw := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1,"total":2}}`
	got, ok := RewriteToken([]byte(raw), []byte(`"tok"`))
	want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2}}`
	if !ok || string(got) != want {
		t.Errorf("got %s %v", got, ok)
	}
	if got, ok := RewriteToken([]byte(`{"params":{}}`), []byte(`1`)); ok || string(got) != `{"params":{}}` {
		t.Errorf("no token: %s %v", got, ok)
	}
}

// FuzzRewriteID: for any line, RewriteID never panics and changes nothing
// when it fails; when it succeeds on a JSON object, the object's "id" is
// the new id and every other member is unchanged.
func FuzzRewriteID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`), "x")
	f.Add([]byte(`{"id" : "a\"b", "error":{"code":1,"message":"m"},"jsonrpc":"2.0"}`), "7")
	f.Add([]byte(`{"id":{"id":1}}`), "")
	f.Fuzz(func(t *testing.T, raw []byte, s string) {
		id, _ := json.Marshal(s)
		got, ok := RewriteID(raw, id)
		if !ok {
			if !bytes.Equal(got, raw) {
				t.Fatalf("failed rewrite changed the line")
			}
			return
		}
		var before, after map[string]json.RawMessage
		if json.Unmarshal(raw, &before) != nil {
			return // a cut or invalid line: only the bytes of the id changed
		}
		if err := json.Unmarshal(got, &after); err != nil {
			t.Fatalf("the rewritten line is not JSON: %v\n%s\n%s", err, raw, got)
		}
		if !bytes.Equal(after["id"], id) {
			t.Fatalf("id %s, want %s: %s", after["id"], id, got)
		}
		delete(before, "id")
		delete(after, "id")
		b1, _ := json.Marshal(before)
		b2, _ := json.Marshal(after)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("other members changed: %s → %s", b1, b2)
		}
	})
}

// TestScaledDelayStaysInRange: whatever the speed, a recorded delay maps to
// a wait within [0, capture.MaxSpan], never an overflowed negative one.
func TestScaledDelayStaysInRange(t *testing.T) {
	for _, c := range []struct {
		d     time.Duration
		speed float64
		want  time.Duration
	}{
		{time.Second, 2, 500 * time.Millisecond},
		{capture.MaxSpan, 1e-9, capture.MaxSpan},
		{time.Hour, math.SmallestNonzeroFloat64, capture.MaxSpan},
		{0, 1, 0},
	} {
		if got := scaled(c.d, c.speed); got != c.want {
			t.Errorf("scaled(%v, %g) = %v, want %v", c.d, c.speed, got, c.want)
		}
	}
}
