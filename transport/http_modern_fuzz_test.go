package transport

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// FuzzModernHeaders: whatever the method, the tool, prompt or resource
// name and the protocol version of a modern request, each header it adds
// is printable ASCII with no blank at either end (no CR, LF or NUL to
// inject a header, nothing net/http would trim or refuse), and reads back
// to exactly the text it carries: plain, or base64 in =?base64?…?=.
func FuzzModernHeaders(f *testing.F) {
	f.Add("tools/call", "greet", "2026-07-28")
	f.Add("prompts/get", "héllo wörld", "2026-07-28")
	f.Add("resources/read", "file:///a b\r\nX-Injected: 1", "2026-07-28")
	f.Add("tools/call\r\nHost: evil", "\x00", "2026-07-28\n")
	f.Add("tools/list", " padded ", "\t")
	f.Add("tools/call", "=?base64?abc?=", "=?base64?Zm9v?=")
	f.Add("ping", "", "")
	f.Add("tools/call", "\xff\xfe", "v\x7f")
	f.Fuzz(func(t *testing.T, method, name, version string) {
		for s, want := range map[string]string{method: method, name: name, version: version} {
			if got := unheader(t, headerValue(s)); got != want {
				t.Fatalf("headerValue(%q) reads back as %q", s, got)
			}
		}
		params, _ := json.Marshal(map[string]any{"name": name, "uri": name, "_meta": map[string]string{metaProtocolVersion: version}})
		var p struct {
			Name string            `json:"name"`
			Meta map[string]string `json:"_meta"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
		shown, modern := setModernHeaders(req, jsonrpc.Message{Kind: jsonrpc.KindRequest, ID: jsonrpc.Int(1), Method: method, Params: params}, nil)
		v := p.Meta[metaProtocolVersion]
		if modern != (v != "") {
			t.Fatalf("version %q: modern %v", v, modern)
		}
		if !modern {
			if len(req.Header) > 0 || len(shown) > 0 {
				t.Fatalf("a legacy request got headers %v", req.Header)
			}
			return
		}
		want := map[string]string{"Mcp-Protocol-Version": v, "Mcp-Method": method}
		switch method {
		case "tools/call", "prompts/get", "resources/read":
			want["Mcp-Name"] = p.Name
		}
		if len(req.Header) != len(want) || len(shown) != len(want) {
			t.Fatalf("headers %q, shown %q, want %q", req.Header, shown, want)
		}
		for k, w := range want {
			if got := unheader(t, req.Header.Get(k)); got != w || len(req.Header.Values(k)) != 1 {
				t.Fatalf("%s: %q reads back as %q, want %q", k, req.Header.Values(k), got, w)
			}
		}
		for _, l := range shown {
			if strings.ContainsAny(l, "\r\n\x00") {
				t.Fatalf("shown line %q", l)
			}
		}
	})
}

// unheader checks that v is safe as a header value and returns the text it
// carries.
func unheader(t *testing.T, v string) string {
	t.Helper()
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			t.Fatalf("header value %q: byte %#x", v, v[i])
		}
	}
	if v != strings.Trim(v, " \t") {
		t.Fatalf("header value %q has blanks at an end", v)
	}
	if s, ok := strings.CutPrefix(v, "=?base64?"); ok && strings.HasSuffix(s, "?=") {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(s, "?="))
		if err != nil {
			t.Fatalf("header value %q: %v", v, err)
		}
		return string(b)
	}
	return v
}
