package ui

import "testing"

func TestLayout(t *testing.T) {
	tests := []struct {
		name         string
		w, h, focus  int
		zoom, lesson bool
		want         map[int]rect
	}{
		{"80x24", 80, 24, panePending, false, false, map[int]rect{
			panePending: {0, 0, 80, 6}, paneFrames: {0, 6, 80, 8}, paneTools: {0, 14, 40, 8}, paneStderr: {40, 14, 40, 8}}},
		{"120x40", 120, 40, panePending, false, false, map[int]rect{
			panePending: {0, 0, 54, 19}, paneTools: {0, 19, 54, 19}, paneFrames: {54, 0, 66, 24}, paneStderr: {54, 24, 66, 14}}},
		{"zoom frames", 100, 30, paneFrames, true, false, map[int]rect{paneFrames: {0, 0, 100, 28}}},
		{"lesson 80x24", 80, 24, paneLesson, false, true, map[int]rect{
			paneLesson: {0, 0, 80, 7}, panePending: {0, 7, 80, 5}, paneFrames: {0, 12, 80, 6}, paneTools: {0, 18, 40, 4}, paneStderr: {40, 18, 40, 4}}},
		{"too small", 15, 5, panePending, false, false, map[int]rect{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := layout(tt.w, tt.h, tt.focus, tt.zoom, tt.lesson)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i, r := range tt.want {
				if got[i] != r {
					t.Errorf("pane %d: got %+v, want %+v", i, got[i], r)
				}
			}
			// No overlap, and everything inside the screen above the two bottom lines.
			for i, a := range got {
				if a.X < 0 || a.Y < 0 || a.X+a.W > tt.w || a.Y+a.H > tt.h-2 {
					t.Errorf("pane %d %+v outside %dx%d", i, a, tt.w, tt.h-2)
				}
				for j, b := range got {
					if i < j && a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
						t.Errorf("panes %d and %d overlap", i, j)
					}
				}
			}
		})
	}
}

func TestLayoutCoversScreen(t *testing.T) {
	for w := 80; w <= 200; w += 7 {
		for h := 24; h <= 60; h += 5 {
			for _, lesson := range []bool{false, true} {
				area := 0
				for _, r := range layout(w, h, 0, false, lesson) {
					area += r.W * r.H
				}
				if area != w*(h-2) {
					t.Fatalf("%dx%d lesson=%v: panes cover %d of %d cells", w, h, lesson, area, w*(h-2))
				}
			}
		}
	}
}
