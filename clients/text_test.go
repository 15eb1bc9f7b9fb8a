package clients_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/clients"
	"github.com/sonde-mcp/sonde/internal/golden"
)

// hosts are four hosts, one seen twice, one with escapes in its name and
// a capability name too long for a column.
func hosts() []clients.Host {
	return clients.Merge([]clients.Session{
		{Source: "a-1", Host: "claude-code", Version: "2.1.292", Revisions: []string{"2025-06-18"}, Opens: "initialize",
			Capabilities: []string{"roots.listChanged"}, Requests: 40, Traced: 0, Progress: 12, MaxInFlight: 3, Cached: 2, Refetches: 1,
			Retries: 2, Cancelled: 1},
		{Source: "a-2", Host: "claude-code", Version: "2.1.292", Revisions: []string{"2025-11-25"}, Opens: "initialize",
			Capabilities: []string{"elicitation.form", "roots.listChanged"}, Requests: 2, MaxInFlight: 1},
		{Source: "b-1", Host: "gemini-cli", Version: "0.61.0", Revisions: []string{"2026-07-28", "2025-06-18"}, Opens: "server/discover",
			Fallback: true, Requests: 5, Traced: 5, MaxInFlight: 1},
		{Source: "c-1", Host: "evil\x1b]0;pwned\x07", Version: "1", Revisions: []string{"2025-06-18"}, Opens: "initialize",
			Capabilities: []string{"extensions.io.modelcontextprotocol/ui", "experimental.a-capability-too-long-for-its-column"}, Requests: 1, MaxInFlight: 1},
		{Source: "d-1", Opens: "tools/list", Requests: 1, MaxInFlight: 1},
	})
}

// TestWriteText: hosts as columns in blocks that fit 80 cells, every
// line within them, server-supplied text escaped.
func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := clients.WriteText(&b, hosts(), 80); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("%d cells: %q", n, l)
		}
		if strings.ContainsRune(l, 0x1b) || strings.ContainsRune(l, 0x07) {
			t.Errorf("control characters reach the terminal: %q", l)
		}
	}
	golden.Assert(t, "clients.txt", b.String())
	b.Reset()
	if err := clients.WriteText(&b, nil, 80); err != nil || !strings.HasPrefix(b.String(), "no tapped sessions") {
		t.Errorf("no hosts: %q %v", b.String(), err)
	}
}

// TestWriteMarkdown: a column per host, lines joined by <br>, escapes
// shown.
func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := clients.WriteMarkdown(&b, hosts()); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "clients.md", b.String())
}
