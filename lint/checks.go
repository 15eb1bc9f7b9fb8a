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
	// The decoder names the rules it saw broken (jsonrpc.Broken); a capture
	// keeps them, even for redacted bytes.
	switch {
	case de.Broken&jsonrpc.BrokenNullID != 0:
		l.add(ev, RuleNullID, fmt.Sprintf("request %s has \"id\": null", strconv.Quote(f.Msg.Method)))
	case de.Broken&jsonrpc.BrokenResultAndError != 0:
		l.add(ev, RuleResultAndError, "response for id "+f.Msg.ID.String()+" has both result and error")
	default:
		l.add(ev, RuleInvalidMessage, de.Reason)
	}
}

// verdicts: unknown-id, late-response, duplicate-response and
// undeclared-capability, as the client judged the frame (it knew every id it
// sent, which had ended, and what it declared).
func (l *Linter) verdicts(ev client.Event) {
	f := ev.Frame
	if f.Dir != client.In {
		return
	}
	switch f.Verdict {
	case client.VerdictUnknown:
		l.add(ev, RuleUnknownID, f.Detail)
	case client.VerdictLate:
		// A breakpoint held the request or its answer: the time it was
		// held is not the server's, and neither is the lateness.
		if !l.held[f.Msg.ID] {
			l.add(ev, RuleLateResponse, f.Detail)
		}
	case client.VerdictDuplicate:
		l.add(ev, RuleDuplicateResponse, f.Detail)
	case client.VerdictUndeclared:
		l.add(ev, RuleUndeclared, f.Detail)
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
		if f.Dir == client.In {
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
	case client.Out:
		if !l.initDone && m.Method != mcp.MethodInitialize {
			l.add(ev, RuleBeforeInitialize, m.Method+" sent before the initialize result arrived")
		}
	case client.In:
		if !l.initialized {
			l.add(ev, RuleBeforeInitialize, "the server sent "+m.Method+" before the client's notifications/initialized")
		}
	}
}

// callBeforeInitialized: tools/call between the initialize result and
// notifications/initialized.
func (l *Linter) callBeforeInitialized(ev client.Event) {
	m := &ev.Frame.Msg
	if ev.Frame.Dir != client.Out || m.Method != mcp.MethodToolsCall || !l.started || l.modern {
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
	requester := client.Out
	if f.Dir == client.Out {
		requester = client.In
	}
	s := sideOf(requester)
	if _, active := l.tokens[s][tok]; active || !l.done[s].has(tok) {
		return
	}
	l.add(ev, RuleProgressAfter, "progress for token "+tok.String()+" after its request's response")
}

// versionInFrame: a protocol version in a later initialize result or in a
// message's _meta that differs from the negotiated one. (Only initialize
// results carry protocolVersion; only those and _meta are parsed, so the
// check costs nothing on ordinary frames.)
func (l *Linter) versionInFrame(ev client.Event) {
	f := ev.Frame
	if l.version == "" || f.Err != nil {
		return
	}
	m := &f.Msg
	if m.Kind == jsonrpc.KindResponse {
		if f.Dir != client.In || l.pending[0][m.ID].method != mcp.MethodInitialize {
			return
		}
		if v, ok := resultVersion(m.Result); ok && v != l.version {
			l.add(ev, RuleUnnegotiatedVersion, fmt.Sprintf("a later initialize result says protocolVersion %q; %q was negotiated", v, l.version))
		}
		return
	}
	if !bytes.Contains(m.Params, []byte(metaVersionKey)) {
		return
	}
	if v, ok := metaVersion(m.Params); ok && v != l.version {
		l.add(ev, RuleUnnegotiatedVersion, fmt.Sprintf("_meta says protocol version %q; %q was negotiated", v, l.version))
	}
}

// versionHeader: an MCP-Protocol-Version header that differs from the
// negotiated version.
func (l *Linter) versionHeader(ev client.Event) {
	h := ev.HTTP
	if l.version == "" {
		return
	}
	for _, line := range h.Header {
		dir := client.Out
		rest, ok := strings.CutPrefix(line, "> ")
		if !ok {
			rest, ok = strings.CutPrefix(line, "< ")
			dir = client.In
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

// progressToken returns a request's params._meta.progressToken. It scans
// for the key instead of decoding params (arguments can be large, and
// sonde puts a token on every tools/call).
func progressToken(params json.RawMessage) (jsonrpc.ID, bool) {
	return tokenAfter(params, []byte(`"progressToken"`))
}

// notificationToken returns a progress notification's progressToken.
func notificationToken(params json.RawMessage) (jsonrpc.ID, bool) {
	return tokenAfter(params, []byte(`"progressToken"`))
}

// tokenAfter reads the string or integer value that follows key (a quoted
// object key) in b.
func tokenAfter(b, key []byte) (jsonrpc.ID, bool) {
	i := bytes.Index(b, key)
	if i < 0 {
		return jsonrpc.ID{}, false
	}
	rest := bytes.TrimLeft(b[i+len(key):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return jsonrpc.ID{}, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	end := 0
	switch {
	case len(rest) > 0 && rest[0] == '"':
		for end = 1; end < len(rest) && rest[end] != '"'; end++ {
			if rest[end] == '\\' {
				end++
			}
		}
		end++
	default:
		for end < len(rest) && (rest[end] == '-' || rest[end] >= '0' && rest[end] <= '9') {
			end++
		}
	}
	if end > len(rest) || end == 0 {
		return jsonrpc.ID{}, false
	}
	tok := rest[:end]
	if tok[0] == '"' && bytes.IndexByte(tok, '\\') < 0 {
		return jsonrpc.String(string(tok[1 : len(tok)-1])), true
	}
	if n, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
		return jsonrpc.Int(n), true
	}
	var id jsonrpc.ID
	if id.UnmarshalJSON(tok) != nil || !id.IsValid() {
		return jsonrpc.ID{}, false
	}
	return id, true
}

// resultVersion returns result.protocolVersion (scanned, not decoded).
func resultVersion(result json.RawMessage) (string, bool) {
	id, ok := tokenAfter(result, []byte(`"protocolVersion"`))
	if !ok {
		return "", false
	}
	return id.Str()
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

// taskTerminal: task-terminal-changed. The status of a task of the
// server's, as the server reports it: a CreateTaskResult or Task answering
// sonde's tools/call, tasks/get or tasks/cancel, or
// notifications/tasks/status. Once terminal, it must not change.
func (l *Linter) taskTerminal(ev client.Event) {
	m := &ev.Frame.Msg
	var raw json.RawMessage
	switch m.Kind {
	case jsonrpc.KindNotification:
		if m.Method != mcp.MethodTaskStatus {
			return
		}
		raw = m.Params
	case jsonrpc.KindResponse:
		p, ok := l.pending[0][m.ID]
		if !ok || m.Error != nil {
			return
		}
		switch p.method {
		case mcp.MethodTasksGet, mcp.MethodTasksCancel:
			raw = m.Result
		case mcp.MethodToolsCall:
			// Most answers are plain results: scan before decoding.
			if !bytes.Contains(m.Result, []byte(`"task"`)) {
				return
			}
			var ct struct {
				Task json.RawMessage `json:"task"`
			}
			if json.Unmarshal(m.Result, &ct) != nil || ct.Task == nil {
				return
			}
			raw = ct.Task
		default:
			return
		}
	default:
		return
	}
	var t mcp.Task
	if json.Unmarshal(raw, &t) != nil || t.TaskID == "" || t.Status == "" {
		return
	}
	before, seen := l.tasks[t.TaskID]
	if seen && mcp.TaskTerminal(before) && t.Status != before {
		l.add(ev, RuleTaskTerminal, fmt.Sprintf("task %s was %s, now %s", t.TaskID, before, t.Status))
		return // the terminal status stands
	}
	if !seen && len(l.tasks) >= maxTasks {
		clear(l.tasks)
	}
	l.tasks[t.TaskID] = t.Status
}
