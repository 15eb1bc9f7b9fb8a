package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// One function per rule (or per family of rules decided by the same test).
// Each looks at the frame and at the state before it, and adds findings.

// malformed: not-json, not-object, null-id, result-and-error and
// invalid-message, from the frame's decode error. A line over the size cap
// is not a rule of the protocol (only of sonde's --max-line-bytes) and is
// not reported.
func (l *Linter) malformed(ev client.Event) {
	f := ev.Frame
	var de *jsonrpc.DecodeError
	if !errors.As(f.Err, &de) {
		return
	}
	switch de.Class {
	case jsonrpc.ClassNotJSON:
		l.add(ev, RuleNotJSON, de.Reason)
		return
	case jsonrpc.ClassNotObject:
		l.add(ev, RuleNotObject, de.Reason)
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(bytes.TrimRight(f.Raw, "\r")), &obj) != nil {
		obj = nil // redacted bytes, say: judge by the decode error alone
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	_, hasMethod := obj["method"]
	id, hasID := obj["id"]
	switch {
	case hasMethod && hasID && string(bytes.TrimSpace(id)) == "null":
		l.add(ev, RuleNullID, fmt.Sprintf("request %s has \"id\": null", strconv.Quote(f.Msg.Method)))
	case !hasMethod && hasResult && hasError,
		obj == nil && strings.Contains(de.Reason, "both result and error"):
		l.add(ev, RuleResultAndError, "response for id "+f.Msg.ID.String()+" has both result and error")
	default:
		l.add(ev, RuleInvalidMessage, de.Reason)
	}
}

// verdicts: unknown-id, late-response and duplicate-response, as the client
// judged the frame (it knew every id it sent, and which had ended).
func (l *Linter) verdicts(ev client.Event) {
	f := ev.Frame
	if f.Dir != transport.In {
		return
	}
	switch f.Verdict {
	case client.VerdictUnknown:
		l.add(ev, RuleUnknownID, f.Detail)
	case client.VerdictLate:
		l.add(ev, RuleLateResponse, f.Detail)
	case client.VerdictDuplicate:
		l.add(ev, RuleDuplicateResponse, f.Detail)
	}
}

// notificationWithID: a request whose method is a notification's.
func (l *Linter) notificationWithID(ev client.Event) {
	m := &ev.Frame.Msg
	if strings.HasPrefix(m.Method, "notifications/") {
		l.add(ev, RuleNotificationWithID, fmt.Sprintf("%s carries id %s", m.Method, m.ID))
	}
}

// idReused: a request whose id its sender still has pending.
func (l *Linter) idReused(ev client.Event) {
	f := ev.Frame
	if p, ok := l.pending[sideOf(f.Dir)][f.Msg.ID]; ok {
		who := "sonde"
		if f.Dir == transport.In {
			who = "the server"
		}
		l.add(ev, RuleIDReused, fmt.Sprintf("id %s is still pending (%s, sent by %s at event %d)", f.Msg.ID, p.method, who, p.seq))
	}
}

// beforeInitialize: a request the handshake does not allow yet.
func (l *Linter) beforeInitialize(ev client.Event) {
	m := &ev.Frame.Msg
	if !l.started || l.modern || isModern(m) || m.Method == mcp.MethodPing {
		return
	}
	switch ev.Frame.Dir {
	case transport.Out:
		if !l.initDone && m.Method != mcp.MethodInitialize {
			l.add(ev, RuleBeforeInitialize, m.Method+" sent before the initialize result arrived")
		}
	case transport.In:
		if !l.initialized {
			l.add(ev, RuleBeforeInitialize, "the server sent "+m.Method+" before the client's notifications/initialized")
		}
	}
}

// callBeforeInitialized: tools/call between the initialize result and
// notifications/initialized.
func (l *Linter) callBeforeInitialized(ev client.Event) {
	m := &ev.Frame.Msg
	if ev.Frame.Dir != transport.Out || m.Method != mcp.MethodToolsCall || !l.started || l.modern {
		return
	}
	if l.initDone && !l.initialized {
		l.add(ev, RuleCallBeforeInit, "tools/call sent before notifications/initialized")
	}
}

// progressAfterResponse: progress for a token whose request was answered.
func (l *Linter) progressAfterResponse(ev client.Event) {
	f := ev.Frame
	tok, ok := notificationToken(f.Msg.Params)
	if !ok {
		return
	}
	requester := transport.Out
	if f.Dir == transport.Out {
		requester = transport.In
	}
	s := sideOf(requester)
	if _, active := l.tokens[s][tok]; active || !l.done[s].has(tok) {
		return
	}
	l.add(ev, RuleProgressAfter, "progress for token "+tok.String()+" after its request's response")
}

// versionInFrame: a protocol version in a result or a _meta that differs
// from the negotiated one.
func (l *Linter) versionInFrame(ev client.Event) {
	f := ev.Frame
	if l.version == "" || f.Err != nil || !bytes.Contains(f.Raw, []byte("rotocolVersion")) {
		return
	}
	m := &f.Msg
	if m.Kind == jsonrpc.KindResponse {
		if v, ok := resultVersion(m.Result); ok && v != l.version {
			l.add(ev, RuleUnnegotiatedVersion, fmt.Sprintf("result says protocolVersion %q; %q was negotiated", v, l.version))
		}
		return
	}
	if v, ok := metaVersion(m.Params); ok && v != l.version {
		l.add(ev, RuleUnnegotiatedVersion, fmt.Sprintf("_meta says protocol version %q; %q was negotiated", v, l.version))
	}
}

// checkHTTP: an MCP-Protocol-Version header that differs from the
// negotiated version.
func (l *Linter) checkHTTP(ev client.Event) {
	h := ev.HTTP
	if l.version == "" {
		return
	}
	for _, line := range h.Header {
		dir := transport.Out
		rest, ok := strings.CutPrefix(line, "> ")
		if !ok {
			rest, ok = strings.CutPrefix(line, "< ")
			dir = transport.In
		}
		name, value, found := strings.Cut(rest, ":")
		if !ok || !found || !strings.EqualFold(strings.TrimSpace(name), "MCP-Protocol-Version") {
			continue
		}
		if v := strings.TrimSpace(value); v != l.version {
			l.out = append(l.out, Finding{
				Rule: RuleUnnegotiatedVersion, Seq: ev.Seq, Time: ev.Time, Dir: dir, ID: h.ReqID, Method: h.Method,
				Raw: []byte(line), Detail: fmt.Sprintf("header MCP-Protocol-Version: %s; %q was negotiated", v, l.version),
			})
		}
	}
}

// isModern reports whether a request belongs to the modern era (2026-07-28
// and later: no initialize, the version in every request's _meta).
func isModern(m *jsonrpc.Message) bool {
	return m.Method == mcp.MethodServerDiscover || bytes.Contains(m.Params, []byte(metaVersionKey))
}

const metaVersionKey = "io.modelcontextprotocol/protocolVersion"

// progressToken returns a request's params._meta.progressToken.
func progressToken(params json.RawMessage) (jsonrpc.ID, bool) {
	if !bytes.Contains(params, []byte("progressToken")) {
		return jsonrpc.ID{}, false
	}
	var p struct {
		Meta struct {
			Token jsonrpc.ID `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || !p.Meta.Token.IsValid() {
		return jsonrpc.ID{}, false
	}
	return p.Meta.Token, true
}

// notificationToken returns a progress notification's progressToken.
func notificationToken(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		Token jsonrpc.ID `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) != nil || !p.Token.IsValid() {
		return jsonrpc.ID{}, false
	}
	return p.Token, true
}

// resultVersion returns result.protocolVersion.
func resultVersion(result json.RawMessage) (string, bool) {
	var r struct {
		V *string `json:"protocolVersion"`
	}
	if json.Unmarshal(result, &r) != nil || r.V == nil {
		return "", false
	}
	return *r.V, true
}

// metaVersion returns params._meta["io.modelcontextprotocol/protocolVersion"].
func metaVersion(params json.RawMessage) (string, bool) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", false
	}
	var v string
	if raw, ok := p.Meta[metaVersionKey]; !ok || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}
