package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// checkRecordJSON fails when recordJSON and encoding/json (HTML escaping
// off, as the recorder's encoder) write rec differently.
func checkRecordJSON(t *testing.T, rec *Record) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	wantErr := enc.Encode(rec)
	got, gotErr := newRecordJSON().append(nil, rec, nil)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%+v: error %v, encoding/json %v", rec, gotErr, wantErr)
	}
	if gotErr == nil && !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("\n got %s\nwant %s", got, want.Bytes())
	}
	// The recorder writes a frame's Raw from its bytes (encoder.recordBytes).
	raw := &bigRaw{b: []byte(rec.Raw), b64: rec.B64}
	if rec.B64 {
		b, err := base64.StdEncoding.DecodeString(rec.Raw)
		if err != nil || base64.StdEncoding.EncodeToString(b) != rec.Raw {
			return
		}
		raw.b = b
	}
	bare := *rec
	bare.Raw = ""
	got, gotErr = newRecordJSON().append(nil, &bare, raw)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("from bytes, %+v: error %v, encoding/json %v", rec, gotErr, wantErr)
	}
	if gotErr == nil && !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("from bytes:\n got %s\nwant %s", got, want.Bytes())
	}
}

// oddStrings need escaping, or are not valid UTF-8.
var oddStrings = []string{
	"", "plain", `"quoted" \ back`, "<html> & </html>", "\x00\x01\b\f\n\r\t\x1f\x7f",
	"line\u2028para\u2029", "bad \xff utf-8 \xe2\x80", "é ✓ 😀", "\xed\xa0\x80 surrogate",
}

func TestRecordJSONMatchesEncodingJSON(t *testing.T) {
	for _, line := range decodeCorpus(t) {
		var rec Record
		if err := decodeRecord(line, &rec); err != nil {
			t.Fatal(err)
		}
		checkRecordJSON(t, &rec)
	}
	d, m := int64(-5), int64(1<<62)
	for _, s := range oddStrings {
		id, sid := jsonrpc.Int(-1), jsonrpc.String(s)
		checkRecordJSON(t, &Record{Type: s, Seq: 1<<64 - 1, T: -1 << 63, Dir: s, ID: &sid, Method: s, Kind: s, Raw: s, B64: true, Size: -3,
			Verdict: s, Detail: s, Decode: &DecodeErr{Class: s, Reason: s, Broken: []string{s}}, Redacted: true, Stream: s, EventID: s,
			Tool: s, State: s, Deadline: &d, Timeout: 9, MaxEnd: &m, Latency: 1, Progress: &ProgressRec{Progress: 1e21, Message: s},
			Err: &ErrorRec{Code: s, Message: s, Snapshot: json.RawMessage(` {"a" : "<"} `)}, RetryOf: &id, Params: s, Data: s,
			What: s, Pid: 7, Argv: []string{s, s}, Signal: s, Exit: &ExitRec{Stderr: s, Left: []LeftRec{{Name: s}}}, Note: s,
			HTTP: &HTTPRec{URL: s, Header: []string{s}}, ProtocolVersion: s, ServerName: s, ServerVersion: s,
			Count: 1, AfterSeq: 2, Events: 3, Missed: 4})
		checkRecordJSON(t, &Record{Type: TypeNote, Note: s, Argv: []string{}})
		fid := jsonrpc.String(s)
		checkRecordJSON(t, &Record{Type: TypeNote, Note: s, Fault: &FaultRec{Rule: 2, Action: client.FaultAction(s), Dir: "in", Kind: s, ID: &fid, Method: s}})
		checkRecordJSON(t, &Record{Type: TypeNote, Note: s, Hold: &HoldRec{Handle: s, Breakpoint: 1, Action: client.HoldAction(s), By: client.HoldBy(s), Dir: s, Kind: s, ID: &fid, Method: s, Original: s, Frame: s, B64: true, HeldNS: -1, Order: 3}})
	}
	// A snapshot that is not JSON fails both.
	checkRecordJSON(t, &Record{Type: TypeRequest, Err: &ErrorRec{Snapshot: json.RawMessage(`{`)}})
}

func FuzzRecordJSON(f *testing.F) {
	for _, line := range decodeCorpus(f) {
		f.Add(line, "")
	}
	for _, s := range oddStrings {
		f.Add([]byte(`{"type":"frame","t":1}`), s)
	}
	f.Fuzz(func(t *testing.T, line []byte, s string) {
		var rec Record
		if decodeRecord(line, &rec) != nil {
			return
		}
		checkRecordJSON(t, &rec)
		id := jsonrpc.String(s)
		rec.Detail, rec.Note, rec.Raw, rec.ID, rec.Argv = s, s, s+rec.Raw, &id, append(rec.Argv, s)
		checkRecordJSON(t, &rec)
		rec.Hold = &HoldRec{Handle: s, Action: client.HoldAction(s), Dir: s, ID: &id, Original: s, Frame: s + s}
		checkRecordJSON(t, &rec)
	})
}
