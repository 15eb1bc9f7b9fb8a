package mcp

import (
	"encoding/json"
	"errors"
	"net/url"
	"testing"
)

// FuzzParseURLElicitations: any data of a -32042 error either parses into
// elicitations that each have an id and an absolute URL, or is an error
// wrapping ErrURLElicitationData; never a panic.
func FuzzParseURLElicitations(f *testing.F) {
	for _, s := range []string{
		`{"elicitations":[{"mode":"url","elicitationId":"e1","url":"https://a.example/x","message":"m"}]}`,
		`{"elicitations":[]}`, `null`, `[]`, `{"elicitations":[{"mode":"url"}]}`, `{"elicitations":"x"}`,
		`{"elicitations":[{"mode":"url","elicitationId":"e","url":"javascript:alert(1)"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseURLElicitations(json.RawMessage(data))
		if err != nil {
			if !errors.Is(err, ErrURLElicitationData) {
				t.Fatalf("error %v does not wrap ErrURLElicitationData", err)
			}
			return
		}
		if len(got) == 0 {
			t.Fatal("no error and no elicitations")
		}
		for _, e := range got {
			u, perr := url.Parse(e.URL)
			if e.ElicitationID == "" || perr != nil || u.Scheme == "" || u.Host == "" {
				t.Fatalf("accepted %+v", e)
			}
		}
	})
}
