package capture

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// HoldRec (1.5) is a step of a frame a breakpoint of sonde tap --break
// held (client.Hold), on the note that says it in words.
type HoldRec struct {
	Handle     string            `json:"handle,omitempty"` // "h3"; empty when the frame matched past the limits and passed
	Breakpoint int               `json:"breakpoint"`
	Action     client.HoldAction `json:"action"`           // held, released, edited, dropped, answered
	By         client.HoldBy     `json:"by,omitempty"`     // ui, socket, timeout, detach, end, agent
	Dir        string            `json:"dir"`              // "out" (to the server) or "in" (to the host)
	Kind       string            `json:"kind,omitempty"`   // the held frame's kind
	ID         *jsonrpc.ID       `json:"id,omitempty"`     // the held frame's id
	Method     string            `json:"method,omitempty"` // its method, or a response's request's
	// Original is the frame as held and Frame what was sent instead (the
	// edit, the answer), both redacted like a frame's raw; B64 says they
	// are base64 (not UTF-8).
	Original string `json:"original,omitempty"`
	Frame    string `json:"frame,omitempty"`
	B64      bool   `json:"b64,omitempty"`
	// HeldNS is how long the frame was held, on the step that ended it.
	HeldNS int64 `json:"held_ns,omitempty"`
	// Order numbers the releases of one release of several handles.
	Order int `json:"order,omitempty"`
}

// holdRec is the record of h (nil for none), and whether redaction
// changed its frames.
func (e *encoder) holdRec(h *client.Hold) (*HoldRec, bool) {
	if h == nil {
		return nil, false
	}
	r := &HoldRec{Handle: h.Handle, Breakpoint: h.Breakpoint, Action: h.Action, By: h.By, Dir: h.Dir.String(),
		Method: h.Method, HeldNS: int64(h.Held), Order: h.Order}
	if h.Kind != jsonrpc.KindInvalid {
		r.Kind = h.Kind.String()
	}
	if h.ID.IsValid() {
		id := h.ID
		r.ID = &id
	}
	orig, red1 := e.redact.Bytes(h.Original)
	sent, red2 := e.redact.Bytes(h.Frame)
	r.B64 = !utf8.Valid(orig) || !utf8.Valid(sent)
	text := func(b []byte) string {
		if r.B64 {
			return base64.StdEncoding.EncodeToString(b)
		}
		return string(b)
	}
	r.Original, r.Frame = text(orig), text(sent)
	return r, red1 || red2
}

// holdOf is the client.Hold of a record (nil for none).
func holdOf(r *HoldRec) *client.Hold {
	if r == nil {
		return nil
	}
	h := &client.Hold{Handle: r.Handle, Breakpoint: r.Breakpoint, Action: r.Action, By: r.By, Dir: parseDir(r.Dir),
		Kind: parseKind(r.Kind), Method: r.Method, Held: time.Duration(r.HeldNS), Order: r.Order}
	if r.ID != nil {
		h.ID = *r.ID
	}
	if r.Original != "" {
		h.Original, _ = decodeBytes(r.Original, r.B64)
	}
	if r.Frame != "" {
		h.Frame, _ = decodeBytes(r.Frame, r.B64)
	}
	return h
}
