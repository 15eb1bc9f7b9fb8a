package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
	"github.com/sonde-mcp/sonde/transport/oauth"
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
	// CodeURLRequired: the server answered -32042 (URLElicitationRequiredError)
	// with URL elicitations the user must complete before a retry.
	CodeURLRequired Code = "MCP_URL_REQUIRED"
)

// Error is every failure the client reports. It prints as "CODE: message" and
// matches the sentinels below with errors.Is by code.
type Error struct {
	Code    Code
	Message string
	// RPC is the server's JSON-RPC error (CodeRemote, CodeURLRequired),
	// with Data bounded to MaxErrorData bytes (MaxURLElicitationData for
	// -32042).
	RPC *jsonrpc.Error
	// Exit describes how the server ended (CodeProcessExit).
	Exit *Exit
	// HTTP is the failed exchange (CodeHTTP, CodeExpired, and the HTTP
	// failures reported as CodeProtocol or CodeRemote).
	HTTP *ExchangeError
	// Snapshot is what sonde saw of the server at the deadline
	// (CodeTimeout, from the request's deadline or the caller's; snapshot.go).
	Snapshot *Snapshot
	// Err is the underlying cause, if any.
	Err error
}

// MaxErrorData bounds the data of a remote error kept in an Error.
const MaxErrorData = 4096

// MaxURLElicitationData bounds the data of a -32042 error kept in an
// Error: the URLs of its elicitations must survive whole (sign-in URLs
// carry long query strings), so its bound is larger than MaxErrorData.
const MaxURLElicitationData = 64 << 10

// Error returns "CODE: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches a sentinel (an *Error with only a Code) of the same code. An
// MCP_URL_REQUIRED error is a JSON-RPC error of the server too: it also
// matches ErrRemote, and an MCP_FLOOD error matches ErrProtocol.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Message != "" {
		return false
	}
	return t.Code == e.Code || (t.Code == CodeRemote && e.Code == CodeURLRequired) || (t.Code == CodeProtocol && e.Code == CodeFlood)
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
	ErrURLRequired = &Error{Code: CodeURLRequired}
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

// remoteErr is the Error of a JSON-RPC error answer. A -32042 whose data
// holds URL elicitations is MCP_URL_REQUIRED; one whose data does not is
// MCP_ERROR, with the reason in its message and as its cause (it wraps
// mcp.ErrURLElicitationData).
func remoteErr(e *jsonrpc.Error) *Error {
	kept := *e
	limit := MaxErrorData
	if e.Code == mcp.CodeURLElicitationRequired {
		limit = MaxURLElicitationData
	}
	if len(kept.Data) > limit {
		note, _ := json.Marshal(fmt.Sprintf("(%d bytes of error data, not kept)", len(kept.Data)))
		kept.Data = note
	}
	out := &Error{Code: CodeRemote, Message: fmt.Sprintf("server error %s: %s", mcp.CodeText(e.Code), bounded(e.Message, 512)), RPC: &kept}
	if e.Code != mcp.CodeURLElicitationRequired {
		return out
	}
	var els []mcp.ElicitParams
	var perr error
	if len(e.Data) > limit {
		perr = fmt.Errorf("%w: %d bytes of data, more than the %d sonde keeps", mcp.ErrURLElicitationData, len(e.Data), limit)
	} else {
		els, perr = mcp.ParseURLElicitations(e.Data)
	}
	if perr != nil {
		out.Message += " (" + perr.Error() + ")"
		out.Err = perr
		return out
	}
	out.Code = CodeURLRequired
	what := "1 URL"
	if len(els) > 1 {
		what = fmt.Sprintf("%d URLs", len(els))
	}
	out.Message += " (" + what + " to open before a retry)"
	return out
}

// URLElicitations returns the URL elicitations of err when it is the
// server's -32042 (URLElicitationRequiredError) answer to a request, an
// MCP_URL_REQUIRED error: each is a URL the user must open (sonde never
// opens one), and the request may be retried once they are done. ok is
// false for any other error, and for a -32042 whose data holds no valid
// elicitations (that error is MCP_ERROR and its message says why).
func URLElicitations(err error) (els []mcp.ElicitParams, ok bool) {
	var e *Error
	if !errors.As(err, &e) || e.RPC == nil || e.RPC.Code != mcp.CodeURLElicitationRequired {
		return nil, false
	}
	els, perr := mcp.ParseURLElicitations(e.RPC.Data)
	return els, perr == nil
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
		e.Code, e.RPC = r.Code, r.RPC
		e.Message = fmt.Sprintf("%s (HTTP %d)", r.Message, xe.Status)
		if xe.Auth != nil { // a 401 with a JSON-RPC body: what discovery found is kept
			e.Message += "; authorization: " + xe.Auth.Summary()
		}
	}
	return e
}

// Authorization returns what authorization discovery found when err is a
// request refused over HTTP with 401 (or 403 with
// error="insufficient_scope"): the challenge, the protected resource and
// authorization server metadata, and the problems met on the way. It is nil
// for any other error.
func Authorization(err error) *oauth.Discovery {
	var xe *transport.ExchangeError
	if errors.As(err, &xe) {
		return xe.Auth
	}
	return nil
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
