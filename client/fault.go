package client

import "github.com/sonde-mcp/sonde/jsonrpc"

// FaultAction is what a fault rule does to a frame it matches
// (docs/chaos.md); chaos.Action is this type.
type FaultAction string

// The fault actions.
const (
	FaultDelay     FaultAction = "delay"     // hold the frame (and those after it) ms
	FaultDrop      FaultAction = "drop"      // never forward the frame
	FaultDuplicate FaultAction = "duplicate" // forward it n+1 times
	FaultCorrupt   FaultAction = "corrupt"   // change its bytes (how=)
	FaultError     FaultAction = "error"     // answer a request with an error instead of forwarding it
	FaultNoise     FaultAction = "noise"     // write a non-JSON line to the host before it
	FaultStderr    FaultAction = "stderr"    // write text to the host's stderr
	FaultReorder   FaultAction = "reorder"   // hold frames and release them reversed or shuffled
	FaultStall     FaultAction = "stall"     // forward the frame, then nothing more that way for ms
	FaultClose     FaultAction = "close"     // close the stream instead of forwarding the frame
)

// Fault is what a fault rule of sonde tap --fault (or replay --serve
// --fault) did to one frame, on the note that says it in words
// (docs/chaos.md): what a consumer acts on, never the words.
type Fault struct {
	// Rule is the rule's number (from 1, in the order given).
	Rule int
	// Action is the rule's action.
	Action FaultAction
	// Dir is the way the frame went: Out from the host to the server, In
	// from the server to the host.
	Dir Direction
	// Kind is the frame's kind (request, response, notification),
	// jsonrpc.KindInvalid for a line that is not a JSON-RPC message and for
	// the release of frames a reorder rule held.
	Kind jsonrpc.Kind
	// ID is the frame's id (a response's is its request's); invalid when
	// the frame has none.
	ID jsonrpc.ID
	// Method is the frame's method, or a response's request's (when known).
	Method string
}

// KeptAnswer reports whether the rule kept a response from the side that
// asked (dropped it, or closed the stream instead of forwarding it), and
// so left that request waiting: then it returns the request's direction
// and id.
func (f *Fault) KeptAnswer() (Direction, jsonrpc.ID, bool) {
	if f == nil || f.Kind != jsonrpc.KindResponse || !f.ID.IsValid() || (f.Action != FaultDrop && f.Action != FaultClose) {
		return 0, jsonrpc.ID{}, false
	}
	// A response going to the host answers the host's request (Out).
	if f.Dir == In {
		return Out, f.ID, true
	}
	return In, f.ID, true
}
