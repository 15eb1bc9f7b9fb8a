package ui

import (
	"fmt"
	"strings"
	"testing"
)

// printable is every printable ASCII character but space (space is the
// lesson's next step outside a filter, and a space in a query is typed the
// same way).
func printable() string {
	var b strings.Builder
	for r := rune(0x21); r < 0x7f; r++ {
		b.WriteRune(r)
	}
	return b.String()
}

// TestFilterTakesEveryPrintableKey (#33): in every pane whose / starts a
// filter, a filter being typed takes every printable key: none quits,
// zooms, moves the focus, opens the help or acts in the pane. In Tools the
// query is what was typed, letters bound in the list (g, j, k) and global
// keys (q, z, R, S, the digits) included.
func TestFilterTakesEveryPrintableKey(t *testing.T) {
	typed := "get-an gzip query kill_1 " + printable()
	for _, lesson := range []bool{false, true} {
		for _, p := range []struct {
			key  string
			pane int
		}{{"1", panePending}, {"2", paneFrames}, {"3", paneTools}, {"7", paneTimeline}} {
			t.Run(fmt.Sprintf("pane %s lesson %v", p.key, lesson), func(t *testing.T) {
				var opts []opt
				if lesson {
					opts = append(opts, withLesson)
				}
				hs := newHarness(t, 160, 50, opts...)
				hs.play()
				hs.press(p.key, "/")
				for _, r := range typed {
					// The commands are not run (a cursor blink sleeps):
					// quitting sets quitted.
					if hs.press(string(r)); hs.m.quitted {
						t.Fatalf("%q quit", r)
					}
				}
				m := hs.m
				if m.quitted || m.confirmQuit || m.zoom || m.showHelp || m.focus != p.pane || !m.panes[p.pane].Capturing() {
					t.Fatalf("after typing: quit %v ask %v zoom %v help %v focus %d capturing %v",
						m.quitted, m.confirmQuit, m.zoom, m.showHelp, m.focus, m.panes[p.pane].Capturing())
				}
				if p.pane == paneTools && !strings.HasSuffix(m.tools.Title(), "filter: "+typed) {
					t.Errorf("Tools title %q, want the query %q", m.tools.Title(), typed)
				}
				hs.press("esc")
				if m.panes[p.pane].Capturing() {
					t.Error("esc did not leave the filter")
				}
			})
		}
	}
}

// TestToolsListTypingStartsNoFilter (#33): in the Tools list a letter
// starts no filter (only / does), so the first letter of a name is never
// lost to a key that acts first.
func TestToolsListTypingStartsNoFilter(t *testing.T) {
	hs := newHarness(t, 160, 50)
	hs.play()
	hs.press("3", "a", "d")
	if hs.m.tools.Capturing() || strings.Contains(hs.m.tools.Title(), "filter") {
		t.Fatalf("typing in the Tools list started a filter: %q", hs.m.tools.Title())
	}
	hs.press("/", "g", "e", "t")
	if !strings.HasSuffix(hs.m.tools.Title(), "filter: get") {
		t.Fatalf("after /get: %q", hs.m.tools.Title())
	}
	hs.press("enter")
	if hs.m.tools.Capturing() || hs.m.tools.Nested() || !strings.HasSuffix(hs.m.tools.Title(), "filter: get") {
		t.Fatalf("enter did not keep the filter in the list: %q nested %v", hs.m.tools.Title(), hs.m.tools.Nested())
	}
}
