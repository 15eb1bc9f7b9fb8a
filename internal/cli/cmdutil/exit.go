package cmdutil

import (
	"context"
	"errors"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/manager"
)

// Exit statuses (docs/errors.md). They are part of sonde's interface.
const (
	ExitOK          = 0
	ExitToolError   = 1 // a tool result with isError, a failed line in script, replay --against differences
	ExitUsage       = 2
	ExitRemote      = 3  // MCP_ERROR
	ExitTimeout     = 4  // MCP_TIMEOUT
	ExitExited      = 5  // MCP_PROCESS_EXIT, CLIENT_CLOSED
	ExitProtocol    = 6  // MCP_PROTOCOL
	ExitSpawn       = 7  // MCP_SPAWN
	ExitHandshake   = 8  // MCP_HANDSHAKE
	ExitBusy        = 9  // MCP_BUSY
	ExitHTTP        = 10 // MCP_HTTP
	ExitExpired     = 11 // MCP_SESSION_EXPIRED
	ExitURLRequired = 12 // MCP_URL_REQUIRED
	ExitQuarantined = 13 // MCP_QUARANTINED
	ExitInterrupted = 130
)

// ExitCodesSee ends the help of sonde's commands that talk to a server: the
// table itself is in one place, sonde help exit-codes.
const ExitCodesSee = "Exit status: see sonde help exit-codes."

// ExitCodesHelp is the table of exit statuses, shown by sonde help
// exit-codes.
const ExitCodesHelp = `Exit status:
  0    ok
  1    a tool result with isError, a failed line in script, replay --against differences,
       lint found violations, check found what --fail-on names or a contract is broken,
       diff --exit-code differences
  2    usage error, or a capture file that cannot be read
  3    MCP_ERROR         the server answered with a JSON-RPC error
  4    MCP_TIMEOUT       no answer before the deadline
  5    MCP_PROCESS_EXIT  the server exited (or CLIENT_CLOSED)
  6    MCP_PROTOCOL      the server broke the protocol (or MCP_FLOOD: past the notification
       flood limit)
  7    MCP_SPAWN         the server could not be started
  8    MCP_HANDSHAKE     initialize failed or the protocol version is unsupported
  9    MCP_BUSY          too many requests in flight (--max-pending)
  10   MCP_HTTP          an HTTP exchange failed (status, network, dropped stream); after a
       401 the message also says what authorization discovery found (the resource, its
       authorization server, S256, registration, scopes) and what went wrong on the way
  11   MCP_SESSION_EXPIRED  the server ended the HTTP session (404)
  12   MCP_URL_REQUIRED  the server needs the user to open a URL first (-32042); the URLs
       are printed on stderr
  13   MCP_QUARANTINED   the server failed too often in a row: approve it once changed
  130  interrupted
Errors are printed on stderr as one line: sonde: CODE: message (see docs/errors.md).`

// ExitStatus ends a run with a given status; Msg (if any) is printed as
// "sonde: Msg".
type ExitStatus struct {
	Code int
	Msg  string
}

// Error is the message printed after "sonde: ".
func (e *ExitStatus) Error() string { return e.Msg }

// UsageError marks a bad command line (exit 2).
type UsageError struct{ Msg string }

// Error is the usage message.
func (e *UsageError) Error() string { return e.Msg }

// Usagef is a usage error with the message msg.
func Usagef(msg string) error { return &UsageError{Msg: msg} }

// CodeExit maps an error code to its exit status.
func CodeExit(code client.Code) int {
	switch code {
	case client.CodeRemote:
		return ExitRemote
	case client.CodeTimeout:
		return ExitTimeout
	case client.CodeProcessExit, client.CodeClosed:
		return ExitExited
	case client.CodeProtocol, client.CodeFlood:
		return ExitProtocol
	case client.CodeSpawn:
		return ExitSpawn
	case client.CodeHandshake:
		return ExitHandshake
	case client.CodeBusy:
		return ExitBusy
	case client.CodeHTTP:
		return ExitHTTP
	case client.CodeExpired:
		return ExitExpired
	case client.CodeURLRequired:
		return ExitURLRequired
	case manager.CodeQuarantined:
		return ExitQuarantined
	case client.CodeAborted:
		return ExitInterrupted
	}
	return ExitUsage
}

// ExitCode picks the exit status for an error that ended a run. An
// interrupted run is 130 whatever the error it caused.
func ExitCode(ctx context.Context, err error) int {
	var st *ExitStatus
	if errors.As(err, &st) {
		return st.Code
	}
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	if code := client.CodeOf(err); code != "" {
		return CodeExit(code)
	}
	return ExitUsage
}

// ErrText is the message printed after "sonde: ". Client errors already
// read "CODE: message".
func ErrText(err error) string {
	return err.Error()
}
