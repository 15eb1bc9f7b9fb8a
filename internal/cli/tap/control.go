package tap

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// The control methods a watcher sends through a session's socket, which
// the tap answers itself (they never reach the server).
const (
	// MethodFaultsList lists the fault rules with their state.
	MethodFaultsList = "sonde/faults/list"
	// MethodFaultsSet turns a rule on or off: {"rule":N,"enabled":bool}.
	MethodFaultsSet = "sonde/faults/set"
)

// CodeNoInject is the JSON-RPC error code of the tap's answer to an
// injected request it does not take (a tap with fault rules, a legacy
// HTTP+SSE session, an HTTP session that has ended): sonde inject reports
// it as a usage error (exit status 2), like a session with no socket.
const CodeNoInject = -32090

// noInject is the message of that answer.
const noInject = "a tap with fault rules (--fault) takes no injected requests; it answers sonde/faults/list and sonde/faults/set"

// FaultsState is the answer to both control methods.
type FaultsState struct {
	Seed  uint64      `json:"seed"`
	Rules []RuleState `json:"rules"`
}

// RuleState is one rule in FaultsState.
type RuleState struct {
	Rule    int    `json:"rule"`
	Text    string `json:"text"`
	Enabled bool   `json:"enabled"`
	Matched int    `json:"matched"`
	Fired   int    `json:"fired"`
}

// control answers a watcher's sonde/faults/* requests itself, from the
// tap's fault rules, and hands every other request to inj (nil: refused,
// errNoInject). Each change is noted in the recording (obs).
type control struct {
	inj    injectTarget
	faults *chaos.Engine
	obs    *client.Observer
	// breaks, when set, answers sonde/breaks/* (breaks.go).
	breaks *hold.Engine
}

// Inject answers req (see control).
func (c *control) Inject(ctx context.Context, req []byte) ([]byte, error) {
	msg, err := jsonrpc.Decode(req)
	if err != nil || msg.Kind != jsonrpc.KindRequest {
		return c.forward(ctx, msg.ID, req)
	}
	if hold.IsMethod(msg.Method) {
		return c.breaksAnswer(msg)
	}
	switch msg.Method {
	case MethodFaultsList:
		return c.answer(msg.ID, nil)
	case MethodFaultsSet:
		var p struct {
			Rule    int   `json:"rule"`
			Enabled *bool `json:"enabled"`
		}
		if err := json.Unmarshal(msg.Params, &p); err != nil || p.Enabled == nil {
			return jsonrpc.EncodeError(msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `sonde/faults/set wants {"rule":N,"enabled":true|false}`})
		}
		return c.answer(msg.ID, func() error { return c.set(p.Rule, *p.Enabled) })
	}
	return c.forward(ctx, msg.ID, req)
}

// forward hands req to the injector, or refuses it (CodeNoInject).
func (c *control) forward(ctx context.Context, id jsonrpc.ID, req []byte) ([]byte, error) {
	if c.inj != nil {
		return c.inj.Inject(ctx, req)
	}
	return jsonrpc.EncodeError(id, &jsonrpc.Error{Code: CodeNoInject, Message: "sonde tap: " + noInject})
}

// answer applies change (if any) and answers with the rules' state.
func (c *control) answer(id jsonrpc.ID, change func() error) ([]byte, error) {
	if c.faults == nil {
		return jsonrpc.EncodeError(id, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "sonde tap: this session has no fault rules (--fault)"})
	}
	if change != nil {
		if err := change(); err != nil {
			return jsonrpc.EncodeError(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sonde tap: " + err.Error()})
		}
	}
	st := FaultsState{Seed: c.faults.Seed(), Rules: []RuleState{}}
	for _, r := range c.faults.States() {
		st.Rules = append(st.Rules, RuleState{Rule: r.Rule.N, Text: r.Rule.Text, Enabled: r.Enabled, Matched: r.Matched, Fired: r.Fired})
	}
	res, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return jsonrpc.EncodeResult(id, res)
}

// set turns rule n on or off and notes it.
func (c *control) set(n int, on bool) error {
	if err := c.faults.SetEnabled(n, on); err != nil {
		return err
	}
	if c.obs != nil {
		state := "off"
		if on {
			state = "on"
		}
		for _, r := range c.faults.Rules() {
			if r.N == n {
				c.obs.Note(fmt.Sprintf("fault rule %d: %s turned %s by a watcher (sonde faults)", n, r.Text, state), time.Now())
			}
		}
	}
	return nil
}

// askFaults asks the live session recorded at path for its fault rules
// (n == 0), or turns rule n on or off first. A refusal of the tap's (no
// fault rules: jsonrpc.CodeMethodNotFound; no rule n) is the
// *jsonrpc.Error it answered; who and hint are askSession's.
func askFaults(path string, n int, on bool, timeout time.Duration, who, hint string) (FaultsState, error) {
	method, params := MethodFaultsList, any(nil)
	if n > 0 {
		method, params = MethodFaultsSet, map[string]any{"rule": n, "enabled": on}
	}
	line, err := requestLine(method, params)
	if err != nil {
		return FaultsState{}, err
	}
	msg, err := askSession(path, line, timeout, who, hint)
	if err != nil {
		return FaultsState{}, err
	}
	if msg.Error != nil {
		return FaultsState{}, msg.Error
	}
	var st FaultsState
	if err := json.Unmarshal(msg.Result, &st); err != nil {
		return FaultsState{}, &client.Error{Code: client.CodeProtocol, Message: who + ": the tap's answer is not a list of rules: " + err.Error(), Err: client.ErrProtocol}
	}
	return st, nil
}
