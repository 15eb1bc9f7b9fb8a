//go:build linux || darwin

package live_test

import (
	"strings"
	"testing"
)

// TestToolsAllProgress: on a terminal, tools --all shows how many servers
// have listed their tools on one line it erases at the end; piped (the
// other tests) or with --json it says nothing of the kind.
func TestToolsAllProgress(t *testing.T) {
	cfg, _ := hostServers(t, []string{"alpha", "beta"}, nil)
	term, _, code := runOnTerminal(t, false, "tools", "--config", cfg, "--all")
	if code != 0 || !strings.Contains(term, "\rsonde: listing the tools of 2 servers…") || !strings.Contains(term, "\r\x1b[K") {
		t.Fatalf("exit %d, terminal:\n%q", code, term)
	}
	term, _, code = runOnTerminal(t, false, "tools", "--config", cfg, "--all", "--json")
	if code != 0 || strings.Contains(term, "listing the tools") {
		t.Fatalf("--json: exit %d, terminal:\n%q", code, term)
	}
}
