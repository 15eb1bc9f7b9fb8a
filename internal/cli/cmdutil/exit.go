package cli

import (
	"context"
	"errors"

	"github.com/sonde-mcp/sonde/client"
)

// Exit statuses (docs/errors.md). They are part of sonde's interface.
const (
	exitOK          = 0
	exitToolError   = 1 // a tool result with isError, a failed line in script, replay --against differences
	exitUsage       = 2
	exitRemote      = 3  // MCP_ERROR
	exitTimeout     = 4  // MCP_TIMEOUT
	exitExited      = 5  // MCP_PROCESS_EXIT, CLIENT_CLOSED
	exitProtocol    = 6  // MCP_PROTOCOL
	exitSpawn       = 7  // MCP_SPAWN
	exitHandshake   = 8  // MCP_HANDSHAKE
	exitBusy        = 9  // MCP_BUSY
	exitHTTP        = 10 // MCP_HTTP
	exitExpired     = 11 // MCP_SESSION_EXPIRED
	exitURLRequired = 12 // MCP_URL_REQUIRED
	exitInterrupted = 130
)

// exitStatus ends a run with a given status; msg (if any) is printed as
// "sonde: msg".
type exitStatus struct {
	code int
	msg  string
}

func (e *exitStatus) Error() string { return e.msg }

// usageError marks a bad command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(msg string) error { return &usageError{msg: msg} }

// codeExit maps an error code to its exit status.
func codeExit(code client.Code) int {
	switch code {
	case client.CodeRemote:
		return exitRemote
	case client.CodeTimeout:
		return exitTimeout
	case client.CodeProcessExit, client.CodeClosed:
		return exitExited
	case client.CodeProtocol:
		return exitProtocol
	case client.CodeSpawn:
		return exitSpawn
	case client.CodeHandshake:
		return exitHandshake
	case client.CodeBusy:
		return exitBusy
	case client.CodeHTTP:
		return exitHTTP
	case client.CodeExpired:
		return exitExpired
	case client.CodeURLRequired:
		return exitURLRequired
	case client.CodeAborted:
		return exitInterrupted
	}
	return exitUsage
}

// exitCode picks the exit status for an error that ended a run. An
// interrupted run is 130 whatever the error it caused.
func exitCode(ctx context.Context, err error) int {
	var st *exitStatus
	if errors.As(err, &st) {
		return st.code
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	if code := client.CodeOf(err); code != "" {
		return codeExit(code)
	}
	return exitUsage
}

// errText is the message printed after "sonde: ". Client errors already
// read "CODE: message".
func errText(err error) string {
	return err.Error()
}
