package doctor

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/hostconfig"
)

// TestProgress: one line per server, redrawn in place (cursor up by the
// number of lines), names escaped, cleared at the end.
func TestProgress(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, []hostconfig.Server{{Name: "a\x1b[31m", Host: "Cursor"}, {Name: "b", Host: "VS Code"}})
	first := b.String()
	if strings.Contains(first, "\x1b[31m") || !strings.Contains(first, `a\x1b[31m (Cursor): waiting`) || strings.Contains(first, "\x1b[2A") {
		t.Errorf("first draw %q", first)
	}
	b.Reset()
	p.set(1, "initialize")
	if got := b.String(); !strings.HasPrefix(got, "\x1b[2A") || !strings.Contains(got, "b (VS Code): initialize…\n") || strings.Count(got, "\n") != 2 {
		t.Errorf("redraw %q", got)
	}
	b.Reset()
	p.done(1, &Result{Steps: []Step{{Name: "config", OK: true}, {Name: "tcp"}}})
	if got := b.String(); !strings.Contains(got, "b (VS Code): FAIL at tcp\n") {
		t.Errorf("done %q", got)
	}
	b.Reset()
	p.stop()
	if got := b.String(); got != "\x1b[2A\r\x1b[J" {
		t.Errorf("stop %q", got)
	}
}
