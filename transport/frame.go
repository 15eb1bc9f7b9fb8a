// Package transport moves and frames bytes between sonde and an MCP server.
// A Conn reads and writes frames: the exact bytes of one message as they were
// on the wire, with their direction, time, and the decoded message or the
// decode error. Out-of-band facts (stderr output, process start) go to an
// Observer, which must not block.
package transport

import (
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Direction says which way a frame travelled.
type Direction uint8

// The two directions of the wire.
const (
	// In is from the server to sonde.
	In Direction = iota + 1
	// Out is from sonde to the server.
	Out
)

// String returns "in" or "out".
func (d Direction) String() string {
	switch d {
	case In:
		return "in"
	case Out:
		return "out"
	}
	return "?"
}

// Arrow returns "<-" for In and "->" for Out, as drawn in frame lists.
func (d Direction) Arrow() string {
	if d == In {
		return "<-"
	}
	return "->"
}

// Frame is one message on the wire.
type Frame struct {
	Dir  Direction
	Time time.Time
	// Raw holds the exact bytes of the line without its "\n" terminator (a
	// "\r" before it is kept, as it was on the wire).
	Raw []byte
	// Msg is the decoded message (partially filled when Err is set).
	Msg jsonrpc.Message
	// Err is nil or the *jsonrpc.DecodeError that says why Raw is not a
	// valid JSON-RPC message.
	Err error
	// Stream names the HTTP stream a frame came on ("POST 7", "GET",
	// "SSE"); EventID is its SSE event id. Both are empty on stdio.
	Stream  string
	EventID string
}

// NewInFrame decodes raw as a frame received at t.
func NewInFrame(raw []byte, t time.Time) Frame {
	msg, err := jsonrpc.Decode(raw)
	return Frame{Dir: In, Time: t, Raw: raw, Msg: msg, Err: err}
}

// Conn is a connection to one MCP server.
type Conn interface {
	// Read returns the next frame from the server. It is called from one
	// goroutine only. When the connection ends it returns an error: for a
	// process, an *ExitError.
	Read() (Frame, error)
	// Write sends one message (raw must not contain a newline). It may block
	// while the server is not reading; Close unblocks it.
	Write(raw []byte) error
	// Close ends the connection and releases everything it holds. It is
	// idempotent: concurrent callers wait for the same close.
	Close() error
}

// BatchWriter is a Conn that can send several messages at once (in one
// system call, for stdio). The messages are written in order; an error means
// any of them may not have reached the server.
type BatchWriter interface {
	WriteBatch(raws [][]byte) error
}

// EventKind says what an out-of-band transport event is.
type EventKind uint8

// The out-of-band events a transport reports.
const (
	// EventStart: the server process started (Pid, Argv).
	EventStart EventKind = iota + 1
	// EventStderr: a chunk of the server's stderr (Data).
	EventStderr
	// EventSignal: sonde took a step to stop the server's processes; Signal
	// names it: SIGTERM or SIGKILL to its process group on Unix,
	// CTRL_BREAK_EVENT or TerminateJobObject on Windows.
	EventSignal
	// EventHTTP: an HTTP exchange, or something on a stream that is not a
	// message (HTTP).
	EventHTTP
	// EventConnect: an HTTP connection was set up (Argv holds the URL); it
	// plays the part of EventStart for a server sonde does not run.
	EventConnect
)

// Event is an out-of-band fact about the connection.
type Event struct {
	Kind   EventKind
	Time   time.Time
	Pid    int
	Argv   []string
	Data   []byte
	Signal string
	HTTP   *HTTPEvent
}

// Observer receives transport events. It is called from the transport's own
// goroutines and must return quickly without blocking.
type Observer func(Event)
