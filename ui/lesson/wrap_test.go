package lesson

import (
	"strings"
	"testing"
)

// TestWrapKeepsFlags: the lesson's text breaks at spaces, never at the
// hyphen of a flag (#33: "--max-" at a line's end, "pending" on the next).
func TestWrapKeepsFlags(t *testing.T) {
	got := wrap("run it with sonde demo --max-pending 1 to see", 24)
	for _, l := range strings.Split(got, "\n") {
		if l = strings.TrimRight(l, " "); strings.HasSuffix(l, "-") {
			t.Errorf("a line ends at a hyphen:\n%s", got)
		}
	}
	if !strings.Contains(got, "--max-pending") {
		t.Errorf("the flag is cut:\n%s", got)
	}
}
