package manager

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

// osEnviron is sonde's environment, the base of a stdio server's.
var osEnviron = os.Environ

// Result is the outcome of a call the manager routed.
type Result struct {
	Server string
	Tool   string
	// ID is the request's id ("" when it got none: refused before it was
	// sent, or the server never started).
	ID     string
	Result *mcp.CallToolResult
	Raw    json.RawMessage
	// Duration is from the call's start (the server's start included) to
	// its outcome.
	Duration time.Duration
}

// Phase is where a call or a server failed.
type Phase string

// The phases.
const (
	PhaseStart Phase = "start" // spawn or handshake
	PhaseCall  Phase = "call"  // the call itself
	PhaseExit  Phase = "exit"  // the server's process ended
)

// CallError is a call that failed: the client's error (its code), with the
// server, the tool and the request's id, the structured Reason when the
// call was stopped rather than answered, and whether its execution is
// uncertain.
type CallError struct {
	Server string
	Tool   string
	ID     string
	// Phase is where it failed: PhaseStart or PhaseCall (PhaseExit for
	// a server's report).
	Phase Phase
	// Reason is why the call was stopped (user cancel, budget stop,
	// process failure), nil when the server answered (an error) or the
	// call's own deadline passed.
	Reason *Reason
	// Uncertain: the tool is not read-only (its annotations do not say
	// readOnlyHint: true) and the call was sent but ended without an
	// answer (cancelled, timed out, the server gone): it may have done its
	// work.
	Uncertain bool
	Duration  time.Duration
	Err       error
}

// Error is the client's error, with the uncertainty said.
func (e *CallError) Error() string {
	msg := e.Err.Error()
	if e.Uncertain {
		msg += client.UncertainNote
	}
	return msg
}

// Unwrap returns the client's error: errors.Is matches its code.
func (e *CallError) Unwrap() error { return e.Err }

// Call calls tool on the named server, starting the server if it is not
// running. The call can be stopped by ctx (a user cancel, or a budget stop
// when ctx's deadline passes) and by Stop, and its error then carries the
// Reason. A result with isError is not an error.
func (m *Manager) Call(ctx context.Context, name, tool string, args any, o client.CallOptions) (*Result, error) {
	start := time.Now()
	res := &Result{Server: name, Tool: tool}
	fail := func(phase Phase, id string, err error, readOnly, sent bool) (*Result, error) {
		ce := &CallError{Server: name, Tool: tool, ID: id, Phase: phase, Duration: time.Since(start), Err: err}
		var r *Reason
		switch {
		case errors.As(err, &r):
			ce.Reason = r
		case client.CodeOf(err) == client.CodeProcessExit || client.CodeOf(err) == client.CodeFlood:
			ce.Reason = &Reason{Kind: ProcessFailure, Detail: err.Error()}
		}
		ce.Uncertain = phase == PhaseCall && client.Uncertain(readOnly, sent, err)
		res.Duration = ce.Duration
		return res, ce
	}
	raw, err := rawArgs(args)
	if err != nil {
		return fail(PhaseCall, "", &client.Error{Code: client.CodeProtocol, Message: "arguments: " + err.Error()}, true, false)
	}
	// The call's own context ignores ctx's end: the hook below turns that
	// end into a Reason, as Stop does, so that every stop has one.
	callCtx, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stop(nil)
	entry := &inflight{stop: stop}
	m.mu.Lock()
	if m.stopping {
		m.mu.Unlock()
		return fail(PhaseStart, "", &client.Error{Code: client.CodeClosed, Message: "server " + name + ": the manager is stopping"}, true, false)
	}
	m.calls[entry] = struct{}{}
	m.callWG.Add(1)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.calls, entry)
		m.mu.Unlock()
		m.callWG.Done()
	}()
	unhook := context.AfterFunc(ctx, func() { stop(reasonOf(ctx)) })
	defer unhook()

	c, err := m.Client(callCtx, name)
	if err != nil {
		return fail(PhaseStart, "", err, true, false)
	}
	readOnly := m.readOnly(callCtx, name, c, tool)
	call := c.GoTool(callCtx, tool, raw, o)
	out, err := call.Wait()
	res.ID = call.ID.String()
	if !call.ID.IsValid() {
		res.ID = ""
	}
	if err != nil {
		return fail(PhaseCall, res.ID, err, readOnly, res.ID != "")
	}
	tr, err := client.ToolResult(tool, out)
	if err != nil {
		return fail(PhaseCall, res.ID, err, true, false)
	}
	res.Result, res.Raw, res.Duration = tr, out, time.Since(start)
	return res, nil
}

// readOnly reports whether the server's tool says readOnlyHint, listing
// the server's tools first when they were never listed (a listing that
// fails leaves the tool unknown: a tool not known to be read-only is
// treated as one with side effects).
func (m *Manager) readOnly(ctx context.Context, name string, c *client.Client, tool string) bool {
	m.mu.Lock()
	tools := m.servers[name].tools
	m.mu.Unlock()
	if tools == nil {
		if listed, err := c.ListTools(ctx); err == nil {
			tools = listed
			m.mu.Lock()
			m.servers[name].tools = listed
			m.mu.Unlock()
		}
	}
	for _, t := range tools {
		if t.Name == tool {
			return t.ReadOnly()
		}
	}
	return false
}
