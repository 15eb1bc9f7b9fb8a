package transport

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// The modern era (protocol 2026-07-28) over Streamable HTTP needs no
// configuration: a request whose params._meta names a protocol version is
// modern, and its POST carries the headers the era requires. Modern
// sessions never send initialize, so they never get a session id, a GET
// stream or a DELETE; a dropped response stream is not resumed.

// metaProtocolVersion is the _meta key of a modern request's version.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// modernVersion returns the protocol version in a request's _meta, or ""
// for a legacy message.
func modernVersion(msg jsonrpc.Message) string {
	if msg.Kind != jsonrpc.KindRequest || !strings.Contains(string(msg.Params), metaProtocolVersion) {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var v string
	if json.Unmarshal(msg.Params, &p) != nil || json.Unmarshal(p.Meta[metaProtocolVersion], &v) != nil {
		return ""
	}
	return v
}

// setModernHeaders adds, for a modern request, MCP-Protocol-Version (the
// version of its _meta), Mcp-Method and, for tools/call, prompts/get and
// resources/read, Mcp-Name. It returns shown with them added, and whether
// the request is modern.
func setModernHeaders(req *http.Request, msg jsonrpc.Message, shown []string) ([]string, bool) {
	v := modernVersion(msg)
	if v == "" {
		return shown, false
	}
	set := func(name, value string) {
		value = headerValue(value)
		req.Header.Set(name, value)
		shown = append(shown, "> "+name+": "+value)
	}
	set("MCP-Protocol-Version", v)
	set("Mcp-Method", msg.Method)
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	switch msg.Method {
	case "tools/call", "prompts/get":
		set("Mcp-Name", p.Name)
	case "resources/read":
		set("Mcp-Name", p.URI)
	}
	return shown, true
}

// headerValue makes s safe as a header value: text with characters outside
// printable ASCII, surrounding blanks, or the look of an encoded value is
// sent base64-encoded as =?base64?…?=.
func headerValue(s string) string {
	const pre, post = "=?base64?", "?="
	plain := !strings.HasPrefix(s, " ") && !strings.HasPrefix(s, "\t") && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\t") &&
		!(strings.HasPrefix(s, pre) && strings.HasSuffix(s, post))
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return pre + base64.StdEncoding.EncodeToString([]byte(s)) + post
}
