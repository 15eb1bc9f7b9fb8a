package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseURLElicitations(t *testing.T) {
	const one = `{"mode":"url","elicitationId":"e1","url":"https://example.com/auth?x=1","message":"Sign in"}`
	cases := []struct {
		name string
		data string
		want []ElicitParams // nil: an error is expected
		err  string         // part of the error's text
	}{
		{name: "one", data: `{"elicitations":[` + one + `]}`,
			want: []ElicitParams{{Mode: "url", ElicitationID: "e1", URL: "https://example.com/auth?x=1", Message: "Sign in"}}},
		{name: "two, extra fields kept out", data: `{"elicitations":[` + one + `,{"mode":"url","elicitationId":"e2","url":"http://127.0.0.1:8080/pay","message":"","_meta":{}}],"other":1}`,
			want: []ElicitParams{{Mode: "url", ElicitationID: "e1", URL: "https://example.com/auth?x=1", Message: "Sign in"}, {Mode: "url", ElicitationID: "e2", URL: "http://127.0.0.1:8080/pay"}}},
		{name: "missing data", data: ``, err: "no data"},
		{name: "null data", data: `null`, err: "no data"},
		{name: "data not an object", data: `"please open https://example.com"`, err: "data is not an object"},
		{name: "data array", data: `[` + one + `]`, err: "data is not an object"},
		{name: "no elicitations", data: `{"url":"https://example.com"}`, err: "no elicitations array"},
		{name: "elicitations not an array", data: `{"elicitations":{"mode":"url"}}`, err: "elicitations is not an array"},
		{name: "empty", data: `{"elicitations":[]}`, err: "elicitations is empty"},
		{name: "entry not an object", data: `{"elicitations":["https://example.com"]}`, err: "elicitation 1 is not an ElicitRequestURLParams object"},
		{name: "entry null", data: `{"elicitations":[null]}`, err: "elicitation 1 is not"},
		{name: "form mode", data: `{"elicitations":[` + one + `,{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}]}`, err: `elicitation 2 has mode "form", want "url"`},
		{name: "mode absent", data: `{"elicitations":[{"message":"Name?","requestedSchema":{"type":"object"}}]}`, err: "elicitation 1 has no mode (form mode)"},
		{name: "no id", data: `{"elicitations":[{"mode":"url","url":"https://example.com","message":"m"}]}`, err: "elicitation 1 has no elicitationId"},
		{name: "no url", data: `{"elicitations":[{"mode":"url","elicitationId":"e","message":"m"}]}`, err: "elicitation 1 has no url"},
		{name: "relative url", data: `{"elicitations":[{"mode":"url","elicitationId":"e","url":"/auth","message":"m"}]}`, err: `url "/auth" is not an absolute URL`},
		{name: "url without host", data: `{"elicitations":[{"mode":"url","elicitationId":"e","url":"mailto:a@b.c","message":"m"}]}`, err: "is not an absolute URL"},
		{name: "url with a control character", data: `{"elicitations":[{"mode":"url","elicitationId":"e","url":"https://a.example/\u001b[31m","message":"m"}]}`, err: "is not an absolute URL"},
		{name: "wrong field type", data: `{"elicitations":[{"mode":"url","elicitationId":7,"url":"https://example.com"}]}`, err: "elicitation 1 is not"},
		{name: "not JSON", data: `{"elicitations":`, err: "data does not decode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseURLElicitations(json.RawMessage(tc.data))
			if tc.want == nil {
				if err == nil || !errors.Is(err, ErrURLElicitationData) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one with %q (and elicitations %+v)", err, tc.err, got)
				}
				if got != nil {
					t.Fatalf("elicitations %+v with an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i].Mode != tc.want[i].Mode || got[i].ElicitationID != tc.want[i].ElicitationID || got[i].URL != tc.want[i].URL || got[i].Message != tc.want[i].Message {
					t.Fatalf("elicitation %d: got %+v, want %+v", i+1, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestParseURLElicitationsClipsLongValues(t *testing.T) {
	long := strings.Repeat("é", 200)
	_, err := ParseURLElicitations(json.RawMessage(`{"elicitations":[{"mode":"` + long + `","elicitationId":"e","url":"https://x.example"}]}`))
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "…") {
		t.Fatalf("%v", err)
	}
}
