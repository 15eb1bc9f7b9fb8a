package uitest

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestScreenSize(t *testing.T) {
	for _, tc := range []struct {
		s    string
		w, h int
		ok   bool
	}{
		{"ab\ncd", 2, 2, true},
		{"\x1b[1mab\x1b[0m\n界", 2, 2, true}, // styling takes no cell; 界 takes two
		{"ab\ncd", 2, 3, false},
		{"ab\nc", 2, 2, false},
		{"ab\ncde", 2, 2, false},
	} {
		if err := ScreenSize(tc.s, tc.w, tc.h); (err == nil) != tc.ok {
			t.Errorf("ScreenSize(%q, %d, %d) = %v", tc.s, tc.w, tc.h, err)
		}
	}
}

func TestRun(t *testing.T) {
	msg := func(m tea.Msg) tea.Cmd { return func() tea.Msg { return m } }
	got := Run(tea.Batch(msg(1), msg(nil), tea.Batch(msg(2), msg(3))))
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Errorf("Run = %v, want [1 2 3]", got)
	}
	if Run(nil) != nil || Run(msg(nil)) != nil {
		t.Error("a nil command or message gave messages")
	}
}
