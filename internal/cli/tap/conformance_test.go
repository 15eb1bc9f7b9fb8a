package tap_test

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestListenConformance: the official conformance suite's server
// scenarios against server-everything over Streamable HTTP, directly and
// through `sonde tap --listen`: every scenario that passes directly passes
// through the tap (most others fail both ways: server-everything lacks the
// conformance server's tools, prompts and resources; dns-rebinding-
// protection passes only through the tap, which refuses a Host that is not
// loopback), and the tap's recording reads back.
func TestListenConformance(t *testing.T) {
	peertest.Conformance(t) // skip early when it is not installed
	endpoint := peertest.EverythingHTTP(t, "streamableHttp") + "/mcp"
	direct := peertest.ConformanceResults(t, endpoint)
	rec := filepath.Join(t.TempDir(), "conformance.jsonl")
	tap := startHTTPTap(t, endpoint, "--record", rec)
	through := peertest.ConformanceResults(t, tap.url)
	tap.stop(t)
	var names []string
	for name := range direct {
		names = append(names, name)
	}
	sort.Strings(names)
	passed := 0
	for _, name := range names {
		got, ok := through[name]
		switch {
		case !ok:
			t.Errorf("%s: not run through the tap", name)
		case direct[name] && !got:
			t.Errorf("%s: passes directly, fails through the tap", name)
		case got && !direct[name]:
			// dns-rebinding-protection: the tap refuses a Host that is
			// not loopback, which server-everything does not.
			t.Logf("%s: fails directly, passes through the tap", name)
		}
		if direct[name] {
			passed++
		}
	}
	if passed == 0 {
		t.Errorf("no scenario passed directly: %v", direct)
	}
	t.Logf("%d of %d scenarios pass directly and through the tap", passed, len(names))
	if recs := readCapture(t, rec); len(recs) < 10 {
		t.Errorf("the recording has %d records", len(recs))
	}
	if res := clitest.RunSonde(t, "", "stats", rec); res.Code != 0 {
		t.Errorf("sonde stats: exit %d\n%s", res.Code, res.Stderr)
	}
}
