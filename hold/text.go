package hold

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Text is a step of a held frame in words, as the recording's note
// says it ("breakpoint 1 held h1: the response to id 3 (tools/call) from
// the server").
func Text(h client.Hold) string {
	what := "a frame"
	switch {
	case h.ID.IsValid() && h.Kind == jsonrpc.KindResponse:
		what = "the response to id " + h.ID.String()
	case h.ID.IsValid():
		what = "the request id " + h.ID.String()
	case h.Method != "":
		what = "a notification"
	}
	if h.Method != "" {
		what += " (" + h.Method + ")"
	}
	way := "to the server"
	if h.Dir == client.In {
		way = "from the server"
	}
	if h.Handle == "" { // past the limits: not held
		return fmt.Sprintf("breakpoint %d matched %s %s, but %d frames (or %d MiB) are held already: it passed", h.Breakpoint, what, way, MaxHeld, MaxHeldBytes>>20)
	}
	s := fmt.Sprintf("breakpoint %d %s %s: %s %s", h.Breakpoint, h.Action, h.Handle, what, way)
	if h.By != "" {
		s += " by " + string(h.By)
	}
	if h.Action != client.HoldHeld {
		s += fmt.Sprintf(", after %v held", h.Held.Round(time.Millisecond))
	}
	if h.Order > 0 {
		s += fmt.Sprintf(" (release order %d)", h.Order)
	}
	if len(h.Frame) > 0 && (h.Action == client.HoldEdited || h.Action == client.HoldAnswered) {
		s += ", sent instead: " + shorten(h.Frame, holdTextFrame)
	}
	return s
}

// holdTextFrame is how much of an edit or an answer a note quotes (the
// whole is in the hold record).
const holdTextFrame = 240

// shorten is b as text, cut to n bytes (on a rune boundary) with "…".
func shorten(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "…"
}
