package hold

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// The control methods a watcher sends through a session's socket (the one
// sonde inject and sonde faults use); the session answers them itself,
// from its Engine (Control), and they never reach the server.
const (
	// MethodList: {} → State.
	MethodList = "sonde/breaks/list"
	// MethodAdd: {"expr":Q} → State.
	MethodAdd = "sonde/breaks/add"
	// MethodRemove: {"n":N} → State.
	MethodRemove = "sonde/breaks/rm"
	// MethodEnable: {"n":N,"enabled":bool} → State.
	MethodEnable = "sonde/breaks/set"
	// MethodRelease: {"handles":[…]} in that order, or {"all":true} → State.
	MethodRelease = "sonde/breaks/release"
	// MethodDrop: {"handle":H} → State.
	MethodDrop = "sonde/breaks/drop"
	// MethodEdit: {"handle":H,"frame":MSG} → State.
	MethodEdit = "sonde/breaks/edit"
	// MethodAnswer: {"handle":H,"result":V} or {"handle":H,"error":{"code":C,"message":M}} → State.
	MethodAnswer = "sonde/breaks/answer"
	// MethodWatch: {} → State. The connection counts as a watcher
	// (Attach) until it closes: then, if it was the last, everything held
	// is released. The session's socket server handles it (Control does
	// not: it has no connection).
	MethodWatch = "sonde/breaks/watch"
)

// IsMethod reports whether method is one of the control methods above.
func IsMethod(method string) bool { return strings.HasPrefix(method, "sonde/breaks/") }

// State is the answer to every control method: the breakpoints and the
// frames held after it.
type State struct {
	TimeoutMS   int64        `json:"timeout_ms"`
	Breakpoints []Breakpoint `json:"breakpoints"`
	Held        []Held       `json:"held"`
}

// State returns the breakpoints and the frames held now.
func (e *Engine) State() State {
	s := State{Breakpoints: e.Breakpoints(), Held: e.List()}
	if e.opts.Timeout > 0 {
		s.TimeoutMS = e.opts.Timeout.Milliseconds()
	}
	return s
}

type params struct {
	Expr    string          `json:"expr"`
	N       int             `json:"n"`
	Enabled *bool           `json:"enabled"`
	Handles []string        `json:"handles"`
	All     bool            `json:"all"`
	Handle  string          `json:"handle"`
	Frame   json.RawMessage `json:"frame"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// Control carries out one control method for by (HoldBySocket, or
// HoldByAgent) and returns the State after it, or a JSON-RPC error to
// answer with: the Engine's refusals keep their codes (CodeNoHandle…),
// bad params are CodeInvalidParams, an unknown method CodeMethodNotFound.
func (e *Engine) Control(by client.HoldBy, method string, raw json.RawMessage) (State, *jsonrpc.Error) {
	var p params
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &p); err != nil {
			return State{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": params: " + err.Error()}
		}
	}
	var err error
	switch method {
	case MethodList, MethodWatch:
	case MethodAdd:
		_, err = e.Add(p.Expr)
	case MethodRemove:
		err = e.Remove(p.N)
	case MethodEnable:
		if p.Enabled == nil {
			return State{}, invalid(method, `{"n":N,"enabled":true|false}`)
		}
		err = e.SetEnabled(p.N, *p.Enabled)
	case MethodRelease:
		switch {
		case p.All:
			err = e.ReleaseAll(by)
		case len(p.Handles) == 0:
			return State{}, invalid(method, `{"handles":["h1",…]} or {"all":true}`)
		default:
			err = e.Release(by, p.Handles...)
		}
	case MethodDrop:
		err = e.Drop(by, p.Handle)
	case MethodEdit:
		if len(p.Frame) == 0 {
			return State{}, invalid(method, `{"handle":H,"frame":MESSAGE}`)
		}
		err = e.Edit(by, p.Handle, p.Frame)
	case MethodAnswer:
		if (len(p.Result) == 0) == (p.Error == nil) {
			return State{}, invalid(method, `{"handle":H,"result":VALUE} or {"handle":H,"error":{"code":C,"message":M}}`)
		}
		err = e.Answer(by, p.Handle, p.Result, p.Error)
	default:
		return State{}, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no control method " + method}
	}
	if err != nil {
		var he *Error
		if errors.As(err, &he) {
			return State{}, &jsonrpc.Error{Code: he.Code, Message: he.Msg}
		}
		return State{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return e.State(), nil
}

func invalid(method, want string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + " wants " + want}
}
