package ui

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
)

// longTool is a tool name as long as real servers use.
const longTool = "summarize_repository_changes_since_last_release"

// widthScenario is the scenario (a progress call, a timed-out call answered
// late) plus a call of a tool with a long name whose result has isError.
func widthScenario() [][]client.Event {
	batches := scenario()
	var e events
	e.seq = uint64(len(batches[0]) + len(batches[1]) + len(batches[2]) + len(batches[3]))
	e.call(5650, 7, "tools/call", longTool, `{"name":"`+longTool+`","arguments":{"since":"v1.2.0"}}`, 30_000)
	e.answer(5800, 5650, 7, "tools/call", longTool, `{"content":[{"type":"text","text":"no release tagged v1.2.0"}],"isError":true}`)
	return append(batches, e.take())
}

// playWidth connects hs and feeds widthScenario.
func (hs *harness) playWidth() {
	hs.t.Helper()
	hs.connect()
	for _, b := range widthScenario() {
		hs.feed(b...)
	}
	hs.tick(nowMS)
}

// TestGoldenWidths snapshots the whole screen of one session at the sizes
// people use, from a laptop's 80×24 to a wide monitor's 200×60.
func TestGoldenWidths(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 36}, {160, 45}, {200, 60}} {
		w, h := size[0], size[1]
		name := fmt.Sprintf("widths_%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			hs := newHarness(t, w, h)
			hs.playWidth()
			got := hs.screen()
			for _, want := range []string{"call slow", "summarize", "isError", "timeout", "errors 4"} {
				if !strings.Contains(got, want) {
					t.Errorf("screen lacks %q", want)
				}
			}
			golden.Assert(t, name, got)
		})
	}
}

// TestWidthsNeverCutANumber: at every width from 60 to 240 the screen is
// exactly its size, and in the Pending and Frames panes no id or number is
// cut (no "…" right after a digit), except in Frames' raw preview; the
// Pending pane always shows the ids, the methods with their tools, and the
// states.
func TestWidthsNeverCutANumber(t *testing.T) {
	for w := 60; w <= 240; w++ {
		h := max(24, w*3/10)
		hs := newHarness(t, w, h)
		hs.playWidth()
		hs.press("h") // the history too: settled rows with their latencies
		hs.press("h")
		screen := strings.Split(hs.screen(), "\n")
		for _, p := range []int{panePending, paneFrames} {
			r, ok := hs.m.rects[p]
			if !ok {
				t.Fatalf("%dx%d: pane %d not shown", w, h, p)
			}
			inner := paneLines(screen, r)
			limit := -1
			if p == paneFrames {
				limit = strings.Index(inner[0], "preview")
			}
			for i, line := range inner {
				rs := []rune(line)
				for j, c := range rs {
					if c != '…' || j == 0 || (limit >= 0 && j >= limit) {
						continue
					}
					if unicode.IsDigit(rs[j-1]) {
						t.Fatalf("%dx%d: pane %d line %d cuts a number: %q", w, h, p, i, line)
					}
				}
			}
			if p == panePending {
				text := strings.Join(inner, "\n")
				for _, want := range []string{"6 ", "call slow", "progress", "isError", "summarize"} {
					if !strings.Contains(text, want) {
						t.Fatalf("%dx%d: Pending lacks %q:\n%s", w, h, want, text)
					}
				}
			}
		}
	}
}

// paneLines returns the inner lines of the pane in rectangle r (inside its
// border), as runes-safe strings.
func paneLines(screen []string, r rect) []string {
	var out []string
	for y := r.Y + 1; y < r.Y+r.H-1 && y < len(screen); y++ {
		rs := []rune(screen[y])
		out = append(out, string(rs[min(r.X+1, len(rs)):min(r.X+r.W-1, len(rs))]))
	}
	return out
}
