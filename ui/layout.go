package ui

// rect is a screen rectangle in cells, including the pane's border.
type rect struct{ X, Y, W, H int }

func (r rect) contains(x, y int) bool {
	return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H
}

// Pane indices, in focus order.
const (
	panePending = iota
	paneFrames
	paneTools
	paneStderr
	paneLesson
	// paneFeatures (resources, prompts, log) takes the place of Tools
	// while it has the focus.
	paneFeatures
	// paneTimeline (requests on a time axis) takes the place of Frames
	// while it has the focus.
	paneTimeline
	paneCount
)

// layout maps the terminal size to pane rectangles. It is a pure function
// of its inputs so it can be tested without a terminal. The bottom two lines
// are the help line and the status bar. With lesson set, a narration pane
// takes the top. Zoom gives the whole area to the focused pane. Panes not in
// the result are not shown.
//
// Wide (>= 120 columns): pending over tools on the left (45%), frames over
// stderr on the right. Narrower: pending, then frames, then tools beside
// stderr; when that is too short, the focused pane alone.
func layout(w, h, focus int, zoom, lesson bool) map[int]rect {
	out := baseLayout(w, h, focus, zoom, lesson)
	if r, ok := out[paneTools]; ok && focus == paneFeatures {
		delete(out, paneTools)
		out[paneFeatures] = r
	}
	if r, ok := out[paneFrames]; ok && focus == paneTimeline {
		delete(out, paneFrames)
		out[paneTimeline] = r
	}
	return out
}

func baseLayout(w, h, focus int, zoom, lesson bool) map[int]rect {
	out := map[int]rect{}
	avail := h - 2
	if w < 20 || avail < 6 {
		return out
	}
	top := 0
	if lesson {
		lh := min(12, max(5, avail/3))
		if zoom && focus == paneLesson || avail-lh < 6 {
			lh = avail // zoomed, or no room for the other panes
		}
		out[paneLesson] = rect{0, 0, w, lh}
		top = lh
		avail -= lh
		if avail < 6 {
			return out
		}
	}
	if zoom && focus != paneLesson {
		out[focus] = rect{0, top, w, avail}
		return out
	}
	if w >= 120 {
		left := w * 45 / 100
		pendH := avail / 2
		out[panePending] = rect{0, top, left, pendH}
		out[paneTools] = rect{0, top + pendH, left, avail - pendH}
		framesH := avail * 65 / 100
		out[paneFrames] = rect{left, top, w - left, framesH}
		out[paneStderr] = rect{left, top + framesH, w - left, avail - framesH}
		return out
	}
	if avail < 12 {
		// Too short to stack three rows of panes (each needs its border
		// and a row): the focused pane alone, as if zoomed.
		if focus == paneLesson {
			focus = panePending
		}
		out[focus] = rect{0, top, w, avail}
		return out
	}
	pendH := max(5, avail*30/100)
	framesH := max(5, avail*40/100)
	bottomH := avail - pendH - framesH
	if bottomH < 4 {
		framesH -= 4 - bottomH
		bottomH = 4
	}
	out[panePending] = rect{0, top, w, pendH}
	out[paneFrames] = rect{0, top + pendH, w, framesH}
	half := w / 2
	out[paneTools] = rect{0, top + pendH + framesH, half, bottomH}
	out[paneStderr] = rect{half, top + pendH + framesH, w - half, bottomH}
	return out
}
