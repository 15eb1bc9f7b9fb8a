// Package capture owns sonde's session file: one JSON object per line, a
// versioned header first, then one record per event of the client's event
// stream (frames with their exact bytes, request lifecycle transitions,
// stderr chunks, process events, notes) and a few records of the recorder's
// own (the negotiated session, missed events, the end).
//
// A Recorder writes a capture while the session runs; a Reader streams it
// back and turns records into client.Event values again. docs/capture-format.md
// describes every record and field and the compatibility promise.
package capture

import (
	"encoding/json"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Format is the value of the header's "format" field.
const Format = "sonde-capture"

// The version this package writes. Readers accept every version with the
// same major number or an older one; a newer major version is refused with
// ErrNewerVersion. Minor versions only add fields or record types, which
// older readers ignore or skip.
const (
	VersionMajor = 1
	VersionMinor = 5
)

// Record types (the "type" field of each line).
const (
	TypeHeader  = "header"  // first line of every capture
	TypeFrame   = "frame"   // client.EvFrame
	TypeRequest = "request" // client.EvRequest
	TypeStderr  = "stderr"  // client.EvStderr
	TypeProcess = "process" // client.EvProcess
	TypeNote    = "note"    // client.EvNote
	TypeHTTP    = "http"    // client.EvHTTP: an HTTP exchange or stream event
	TypeSession = "session" // the recorder: the handshake's outcome (protocol version, server)
	TypeMissed  = "missed"  // the recorder: events it did not receive
	TypeEnd     = "end"     // the recorder: a clean end, with totals
	TypeRestart = "restart" // the recorder: a new client follows (the server was restarted); Seq starts again at 1
)

// Record directions (the "dir" field): client.Direction's words.
const (
	DirOut = "out" // client.Out: from the host to the server
	DirIn  = "in"  // client.In: from the server to the host
)

// Frame kinds (the "kind" field of a frame record): jsonrpc.Kind's words.
const (
	KindRequest      = "request"
	KindResponse     = "response"
	KindNotification = "notification"
	KindInvalid      = "invalid"
)

// Redacted is what replaces a secret in a capture.
const Redacted = "«redacted»"

// Header is the first line of a capture.
type Header struct {
	Type    string `json:"type"`
	Format  string `json:"format"`
	Version string `json:"version"` // "MAJOR.MINOR"
	Sonde   string `json:"sonde,omitempty"`
	// Start is the absolute time of offset 0; every record's T is relative
	// to it.
	Start time.Time `json:"start"`
	// Transport is "stdio" or "http".
	Transport string `json:"transport"`
	// Command is the server's argv (stdio) with secrets redacted.
	Command []string `json:"command,omitempty"`
	// URL is the server's endpoint (HTTP transports), redacted.
	URL string `json:"url,omitempty"`
	// Redaction says what was redacted: "env" (values of --env entries),
	// "headers" (Authorization and cookies), "regex" (--redact).
	Redaction []string `json:"redaction,omitempty"`
}

// Record is one line after the header. Type says which fields are set; the
// fields of other types are zero. Offset and Line locate the record in the
// file and are filled by the Reader (they are not written).
type Record struct {
	Type string `json:"type"`
	// Seq is the client event's sequence number (0 for the recorder's own
	// records).
	Seq uint64 `json:"seq,omitempty"`
	// T is the time in nanoseconds since Header.Start.
	T int64 `json:"t"`

	// Frames and requests.
	Dir    string      `json:"dir,omitempty"` // "in" or "out"
	ID     *jsonrpc.ID `json:"id,omitempty"`  // with its JSON type: 3 or "3"
	Method string      `json:"method,omitempty"`

	// Frames.
	Kind     string     `json:"kind,omitempty"` // request, notification, response, invalid
	Raw      string     `json:"raw,omitempty"`  // the exact bytes (see B64)
	B64      bool       `json:"b64,omitempty"`  // Raw (or Data) is base64: the bytes are not valid UTF-8
	Size     int        `json:"size,omitempty"` // length of the bytes before redaction
	Verdict  string     `json:"verdict,omitempty"`
	Detail   string     `json:"detail,omitempty"`
	Decode   *DecodeErr `json:"decode_error,omitempty"`
	Redacted bool       `json:"redacted,omitempty"` // secrets were replaced: the bytes differ from the wire
	Stream   string     `json:"stream,omitempty"`   // HTTP: which HTTP exchange carried the frame ("POST 7", "GET")
	EventID  string     `json:"event_id,omitempty"` // HTTP: the SSE event id

	// Requests.
	Tool     string `json:"tool,omitempty"`
	State    string `json:"state,omitempty"`
	Deadline *int64 `json:"deadline,omitempty"` // ns since Header.Start
	// Timeout and MaxEnd (1.3) are a queued request's budget: its timeout
	// (ns) and, with --timeout-reset-on-progress, the latest its deadline
	// may move to (ns since Header.Start).
	Timeout  int64        `json:"timeout,omitempty"`
	MaxEnd   *int64       `json:"max_end,omitempty"`
	Latency  int64        `json:"latency,omitempty"` // ns
	Progress *ProgressRec `json:"progress,omitempty"`
	Err      *ErrorRec    `json:"error,omitempty"`
	// RetryOf (1.1) is the request a modern input_required retry continues.
	RetryOf *jsonrpc.ID `json:"retry_of,omitempty"`
	// Params (1.1) are the params of a request from the server as it
	// arrived (its received record), as text, redacted like frames.
	Params string `json:"params,omitempty"`

	// Stderr.
	Data string `json:"data,omitempty"`

	// Process (What, Pid, Argv, Signal, Exit; Err as for requests).
	What   string   `json:"what,omitempty"`
	Pid    int      `json:"pid,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	Signal string   `json:"signal,omitempty"`
	Exit   *ExitRec `json:"exit,omitempty"`

	// Note, and (1.4) on the note of a fault rule, what it did.
	Note  string    `json:"note,omitempty"`
	Fault *FaultRec `json:"fault,omitempty"`
	// Hold (1.5), on the note of a breakpoint, is the step of the frame it held.
	Hold *HoldRec `json:"hold,omitempty"`

	// HTTP exchanges and stream events.
	HTTP *HTTPRec `json:"http,omitempty"`

	// Session.
	ProtocolVersion string `json:"protocol_version,omitempty"`
	ServerName      string `json:"server_name,omitempty"`
	ServerVersion   string `json:"server_version,omitempty"`

	// Missed and end.
	Count    uint64 `json:"count,omitempty"`     // missed: events not received
	AfterSeq uint64 `json:"after_seq,omitempty"` // missed: the last Seq received before the gap
	Events   uint64 `json:"events,omitempty"`    // end: event records written
	Missed   uint64 `json:"missed,omitempty"`    // end: events missed in all

	// Offset is the byte offset of the line in the file; Line its 1-based
	// line number. Filled by the Reader.
	Offset int64 `json:"-"`
	Line   int   `json:"-"`
}

// DecodeErr is why a frame's bytes are not a valid JSON-RPC message.
type DecodeErr struct {
	// Class is jsonrpc.Class's name ("not-json", "not-object", "invalid")
	// or "too-long" for a line over the size cap.
	Class  string `json:"class"`
	Reason string `json:"reason"`
	// Limit is the size cap of a too-long line.
	Limit int `json:"limit,omitempty"`
	// Broken names the JSON-RPC rules an invalid object breaks
	// (jsonrpc.Broken: "null-id", "result-and-error"); version 1.2.
	// Older captures have only the reason, from which they are read.
	Broken []string `json:"broken,omitempty"`
}

// ProgressRec is a progress report of a request.
type ProgressRec struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// ErrorRec is an error of a request or a process event: a client.Error
// (Code set), a JSON-RPC error (RPC set, Code empty: the answer sonde sent to
// a server request), or any other error (Message only).
type ErrorRec struct {
	Code    string         `json:"code,omitempty"`
	Message string         `json:"message"`
	RPC     *jsonrpc.Error `json:"rpc,omitempty"`
	Exit    *ExitRec       `json:"exit,omitempty"`
	// Snapshot (1.3) is what sonde saw of the server when a request timed
	// out (client.Snapshot as JSON, redacted like frames).
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}

// ExitRec is how a server process ended.
type ExitRec struct {
	Pid           int    `json:"pid"`
	Code          int    `json:"code"`
	Signal        string `json:"signal,omitempty"`
	Stderr        string `json:"stderr,omitempty"`
	StderrB64     bool   `json:"stderr_b64,omitempty"`
	StderrDropped int64  `json:"stderr_dropped,omitempty"`
	ByClose       bool   `json:"by_close,omitempty"`
	StdoutClosed  bool   `json:"stdout_closed,omitempty"`
	T             int64  `json:"t"` // ns since Header.Start
	// Left (1.3) are the processes the server left running when it ended,
	// which sonde stopped.
	Left []LeftRec `json:"left,omitempty"`
}

// LeftRec is a process a server left behind: its pid, name, state and the
// CPU time it had used (ns), and its wait for a CPU (ns, Linux).
type LeftRec struct {
	Pid   int    `json:"pid"`
	Name  string `json:"name,omitempty"`
	State string `json:"state,omitempty"`
	CPU   int64  `json:"cpu,omitempty"`
	Wait  int64  `json:"wait,omitempty"`
}

// HTTPRec is one HTTP exchange, or something that happened on an HTTP
// stream that is not a message (client.EvHTTP, client.HTTPEvent).
type HTTPRec struct {
	Method string `json:"method,omitempty"` // GET, POST, DELETE ("" for stream notes)
	URL    string `json:"url,omitempty"`
	Status int    `json:"status,omitempty"` // 0 when no response arrived
	// Header lists the headers that matter as "> Name: value" (sent) and
	// "< Name: value" (received); the values of Authorization,
	// Proxy-Authorization, Cookie and Set-Cookie are always redacted.
	Header   []string    `json:"header,omitempty"`
	Duration int64       `json:"duration,omitempty"` // ns until the response headers
	Stream   string      `json:"stream,omitempty"`   // "POST 7", "GET", "SSE"
	ReqID    *jsonrpc.ID `json:"id,omitempty"`       // the request the exchange carried or the stream belongs to
	EventID  string      `json:"event_id,omitempty"` // an SSE event that is not a message: its id
	Raw      string      `json:"raw,omitempty"`      // and its bytes (base64 with B64)
	B64      bool        `json:"b64,omitempty"`
	Note     string      `json:"note,omitempty"`
	// Problem (1.2) marks a stream note that is a failure (a dropped
	// stream, an event cut off): client.HTTPEvent.Problem.
	Problem bool `json:"problem,omitempty"`
}

// FaultRec (1.4) is what a fault rule of sonde tap --fault did, on the note
// that says it in words (client.Fault).
type FaultRec struct {
	Rule   int                `json:"rule"`
	Action client.FaultAction `json:"action"`
	Dir    string             `json:"dir"`              // "out" (to the server) or "in" (to the host)
	Kind   string             `json:"kind,omitempty"`   // the frame's kind
	ID     *jsonrpc.ID        `json:"id,omitempty"`     // the frame's id (a response's: its request's)
	Method string             `json:"method,omitempty"` // the frame's method, or a response's request's
}
