package capture

import (
	"errors"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestHTTPProblem: a 1.2 file carries the problem flag of a stream note; an
// older one has none, and the note's words (as sonde wrote them) give it.
func TestHTTPProblem(t *testing.T) {
	for _, tc := range []struct {
		version string
		rec     HTTPRec
		want    bool
	}{
		{"1.2", HTTPRec{Stream: "GET", Note: "the GET stream broke: EOF", Problem: true}, true},
		{"1.2", HTTPRec{Stream: "GET", Note: "the GET stream broke: EOF"}, false},
		{"1.1", HTTPRec{Stream: "GET", Note: "the GET stream broke: EOF"}, true},
		{"1.1", HTTPRec{Stream: "POST 2", Note: "the response stream ended before the response; resuming in 1s with Last-Event-ID 3 (attempt 1 of 5)"}, true},
		{"1.0", HTTPRec{Stream: "POST 2", Note: "stream ended inside an SSE event (9 bytes, no blank line after it): not dispatched"}, true},
		{"1.1", HTTPRec{Stream: "GET", Note: "the GET stream ended; reopening in 1s"}, false},
		{"1.1", HTTPRec{Method: "POST", Status: 200, Note: "broke"}, false},
	} {
		rec := tc.rec
		ev, ok, err := Header{Version: tc.version}.Event(Record{Type: TypeHTTP, HTTP: &rec})
		if err != nil || !ok {
			t.Fatalf("%s %q: ok %v err %v", tc.version, rec.Note, ok, err)
		}
		if ev.HTTP.Problem != tc.want {
			t.Errorf("%s %q: Problem %v, want %v", tc.version, rec.Note, ev.HTTP.Problem, tc.want)
		}
	}
}

// TestFrameFlags: the typed fields of a frame that a capture does not store
// come back from its verdict, detail and result as the client set them.
func TestFrameFlags(t *testing.T) {
	id := jsonrpc.Int(3)
	for _, tc := range []struct {
		verdict, detail, raw string
		inDetail, inputReq   bool
		after                string
	}{
		{"resolved", "resolved id 3 after 2ms", `{"jsonrpc":"2.0","id":3,"result":{}}`, true, false, "id 3 after 2ms"},
		{"error", "error for id 3 after 2ms", `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, true, false, "for id 3 after 2ms"},
		{"resolved", "input required for id 3 (1 input request); sonde answers and retries under a new id", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required"}}`, false, true, ""},
		{"resolved", "resolved id 3 after 2ms", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required"}}`, true, false, "id 3 after 2ms"},
		{"late", "response for id 3 arrived 1s after it ended (timeout); ignored", `{"jsonrpc":"2.0","id":3,"result":{}}`, false, false, ""},
	} {
		ev, ok, err := Header{Version: "1.2"}.Event(Record{Type: TypeFrame, Dir: "in", Kind: "response", ID: &id, Raw: tc.raw, Verdict: tc.verdict, Detail: tc.detail})
		if err != nil || !ok {
			t.Fatalf("%q: ok %v err %v", tc.detail, ok, err)
		}
		f := ev.Frame
		if f.VerdictInDetail != tc.inDetail || f.InputRequired != tc.inputReq {
			t.Errorf("%q: VerdictInDetail %v InputRequired %v, want %v %v", tc.detail, f.VerdictInDetail, f.InputRequired, tc.inDetail, tc.inputReq)
		}
		want := tc.after
		if want == "" {
			want = tc.detail
		}
		if got := f.DetailAfterVerdict(); got != want {
			t.Errorf("%q: DetailAfterVerdict %q, want %q", tc.detail, got, want)
		}
	}
}

// TestDecodeBroken: the rules a decode error names come back from a
// capture's decode_error.broken, or, from a capture written before it was
// recorded, from the decoder's own reason; a redacted reason with the
// list recorded still gives them.
func TestDecodeBroken(t *testing.T) {
	for _, tc := range []struct {
		d    DecodeErr
		want jsonrpc.Broken
	}{
		{DecodeErr{Class: "invalid", Reason: "response has both result and error", Broken: []string{"result-and-error"}}, jsonrpc.BrokenResultAndError},
		{DecodeErr{Class: "invalid", Reason: Redacted, Broken: []string{"null-id", "result-and-error"}}, jsonrpc.BrokenNullID | jsonrpc.BrokenResultAndError},
		{DecodeErr{Class: "invalid", Reason: `missing "jsonrpc":"2.0"; request id is null`}, jsonrpc.BrokenNullID},
		{DecodeErr{Class: "invalid", Reason: "response has no id"}, 0},
	} {
		var de *jsonrpc.DecodeError
		if err := tc.d.err(nil); !errors.As(err, &de) || de.Broken != tc.want {
			t.Errorf("%+v: %v, want Broken %b", tc.d, err, tc.want)
		}
	}
	raw := []byte(`{"jsonrpc":"2.0","id":null,"method":"x"}`)
	_, err := jsonrpc.Decode(raw)
	var de *jsonrpc.DecodeError
	if !errors.As(err, &de) || de.Broken != jsonrpc.BrokenNullID || jsonrpc.BrokenIn(de.Reason) != de.Broken {
		t.Errorf("Decode(%s) = %v", raw, err)
	}
}
