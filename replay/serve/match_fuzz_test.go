package serve

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzMatch: any capture builds a script or is refused with an error, and
// any request (method and params, JSON or not) is matched or refused with
// a JSON-RPC error naming what the capture holds; never a panic.
func FuzzMatch(f *testing.F) {
	capt, err := os.ReadFile(sample)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(capt, "tools/call", []byte(`{"name":"slow","arguments":{"ms":300}}`))
	f.Add(capt, "initialize", []byte(`{}`))
	f.Add(capt[:len(capt)/3], "tools/list", []byte(`null`))
	f.Add([]byte(`{"type":"header"}`), "x", []byte(`{`))
	f.Fuzz(func(t *testing.T, file []byte, method string, params []byte) {
		s, err := Build(bytes.NewReader(file))
		if err != nil {
			return
		}
		ex, _ := s.Match(method, json.RawMessage(params))
		if ex == nil {
			if e := s.unmatchedError(method, json.RawMessage(params)); e == nil || e.Message == "" {
				t.Fatalf("no match for %q and no error", method)
			}
		}
		_ = s.Available()
	})
}
