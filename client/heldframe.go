package client

import (
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// HoldAction is what happened to a frame a breakpoint held
// (docs/breakpoints.md).
type HoldAction string

// The steps of a held frame: it is held, then exactly one of the others.
const (
	HoldHeld     HoldAction = "held"     // a breakpoint matched: the frame waits
	HoldReleased HoldAction = "released" // forwarded unchanged
	HoldEdited   HoldAction = "edited"   // forwarded as edited (Frame)
	HoldDropped  HoldAction = "dropped"  // never forwarded
	HoldAnswered HoldAction = "answered" // a held request answered in its receiver's place (Frame is the answer)
)

// HoldBy says who decided a held frame's fate.
type HoldBy string

// Who decides.
const (
	HoldByUI      HoldBy = "ui"      // the person in sonde's UI
	HoldBySocket  HoldBy = "socket"  // sonde breaks, through the session's socket
	HoldByTimeout HoldBy = "timeout" // --break-timeout passed: auto-continue
	HoldByDetach  HoldBy = "detach"  // the last watcher went away: everything held is released
	HoldByEnd     HoldBy = "end"     // the session ended
	HoldByAgent   HoldBy = "agent"   // a coding agent, through sonde mcp
)

// Hold is one step of a frame a breakpoint held, on the note that says
// it in words: what a consumer (the capture, replay, lint) acts on.
type Hold struct {
	// Handle names the held frame ("h3") for as long as the session runs.
	Handle string
	// Breakpoint is the number of the breakpoint that matched (from 1).
	Breakpoint int
	// Action is the step; By who took it (unset on HoldHeld).
	Action HoldAction
	By     HoldBy
	// Dir is the way the frame went: Out to the server, In from it.
	Dir Direction
	// Kind, ID and Method are the held frame's (a response's method is
	// its request's, when known).
	Kind   jsonrpc.Kind
	ID     jsonrpc.ID
	Method string
	// Original is the frame as it came; Frame what was sent instead (an
	// edit, or the answer to a held request); both unset when unchanged.
	Original []byte
	Frame    []byte
	// Held is how long the frame was held (on the step that ended it): a
	// latency a consumer must not count as the server's.
	Held time.Duration
	// Order numbers the releases of one `release` asked for several
	// handles (from 1, in the order given); 0 otherwise.
	Order int
}

// NoteHold reports a step of a frame a breakpoint held on this client's
// own connection (hold.Conn), as a note event with Hold set: the
// recording keeps it as the tap's does. text says it in words (hold.Text).
func (c *Client) NoteHold(text string, h Hold) {
	c.hub.emit(Event{Time: time.Now(), Kind: EvNote, Note: text, Hold: &h})
}
