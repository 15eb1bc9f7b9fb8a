package diagram

import (
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// Step is one arrow or note of the diagram, as Mermaid draws it: for a
// renderer of its own (the HTML report's SVG) that must show the same
// content.
type Step struct {
	// Seq is the event the step comes from; At its time from the start.
	Seq uint64
	At  time.Duration
	// Note is a note (Where says where), otherwise an arrow from Dir's
	// sender (Out: sonde to the server) drawn as Arrow.
	Note  bool
	Where Where
	Dir   client.Direction
	Arrow Arrow
	// Injected: of a request sonde injected into a host's session (drawn
	// from sonde's own lane, not the host's).
	Injected bool
	// Label is the text, cut as Mermaid's is, not escaped.
	Label string
}

// Arrow is how an arrow of a Step is drawn.
type Arrow string

// The arrows: a request (solid), a response (dotted), a notification (open
// head), a line that is not a message (a cross).
const (
	ArrowRequest Arrow = "request"
	ArrowReply   Arrow = "reply"
	ArrowNotify  Arrow = "notify"
	ArrowBad     Arrow = "bad"
)

// Where is where a note of a Step goes (left: of the client, or of sonde
// for an injected request's).
type Where string

// The places of a note: over both lanes, left of sonde, right of the
// server.
const (
	WhereOver  Where = "over"
	WhereLeft  Where = "left"
	WhereRight Where = "right"
)

// Steps returns the diagram's steps in order, the window's note first
// when a window is set.
func (b *Builder) Steps() []Step {
	var out []Step
	if b.o.From.Set || b.o.To.Set {
		out = append(out, Step{Note: true, Where: WhereOver, Label: b.windowText()})
	}
	for _, s := range b.steps {
		st := Step{Seq: s.seq, At: s.at, Note: s.note, Dir: s.dir, Injected: s.injected, Label: cut(s.label)}
		if s.note {
			st.Where = [...]Where{overBoth: WhereOver, leftOfClient: WhereLeft, rightOfServer: WhereRight}[s.side]
		} else {
			st.Arrow = [...]Arrow{styleRequest: ArrowRequest, styleReply: ArrowReply, styleNotify: ArrowNotify, styleBad: ArrowBad}[s.style]
		}
		out = append(out, st)
	}
	return out
}

// Server is the server's name as the diagram shows it.
func (b *Builder) Server() string { return b.server }
