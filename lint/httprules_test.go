package lint

import (
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// withHeaders returns the events of a sample with the header lines of the
// HTTP exchange at seq replaced (and its status, when not 0).
func withHeaders(t *testing.T, sample string, seq uint64, status int, lines ...string) []client.Event {
	t.Helper()
	evs := capturetest.Events(t, "../testdata/captures/lint/"+sample)
	for i, ev := range evs {
		if ev.Seq == seq {
			if ev.HTTP == nil {
				t.Fatalf("%s seq %d is not an exchange", sample, seq)
			}
			h := *ev.HTTP
			h.Header = lines
			if status != 0 {
				h.Status = status
			}
			evs[i].HTTP = &h
			return evs
		}
	}
	t.Fatalf("%s has no seq %d", sample, seq)
	return nil
}

// TestHTTPRules: the tools/call exchange of accept-header.jsonl (seq 6,
// a tap's: every request header) and header-mismatch.jsonl (seq 6, sonde's
// client: its Accept not shown) with their headers varied.
func TestHTTPRules(t *testing.T) {
	const ct, okAccept, ver, meth = "< Content-Type: application/json", "> Accept: application/json, text/event-stream", "> MCP-Protocol-Version: 2026-07-28", "> Mcp-Method: tools/call"
	cases := []struct {
		name, sample string
		status       int
		lines        []string
		rule, want   string
	}{
		{"tap-clean", "accept-header.jsonl", 0, []string{okAccept, "> Content-Type: application/json", ver, meth, ct}, "", ""},
		{"accept-case", "accept-header.jsonl", 0, []string{"> Accept: Text/Event-Stream, Application/JSON", "> Content-Type: application/json", ver, meth, ct}, "", ""},
		{"accept-json-only", "accept-header.jsonl", 0, []string{"> Accept: application/json", "> Content-Type: application/json", ver, meth, ct}, RuleAcceptHeader, "it does not list text/event-stream"},
		{"accept-any", "accept-header.jsonl", 0, []string{"> Accept: */*", "> Content-Type: application/json", ver, meth, ct}, RuleAcceptHeader, "application/json or text/event-stream"},
		{"accept-absent", "accept-header.jsonl", 0, []string{"> Content-Type: application/json", ver, meth, ct}, RuleAcceptHeader, "POST without an Accept header"},
		{"client-no-accept-shown", "header-mismatch.jsonl", 0, []string{ver, meth, ct}, "", ""},
		{"no-content-type", "header-mismatch.jsonl", 0, []string{ver, meth}, RuleContentType, "HTTP 200 response with no Content-Type header"},
		{"accepted-202", "header-mismatch.jsonl", 202, []string{ver, meth}, "", ""},
		{"version-mismatch", "header-mismatch.jsonl", 0, []string{"> MCP-Protocol-Version: 2025-11-25", meth, ct}, RuleHeaderMismatch, `header MCP-Protocol-Version: 2025-11-25, but the body's _meta says "2026-07-28"`},
		{"method-mismatch", "header-mismatch.jsonl", 0, []string{ver, "> Mcp-Method: tools/list", ct}, RuleHeaderMismatch, `header Mcp-Method: tools/list, but the body's method is "tools/call"`},
		{"name-matches", "header-mismatch.jsonl", 0, []string{ver, meth, "> Mcp-Name: echo", ct}, "", ""},
		{"name-base64", "header-mismatch.jsonl", 0, []string{ver, meth, "> Mcp-Name: =?base64?ZWNobw==?=", ct}, "", ""},
		{"name-mismatch", "header-mismatch.jsonl", 0, []string{ver, meth, "> Mcp-Name: delete", ct}, RuleHeaderMismatch, `header Mcp-Name: delete, but the body names "echo"`},
		{"method-case-differs", "header-mismatch.jsonl", 0, []string{"> mcp-protocol-version: 2026-07-28", "> MCP-METHOD: tools/call", ct}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := lintAll(withHeaders(t, tc.sample, 6, tc.status, tc.lines...))
			wantOne(t, fs, tc.rule, 6, tc.want)
		})
	}
}

