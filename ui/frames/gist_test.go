package frames

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// TestGist: the preview column reads what a person wants of a frame, not
// the start of its JSON.
func TestGist(t *testing.T) {
	cases := []struct{ name, raw, want string }{
		{"call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"value": "hi"}}}`, `{"value":"hi"}`},
		{"read", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file:///a"}}`, `uri=file:///a`},
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"sonde","version":"1.2"}}}`, `sonde 1.2 · 2025-06-18`},
		{"text", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello\nworld"}]}}`, `hello world`},
		{"isError", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"no such file"}],"isError":true}}`, `isError no such file`},
		{"image", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","data":"x"},{"type":"image","data":"y"}]}}`, `2 image items`},
		{"error", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}`, `error -32601: Method not found`},
		{"modern-error", `{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"unsupported"}}`, `error -32022 UnsupportedProtocolVersion: unsupported`},
		{"tools", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"},{"name":"add"}]}}`, `2 tools: echo, add`},
		{"empty", `{"jsonrpc":"2.0","id":5,"result":{}}`, `{}`},
		{"progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,"_meta":{}}}`, `progress=1 progressToken=3`},
		{"not json", "Starting\x1b[31m server", `Starting\x1b[31m server`},
		{"control in text", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a\u001b]52;c;x\u0007b"}]}}`, `a\x1b]52;c;x\x07b`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := gist(rawFrame(c.raw)); got != c.want {
				t.Errorf("gist(%s) = %q, want %q", c.raw, got, c.want)
			}
		})
	}
}

// TestGistBounded: a huge payload gives a gist of bounded length.
func TestGistBounded(t *testing.T) {
	raw := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x ", 1<<16) + `"}]}}`
	if g := gist(rawFrame(raw)); len(g) > gistLimit+8 {
		t.Errorf("gist of %d bytes", len(g))
	}
}

// TestWideRowsCutNothing: at 200 columns, no method or verdict is cut
// while the preview has room (issue #33: no column truncates while 20
// columns sit free).
func TestWideRowsCutNothing(t *testing.T) {
	m := newModel(t, 198, 24)
	c := m.layout(0, m.count())
	for i := range m.count() {
		e := m.ring.at(m.absAt(i))
		if w := len(e.f.Msg.Method); w > c.method {
			t.Errorf("row %d: method %q cut to %d", i, e.f.Msg.Method, c.method)
		}
		if w := len(e.f.Verdict) + 1 + len(e.f.DetailAfterVerdict()); w > c.status && e.f.DetailAfterVerdict() != "" {
			t.Errorf("row %d: verdict %q cut to %d", i, e.f.DetailAfterVerdict(), c.status)
		}
	}
	if c.preview < previewRoom {
		t.Errorf("preview %d wide", c.preview)
	}
}

func rawFrame(raw string) *client.FrameInfo {
	f := &client.FrameInfo{}
	f.Raw = []byte(raw)
	return f
}

// TestNameOfOwnRequest: sonde's own request frames carry their bytes, not
// decoded params; the method column still names the tool.
func TestNameOfOwnRequest(t *testing.T) {
	f := rawFrame(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	f.Msg.Method = "tools/call"
	if got := nameOf(f); got != "echo" {
		t.Errorf("nameOf = %q, want echo", got)
	}
}

// FuzzGist: whatever a server writes, the gist is one line of bounded
// length with no control character (C0, C1, ESC, DEL) left for the
// terminal.
func FuzzGist(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a\u001b[2Jb\u0085"}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"\u0007":"\n"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"\u009b31m"}]}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"\r\n\t"}}`,
		"not json \x1b\x9b\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		g := gist(rawFrame(string(raw)))
		n := 0
		for _, r := range g {
			n++
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("gist %q holds %U", g, r)
			}
		}
		if n > 6*gistLimit+1 { // an escaped byte is up to 6 runes (\u0085)
			t.Fatalf("gist of %d runes", n)
		}
	})
}
