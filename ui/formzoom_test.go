package ui

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/golden"
)

// At 80x24 a tool's form opens zoomed (the Tools pane alone has six rows;
// zoomed, twenty), and closing it brings the layout back; a zoom of the
// user's own (z) is left as it is. Golden at 80x24.
func TestFormZoomsAtSmallSizes(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.connect()
	hs.press("3", "enter")
	if !formOpen(hs.m.tools) || !hs.m.zoom {
		t.Fatalf("form open %v, zoomed %v", formOpen(hs.m.tools), hs.m.zoom)
	}
	screen := hs.screen()
	golden.Assert(t, "form_zoomed_80x24", screen)
	if strings.Contains(screen, "Pending") {
		t.Errorf("the form is not alone on the screen:\n%s", screen)
	}
	hs.press("esc")
	if formOpen(hs.m.tools) || hs.m.zoom {
		t.Fatalf("after esc: form open %v, zoomed %v", formOpen(hs.m.tools), hs.m.zoom)
	}
	// Zoomed by hand: closing the form leaves the zoom on.
	hs.press("z", "enter", "esc")
	if !hs.m.zoom {
		t.Error("closing the form undid the user's zoom")
	}
	// Where the pane is tall enough, nothing changes.
	hs = newHarness(t, 160, 48)
	hs.connect()
	hs.press("3", "enter")
	if !formOpen(hs.m.tools) || hs.m.zoom {
		t.Errorf("at 160x48: form open %v, zoomed %v", formOpen(hs.m.tools), hs.m.zoom)
	}
}
