package frames

import (
	"strings"
	"testing"
)

// TestLateRulesMarked: the freshness and MCP Apps rules mark their frames
// live, one event at a time, as the other rules do; their passing twins
// mark nothing.
func TestLateRulesMarked(t *testing.T) {
	for sample, want := range map[string]string{
		"cache-refetch.jsonl":            "6:cache-refetch",
		"cache-changed.jsonl":            "7:cache-changed",
		"app-tool-visibility.jsonl":      "8:app-tool-visibility",
		"pass/cache-fresh.jsonl":         "",
		"pass/app-tool-visibility.jsonl": "",
	} {
		m, _ := lintModel(t, "../../testdata/captures/lint/"+sample, 1)
		if got := strings.Join(marks(m), " "); got != want {
			t.Errorf("%s: marks %q, want %q", sample, got, want)
		}
	}
}
