package ui

import "testing"

// TestLayoutEverySize checks every size from the minimum up, in every
// focus, zoomed or not, with and without the lesson: each pane is at least
// 3×3 (its border and one cell), inside the screen above the two bottom
// lines, no two panes overlap and together they cover that area (the
// canvas leaves uncovered rows empty, not blank); the focused pane is shown
// unless the lesson takes all the room.
func TestLayoutEverySize(t *testing.T) {
	for w := 20; w <= 130; w++ {
		for h := 8; h <= 45; h++ {
			for _, lesson := range []bool{false, true} {
				for focus := range paneCount {
					if focus == paneLesson && !lesson {
						continue
					}
					for _, zoom := range []bool{false, true} {
						got := layout(w, h, focus, zoom, lesson)
						if len(got) == 0 {
							t.Fatalf("%dx%d: no panes", w, h)
						}
						area := 0
						for i, a := range got {
							area += a.W * a.H
							if a.W < 3 || a.H < 3 || a.X < 0 || a.Y < 0 || a.X+a.W > w || a.Y+a.H > h-2 {
								t.Fatalf("%dx%d focus %d zoom %v lesson %v: pane %d is %+v", w, h, focus, zoom, lesson, i, a)
							}
							for j, b := range got {
								if i < j && a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
									t.Fatalf("%dx%d: panes %d and %d overlap", w, h, i, j)
								}
							}
						}
						if area != w*(h-2) {
							t.Fatalf("%dx%d focus %d zoom %v lesson %v: panes cover %d of %d cells: %v", w, h, focus, zoom, lesson, area, w*(h-2), got)
						}
						if _, ok := got[focus]; !ok && !(lesson && len(got) == 1) {
							t.Fatalf("%dx%d focus %d zoom %v lesson %v: focused pane not shown: %v", w, h, focus, zoom, lesson, got)
						}
					}
				}
			}
		}
	}
}
