package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// Code is the stable code of a failure. Codes never change meaning; scripts
// and the exit status of the command line depend on them.
type Code string

// The failure codes (see docs/errors.md).
const (
	CodeTimeout     Code = "MCP_TIMEOUT"         // no answer before the deadline
	CodeAborted     Code = "MCP_ABORTED"         // the caller cancelled
	CodeRemote      Code = "MCP_ERROR"           // the server answered with a JSON-RPC error
	CodeProcessExit Code = "MCP_PROCESS_EXIT"    // the server process ended (or its pipes broke)
	CodeClosed      Code = "CLIENT_CLOSED"       // sonde closed the session
	CodeBusy        Code = "MCP_BUSY"            // too many requests in flight
	CodeProtocol    Code = "MCP_PROTOCOL"        // the server broke the protocol
	CodeSpawn       Code = "MCP_SPAWN"           // the server could not be started
	CodeHandshake   Code = "MCP_HANDSHAKE"       // initialize failed or was skipped
	CodeHTTP        Code = "MCP_HTTP"            // an HTTP exchange failed (status, network, stream)
	CodeExpired     Code = "MCP_SESSION_EXPIRED" // the server ended the HTTP session (404)
)

// Error is every failure the client reports. It prints as "CODE: message" and
// matches the sentinels below with errors.Is by code.
type Error struct {
	Code    Code
	Message string
	// RPC is the server's JSON-RPC error (CodeRemote), with Data bounded to
	// MaxErrorData bytes.
	RPC *jsonrpc.Error
	// Exit describes how the server ended (CodeProcessExit).
	Exit *transport.Exit
	// HTTP is the failed exchange (CodeHTTP, CodeExpired, and the HTTP
	// failures reported as CodeProtocol or CodeRemote).
	HTTP *transport.ExchangeError
	// Err is the underlying cause, if any.
	Err error
}

// MaxErrorData bounds the data of a remote error kept in an Error.
const MaxErrorData = 4096

// Error returns "CODE: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches a sentinel (an *Error with only a Code) of the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrTimeout     = &Error{Code: CodeTimeout}
	ErrAborted     = &Error{Code: CodeAborted}
	ErrRemote      = &Error{Code: CodeRemote}
	ErrProcessExit = &Error{Code: CodeProcessExit}
	ErrClosed      = &Error{Code: CodeClosed}
	ErrBusy        = &Error{Code: CodeBusy}
	ErrProtocol    = &Error{Code: CodeProtocol}
	ErrSpawn       = &Error{Code: CodeSpawn}
	ErrHandshake   = &Error{Code: CodeHandshake}
	ErrHTTP        = &Error{Code: CodeHTTP}
	ErrExpired     = &Error{Code: CodeExpired}
)

// CodeOf returns the code of err, or "" when err is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newErr(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func remoteErr(e *jsonrpc.Error) *Error {
	kept := *e
	if len(kept.Data) > MaxErrorData {
		note, _ := json.Marshal(fmt.Sprintf("(%d bytes of error data, not kept)", len(kept.Data)))
		kept.Data = note
	}
	return &Error{Code: CodeRemote, Message: fmt.Sprintf("server error %d: %s", e.Code, bounded(e.Message, 512)), RPC: &kept}
}

func exitErr(x transport.Exit, what string) *Error {
	msg := what + " (" + x.Status() + ")"
	if last := lastLines(x.Stderr, 3, 512); last != "" {
		msg += "; stderr: " + last
	}
	return &Error{Code: CodeProcessExit, Message: msg, Exit: &x}
}

func spawnErr(err error) *Error {
	var xe *transport.ExchangeError
	if errors.As(err, &xe) {
		return exchangeErr(xe)
	}
	return &Error{Code: CodeSpawn, Message: err.Error(), Err: err}
}

// exchangeErr gives a failed HTTP exchange its code: a JSON-RPC error body
// is MCP_ERROR as on stdio, a broken answer MCP_PROTOCOL, a 404 for a
// session MCP_SESSION_EXPIRED, and every other failure MCP_HTTP.
func exchangeErr(xe *transport.ExchangeError) *Error {
	e := &Error{Code: CodeHTTP, Message: xe.Msg, HTTP: xe, Err: xe}
	switch {
	case xe.Kind == transport.ExchangeSessionExpired:
		e.Code = CodeExpired
	case xe.Kind == transport.ExchangeProtocol:
		e.Code = CodeProtocol
	case xe.RPC != nil:
		r := remoteErr(xe.RPC)
		e.Code, e.RPC = CodeRemote, r.RPC
		e.Message = fmt.Sprintf("%s (HTTP %d)", r.Message, xe.Status)
	}
	return e
}

// lastLines returns up to n final non-empty lines of b, at most max bytes,
// joined by " | ".
func lastLines(b []byte, n, max int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			keep = append([]string{s}, keep...)
		}
	}
	return bounded(strings.Join(keep, " | "), max)
}

func bounded(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
