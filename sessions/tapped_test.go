package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tappedLines is a recording as sonde tap writes it: header, the tap's
// note, requests (one injected), frames with verdicts, the end.
var tappedLines = []string{
	`{"type":"header","format":"sonde-capture","version":"1.0","start":"2026-07-01T12:30:05Z","command":["srv","--x"]}`,
	`{"type":"note","note":` + quoteJSON(TapNote("my label", 7, 42, "claude")) + `}`,
	`{"type":"frame","seq":3,"t":1,"dir":"out","id":"sonde-7-1","method":"ping","kind":"request","raw":"{\"jsonrpc\":\"2.0\",\"id\":\"sonde-7-1\",\"method\":\"ping\",\"params\":{\"clientInfo\":{\"name\":\"sonde\"}}}","verdict":"sent"}`,
	`{"type":"frame","seq":4,"t":2,"dir":"out","id":1,"method":"initialize","kind":"request","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"claude-code\",\"version\":\"2.1.197\"}}}","verdict":"sent"}`,
	`{"type":"frame","seq":5,"t":3,"dir":"out","id":9,"method":"initialize","kind":"request","raw":"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"name\":\"second\",\"version\":\"9\"}}}","verdict":"sent"}`,
	`{"type":"session","t":4,"protocol_version":"2025-11-25","server_name":"srv","server_version":"1"}`,
	`{"type":"request","dir":"out","id":1,"state":"sent"}`,
	`{"type":"request","dir":"out","id":2,"state":"error"}`,
	`{"type":"request","dir":"out","id":"sonde-inject-1","state":"sent"}`,
	`{"type":"request","dir":"in","id":3,"state":"sent"}`,
	`{"type":"frame","dir":"in","raw":"{\"verdict\":\"late\"}","verdict":"late"}`,
	`{"type":"frame","dir":"in","raw":"x","verdict":"unknown"}`,
	`{"type":"frame","dir":"in","raw":"x","verdict":"duplicate"}`,
}

func quoteJSON(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestReadTapped: what a recording holds is read from its name, header,
// note and records: the host's calls (not sonde's injected ones), errors,
// verdicts, the clean end; reading again what a live file added (the
// cache) gives what reading it whole does.
func TestReadTapped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lbl-20260701-123005-999999.jsonl")
	text := strings.Join(tappedLines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s := ReadTapped(path, true)
	if s.Problem != "" || s.Label != "my label" || s.HostPID != 42 || s.HostName != "claude" || s.TapPID != 999999 ||
		s.Calls != 1 || s.Errors != 1 || s.Late != 1 || s.Unknown != 1 || s.Duplicate != 1 || s.CleanEnd || !s.Live ||
		strings.Join(s.Command, " ") != "srv --x" || !s.Started.Equal(time.Date(2026, 7, 1, 12, 30, 5, 0, time.UTC)) {
		t.Fatalf("read %+v", s)
	}
	// Who the host is: its first request's clientInfo (not sonde's injected
	// request before it, nor a later initialize), and the protocol the
	// handshake agreed on (not the one asked for).
	if s.ClientName != "claude-code" || s.ClientVersion != "2.1.197" || s.Protocol != "2025-11-25" || s.Host() != "claude-code 2.1.197 · 2025-11-25" {
		t.Errorf("host %q %q %q: %q", s.ClientName, s.ClientVersion, s.Protocol, s.Host())
	}
	cache := TappedCache{}
	if _, err := ListTappedCached(dir, cache); err != nil {
		t.Fatal(err)
	}
	more := `{"type":"request","dir":"out","id":4,"state":"sent"}` + "\n" + `{"type":"end"}` + "\n"
	if err := os.WriteFile(path, []byte(text+more), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(path, later, later)
	cached, err := ListTappedCached(dir, cache)
	if err != nil || len(cached) != 1 {
		t.Fatal(cached, err)
	}
	whole := ReadTapped(path, false)
	if c := cached[0]; c.Calls != 2 || !c.CleanEnd || c.Live || c.Calls != whole.Calls || c.Size != whole.Size || c.scanned != whole.scanned {
		t.Fatalf("read again through the cache %+v, whole %+v", c, whole)
	}
	for content, want := range map[string]string{"": "empty: nothing recorded yet", "{\"type\":\"frame\"}\n": "not a capture"} {
		p := filepath.Join(dir, "other.jsonl")
		os.WriteFile(p, []byte(content), 0o600)
		if got := ReadTapped(p, false); got.Problem != want || got.Label != "other" {
			t.Errorf("%q: problem %q label %q, want %q", content, got.Problem, got.Label, want)
		}
	}
}

// A modern host says who it is in each request's _meta: the first one's
// is read, with the protocol version it carries; a host that never says
// is nobody ("").
func TestTappedHostModern(t *testing.T) {
	for name, tc := range map[string]struct{ line, want string }{
		"modern": {`{"type":"frame","dir":"out","id":1,"method":"server/discover","kind":"request","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/clientInfo\":{\"name\":\"gemini-cli\",\"version\":\"0.9\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}","verdict":"sent"}`,
			"gemini-cli 0.9 · 2026-07-28"},
		"nameless": {`{"type":"frame","dir":"out","id":1,"method":"tools/list","kind":"request","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}","verdict":"sent"}`, ""},
		"b64":      {`{"type":"frame","dir":"out","id":1,"method":"initialize","kind":"request","b64":true,"raw":"eyJpZCI6MSwibWV0aG9kIjoiaW5pdGlhbGl6ZSIsInBhcmFtcyI6eyJjbGllbnRJbmZvIjp7Im5hbWUiOiJiIn19fQ==","verdict":"sent"}`, "b"},
		"server's": {`{"type":"frame","dir":"in","id":1,"method":"roots/list","kind":"request","raw":"{\"id\":1,\"method\":\"roots/list\",\"params\":{\"clientInfo\":{\"name\":\"x\"}}}","verdict":"server-request"}`, ""},
	} {
		var s Tapped
		s.count([]byte(tc.line))
		if got := s.Host(); got != tc.want {
			t.Errorf("%s: host %q, want %q", name, got, tc.want)
		}
	}
}