// TestExtensionRules: the server/discover result (seq 3) and the
// tools/call request (seq 4) of request-state.jsonl with extensions
// declared well, badly, or used without being advertised.
func TestExtensionRules(t *testing.T) {
	discover := func(exts string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":` + exts + `},"ttlMs":0,"cacheScope":"c"}}`
	}
	call := func(method, exts string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":{"name":"delete","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":` + exts + `}}}}`
	}
	echoed := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete","arguments":{},"requestState":"s-1",` + modernMeta + `}}`
	cases := []struct {
		name   string
		frames map[uint64]string
		seq    uint64
		rule   string
		want   string
	}{
		{"well-formed", map[uint64]string{3: discover(`{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}`), 4: call("tools/call", `{"io.modelcontextprotocol/tasks":{}}`)}, 0, "", ""},
		{"server-not-object", map[uint64]string{3: discover(`[]`)}, 3, RuleMalformedExt, "server/discover result: capabilities.extensions is an array, not an object of extension settings"},
		{"server-bad-id", map[uint64]string{3: discover(`{"tasks":{}}`)}, 3, RuleMalformedExt, `"tasks" is not an extension identifier`},
		{"server-settings-true", map[uint64]string{3: discover(`{"io.modelcontextprotocol/ui":true}`)}, 3, RuleMalformedExt, `"io.modelcontextprotocol/ui" is a boolean, not an object of settings`},
		{"client-bad", map[uint64]string{4: call("tools/call", `{"/ui":{}}`)}, 4, RuleMalformedExt, `tools/call: _meta["io.modelcontextprotocol/clientCapabilities"].extensions "/ui" is not an extension identifier`},
		{"tasks-unadvertised", map[uint64]string{4: call("tasks/get", `{}`)}, 4, RuleUnnegotiatedExt, "tasks/get: the server's server/discover result did not advertise the io.modelcontextprotocol/tasks extension"},
		{"tasks-advertised", map[uint64]string{3: discover(`{"io.modelcontextprotocol/tasks":{}}`), 4: call("tasks/get", `{}`)}, 0, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			frames := tc.frames
			frames[6] = echoed
			if frames[4] != "" && frames[4][len(frames[4])-1] == '}' && tc.name[:5] == "tasks" {
				frames[5] = `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","task":{"taskId":"t","status":"working"}}}`
				frames[6] = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete","arguments":{},` + modernMeta + `}}`
			}
			wantOne(t, lintAll(withFrames(t, "request-state.jsonl", frames)), tc.rule, tc.seq, tc.want)
		})
	}
}

// TestDPoPDowngrade: the two POSTs of header-mismatch.jsonl (seq 4, the
// server/discover; seq 6, the tools/call) with the headers and notes of
// DPoP: a Bearer token after a DPoP-only challenge or after a DPoP-scheme
// request is found once; a challenge that offers Bearer too is not; sonde's
// note of a token that came back Bearer is found where it stands.
func TestDPoPDowngrade(t *testing.T) {
	const ct, ver = "< Content-Type: application/json", "> MCP-Protocol-Version: 2026-07-28"
	dpopOnly, both := `< WWW-Authenticate: DPoP error="use_dpop_nonce", resource_metadata="http://x/prm"`, `< WWW-Authenticate: Bearer realm="x", DPoP algs="ES256"`
	bearer, bound := "> Authorization: Bearer «redacted»", "> Authorization: DPoP «redacted»"
	cases := []struct {
		name         string
		first, after []string
		note         string
		seq          uint64
		want         string
	}{
		{"dpop-only-then-bearer", []string{ver, dpopOnly, ct}, []string{ver, "> Mcp-Method: tools/call", bearer, ct}, "", 6, "the server's WWW-Authenticate challenge asks for DPoP only"},
		{"bound-then-bearer", []string{ver, bound, "> DPoP: «proof»", ct}, []string{ver, "> Mcp-Method: tools/call", bearer, ct}, "", 6, "this session sent its token with the DPoP scheme before"},
		{"bearer-offered", []string{ver, both, ct}, []string{ver, "> Mcp-Method: tools/call", bearer, ct}, "", 0, ""},
		{"dpop-throughout", []string{ver, dpopOnly, ct}, []string{ver, "> Mcp-Method: tools/call", bound, ct}, "", 0, ""},
		{"token-came-back-bearer", []string{ver, ct}, []string{ver, "> Mcp-Method: tools/call", ct}, "token: ok; DPoP downgrade: the token came back with token_type Bearer", 4, "the token came back with token_type Bearer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := withHeaders(t, "header-mismatch.jsonl", 4, 0, tc.first...)
			for i, ev := range evs {
				if ev.Seq == 6 {
					h := *ev.HTTP
					h.Header = tc.after
					evs[i].HTTP = &h
				}
				if ev.Seq == 4 {
					evs[i].HTTP.Note = tc.note
				}
			}
			rule := RuleDPoPDowngrade
			if tc.seq == 0 {
				rule = ""
			}
			wantOne(t, lintAll(evs), rule, tc.seq, tc.want)
		})
	}
}
