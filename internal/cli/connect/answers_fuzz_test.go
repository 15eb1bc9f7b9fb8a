package connect

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/mcp"
)

// replySeeds are --sampling-reply and --elicit-reply files.
var replySeeds = []string{
	"hello\n", "  multi\r\nline\r\n", "", " \n\t", `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`,
	`{"role":"assistant","content":null,"model":"m"}`, `{"role":"","content":{},"model":"m"}`, `{"role":"user","content":[],"model":null}`,
	`{"role":"assistant"} x`, `{`, "accept", " DECLINE\n", "cancel", `{"action":"accept","content":{"name":"x"}}`,
	`{"action":"accept","content":5}`, `{"action":"accept","content":null}`, `{"action":"maybe"}`, `"accept"`, `[]`, "\xff\xfe",
}

// FuzzSamplingReply: a --sampling-reply file is either refused with an
// error, or sent as a CreateMessageResult: a JSON object with a role, a
// model and content that is an object or a list (a text file becomes the
// assistant's text, its last line ending dropped).
func FuzzSamplingReply(f *testing.F) {
	for _, s := range replySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := samplingResult(b)
		if err != nil {
			if res != nil {
				t.Fatalf("samplingResult(%q): %q and %v", b, res, err)
			}
			return
		}
		var r struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Model   *string         `json:"model"`
		}
		if !json.Valid(res) || json.Unmarshal(res, &r) != nil {
			t.Fatalf("samplingResult(%q) = %q: not a JSON object", b, res)
		}
		if r.Role == "" || r.Model == nil || len(r.Content) == 0 || (r.Content[0] != '{' && r.Content[0] != '[') {
			t.Fatalf("samplingResult(%q) = %q: not a CreateMessageResult", b, res)
		}
		if tb := bytes.TrimSpace(b); len(tb) > 0 && tb[0] != '{' {
			var m mcp.CreateMessageResult
			_ = json.Unmarshal(res, &m)
			var text strings.Builder
			for _, c := range string(bytes.TrimRight(b, "\r\n")) {
				text.WriteRune(c) // an invalid byte is U+FFFD, as JSON writes it
			}
			if m.Role != "assistant" || m.Content.Type != "text" || m.Content.Text != text.String() {
				t.Fatalf("samplingResult(%q) = %q: not the text as the assistant's", b, res)
			}
		}
	})
}

// FuzzElicitReply: an --elicit-reply file is either refused with an
// error, or sent as an ElicitResult: a JSON object whose action is accept,
// decline or cancel and whose content, if any, is an object.
func FuzzElicitReply(f *testing.F) {
	for _, s := range replySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := elicitResult(b)
		if err != nil {
			if res != nil {
				t.Fatalf("elicitResult(%q): %q and %v", b, res, err)
			}
			return
		}
		var r mcp.ElicitResult
		if !json.Valid(res) || json.Unmarshal(res, &r) != nil {
			t.Fatalf("elicitResult(%q) = %q: not a JSON object", b, res)
		}
		switch r.Action {
		case mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel:
		default:
			t.Fatalf("elicitResult(%q) = %q: action %q", b, res, r.Action)
		}
		if len(r.Content) > 0 && r.Content[0] != '{' {
			t.Fatalf("elicitResult(%q) = %q: content not an object", b, res)
		}
	})
}
