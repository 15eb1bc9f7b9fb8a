package client

import (
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// The transport types an Event carries, under the client's name, so that a
// consumer of events (the UI, the recorder, lint, stats, diagrams, replay)
// needs this package only, never the transport's process and HTTP code.

// Frame is one message on the wire: its exact bytes, direction, time, and
// the decoded message or the decode error (FrameInfo embeds it).
type Frame = transport.Frame

// Direction says which way a frame or request travelled: In (from the
// server) or Out (from sonde).
type Direction = transport.Direction

// The two directions of the wire.
const (
	// In is from the server to sonde.
	In = transport.In
	// Out is from sonde to the server.
	Out = transport.Out
)

// Exit is how a server process ended (ProcInfo.Exit, Error.Exit).
type Exit = transport.Exit

// HTTPEvent is an HTTP exchange, or a stream event that is not a message
// (Event.HTTP).
type HTTPEvent = transport.HTTPEvent

// LineTooLongError is the Err of a frame of VerdictTooLong: a line from the
// server over the size cap; Prefix holds its first bytes.
type LineTooLongError = transport.LineTooLongError

// ExchangeError is a failed HTTP exchange (Error.HTTP).
type ExchangeError = transport.ExchangeError

// StdioConfig configures a server started as a subprocess (Stdio).
type StdioConfig = transport.StdioConfig

// HTTPConfig configures a connection to a server over HTTP (HTTP).
type HTTPConfig = transport.HTTPConfig

// NewInFrame decodes raw as a frame received from the server at t.
func NewInFrame(raw []byte, t time.Time) Frame { return transport.NewInFrame(raw, t) }
