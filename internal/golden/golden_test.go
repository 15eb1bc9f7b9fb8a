package golden

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDiffShowsFirstDifferingLines(t *testing.T) {
	d := diff("a\nb\nc", "a\nB\nc\nd")
	if !strings.Contains(d, "line 2:\n  want |b|\n  got  |B|") || !strings.Contains(d, "line 4:") || strings.Contains(d, "line 1:") {
		t.Fatalf("diff:\n%s", d)
	}
}

func TestAssertMatchesFile(t *testing.T) {
	Assert(t, "sample", "two lines \nkept exactly\n")
}
