package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// TestGolden snapshots the whole screen after the scenario, without
// styling, at the two reference sizes, with and without the lesson.
func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		w, h   int
		opts   []opt
		keys   []string
		extras []string // text the screen must hold (so a bad -update shows)
	}{
		{"screen_80x24", 80, 24, nil, nil, []string{"1 Pending 1", "2 Frames 16", "pid 4242", "pending 1"}},
		{"screen_120x40", 120, 40, nil, nil, []string{"slow", "late", "malformed", "slow: step 2/4", "timeout", "errors 3"}},
		{"screen_lesson_120x40", 120, 40, []opt{withLesson}, nil, []string{"5 Lesson 1/", "responses are matched by id"}},
		{"zoom_frames_120x40", 120, 40, nil, []string{"2", "z"}, []string{"notifications/cancell", "late response for id 5"}},
		{"help_80x24", 80, 24, nil, []string{"2", "?"}, []string{"Keys of Frames", "Everywhere"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHarness(t, tt.w, tt.h, tt.opts...)
			hs.play()
			hs.press(tt.keys...)
			got := hs.screen()
			for _, want := range tt.extras {
				if !strings.Contains(got, want) {
					t.Errorf("screen lacks %q", want)
				}
			}
			golden.Assert(t, tt.name, got)
		})
	}
}

// TestViewSize checks that every line of the screen is exactly the
// terminal's width and that there are exactly as many lines as rows, at
// common sizes, with and without the lesson, zoomed, under the help, in
// colour and not, and at sizes too small for the panes.
func TestViewSize(t *testing.T) {
	sizes := [][2]int{{80, 24}, {81, 25}, {100, 30}, {119, 35}, {120, 40}, {133, 41}, {160, 50}, {200, 60}}
	tiny := [][2]int{{19, 24}, {80, 7}, {20, 8}, {10, 3}, {1, 1}, {5, 40}, {200, 2}}
	modes := []struct {
		name string
		opts []opt
		keys []string
	}{
		{"plain", nil, nil},
		{"colour", []opt{withPalette(theme.Dark(), false)}, nil},
		{"lesson", []opt{withLesson}, nil},
		{"zoom", nil, []string{"2", "z"}},
		{"help", nil, []string{"?"}},
		{"detail", nil, []string{"2", "enter"}},
		{"filter", nil, []string{"2", "/", "t", "o", "o", "l"}},
	}
	for _, mode := range modes {
		for _, size := range append(sizes, tiny...) {
			w, h := size[0], size[1]
			t.Run(fmt.Sprintf("%s/%dx%d", mode.name, w, h), func(t *testing.T) {
				hs := newHarness(t, w, h, mode.opts...)
				hs.play()
				hs.press(mode.keys...)
				s := hs.screen() // checks the size
				small := len(hs.m.rects) == 0
				if want := w < 20 || h < 8; small != want {
					t.Fatalf("panes shown %v at %dx%d", !small, w, h)
				}
				if small && w >= 40 && h >= 1 && !strings.Contains(s, "larger terminal") {
					t.Fatalf("tiny screen lacks the message:\n%s", s)
				}
			})
		}
	}
	// Resizing down and up again keeps the screen exact.
	hs := newHarness(t, 120, 40, withLesson)
	hs.play()
	for _, size := range [][2]int{{30, 9}, {200, 60}, {80, 12}, {80, 24}} {
		hs.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		checkScreen(t, hs.m.View().Content, size[0], size[1])
	}
}

// TestGoldenHasNoStyling guards the golden helper's input: the snapshots
// are of stripped text, and the styled view is only styled, not different.
func TestGoldenHasNoStyling(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.play()
	styled := hs.m.View().Content
	if !strings.Contains(styled, "\x1b[") {
		t.Fatal("NoColor view has no styling at all (bold, faint, reverse expected)")
	}
	if ansi.Strip(styled) != hs.screen() {
		t.Fatal("stripping is not stable")
	}
}
