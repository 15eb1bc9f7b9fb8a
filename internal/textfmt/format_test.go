package textfmt

import (
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
	}{{"abc", 5}, {"abcdef", 4}, {"日本語", 4}, {"日本語", 5}, {"\x1b[1mbold text\x1b[0m", 6}, {"", 3}, {"x", 0}} {
		got := Fit(tc.in, tc.width)
		if w := lipgloss.Width(got); w != tc.width {
			t.Errorf("Fit(%q, %d) = %q, %d cells", tc.in, tc.width, got, w)
		}
	}
	if got := Fit("abcdef", 4); got != "abc…" {
		t.Errorf("got %q", got)
	}
}

func TestLines(t *testing.T) {
	got := Lines("a\nbb\nccc\nd", 2, 3)
	if got != "a \nbb\nc…" {
		t.Errorf("got %q", got)
	}
	if strings.Count(Lines("", 4, 5), "\n") != 4 {
		t.Error("not 5 lines")
	}
}

func TestDurAndSize(t *testing.T) {
	for d, want := range map[time.Duration]string{
		740 * time.Microsecond: "740µs", 12300 * time.Microsecond: "12.3ms", 1204 * time.Millisecond: "1.204s",
		12540 * time.Millisecond: "12.5s", 184 * time.Second: "3m4s", -2 * time.Millisecond: "-2.0ms",
	} {
		if got := Dur(d); got != want {
			t.Errorf("Dur(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int]string{183: "183B", 2048: "2.0KiB", 8 << 20: "8.0MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q", n, got)
		}
	}
}
