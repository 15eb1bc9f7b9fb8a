package har_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/report/har"
)

// FuzzHAR feeds arbitrary capture files to the HAR writer: it never
// panics, and writes valid JSON (or refuses a stdio session).
func FuzzHAR(f *testing.F) {
	f.Add([]byte(`{"type":"header","format":"sonde-capture","version":"1.4","start":"2026-01-01T00:00:00Z","transport":"http","url":"http://127.0.0.1:1/mcp"}
{"type":"frame","seq":1,"t":1,"dir":"out","id":1,"method":"initialize","kind":"request","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}","verdict":"sent"}
{"type":"http","seq":2,"t":3,"http":{"method":"POST","url":"http://127.0.0.1:1/mcp?a=1","status":200,"header":["< Content-Type: text/event-stream","> Authorization: Bearer x"],"duration":2,"stream":"POST 1","id":1}}
{"type":"frame","seq":3,"t":4,"dir":"in","id":1,"kind":"response","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}","verdict":"resolved","stream":"POST 1","event_id":"e1"}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := capture.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		h := rd.Header()
		b := har.New(h, har.Options{Creator: "sonde", Version: "fuzz"})
		for rec, err := range rd.All() {
			if err != nil {
				break
			}
			if ev, ok, err := h.Event(rec); err == nil && ok {
				b.Add(ev)
			}
		}
		var out bytes.Buffer
		err = b.Write(&out)
		if errors.Is(err, har.ErrStdio) {
			return
		}
		var doc har.Document
		if err != nil || json.Unmarshal(out.Bytes(), &doc) != nil || doc.Log.Version != "1.2" {
			t.Fatalf("%v: %s", err, out.Bytes())
		}
		for _, e := range doc.Log.Entries {
			for _, hd := range e.Request.Headers {
				if hd.Name == "Authorization" && hd.Value != capture.Redacted {
					t.Fatalf("Authorization not redacted: %q", hd.Value)
				}
			}
		}
	})
}
