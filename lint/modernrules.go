package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

// The rules of the modern era (2026-07-28): result-type, the extension
// rules (unnegotiated-extension, malformed-extension) and the MRTR rule
// request-state.

// maxChains bounds the open MRTR chains a Linter remembers.
const maxChains = 4096

// mrtrRound is the input_required answer an MRTR chain waits on: the
// requestState the retry must carry (canonical JSON; nil for none).
type mrtrRound struct {
	state []byte
	seq   uint64
}

// mrtrMethods are the requests an input_required result may answer.
func mrtrMethod(method string) bool {
	return method == mcp.MethodToolsCall || method == mcp.MethodResourcesRead || method == mcp.MethodPromptsGet
}

// requestStateOf returns a request's params.requestState (nil for none).
func requestStateOf(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(`"requestState"`)) {
		return nil
	}
	var p struct {
		State json.RawMessage `json:"requestState"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.State
}

// clientExts returns the extensions a modern request's
// _meta["io.modelcontextprotocol/clientCapabilities"] declares.
func clientExts(params json.RawMessage) []string {
	if !bytes.Contains(params, []byte(`"extensions"`)) {
		return nil
	}
	var exts map[string]json.RawMessage
	if json.Unmarshal(metaExtensions(params), &exts) != nil {
		return nil
	}
	var out []string
	for k := range exts {
		out = append(out, k)
	}
	return out
}

// metaExtensions returns _meta["io.modelcontextprotocol/clientCapabilities"].extensions
// of a modern request's params (nil for none).
func metaExtensions(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var caps struct {
		Extensions json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.Meta[mcp.MetaClientCapabilities], &caps) != nil {
		return nil
	}
	return caps.Extensions
}

// resultType: result-type (and unnegotiated-extension for a task answer
// the client did not ask for). Every result answering a modern request of
// sonde's carries a resultType the spec knows, and input_required only on
// the requests that may take it.
func (l *Linter) resultType(ev client.Event) {
	p, ok := l.answered(ev)
	if !ok || !p.modern {
		return
	}
	var r struct {
		ResultType json.RawMessage `json:"resultType"`
	}
	if json.Unmarshal(ev.Frame.Msg.Result, &r) != nil {
		return // not an object: invalid-message's business
	}
	var rt string
	if t := jsonType(r.ResultType); t != "" && (t != jsString || json.Unmarshal(r.ResultType, &rt) != nil) {
		l.add(ev, RuleResultType, p.method+" result's resultType is "+a(t)+", not a string")
		return
	}
	switch {
	case r.ResultType == nil:
		l.add(ev, RuleResultType, p.method+" result (2026-07-28) has no resultType (a client treats it as \"complete\")")
	case rt == mcp.ResultComplete:
	case rt == mcp.ResultInputRequired:
		if !mrtrMethod(p.method) {
			l.add(ev, RuleResultType, p.method+" result is input_required: only tools/call, resources/read and prompts/get may ask for input")
			return
		}
		l.openRound(ev, p)
	case rt == mcp.ResultTask:
		if !slices.Contains(p.exts, mcp.ExtensionTasks) {
			l.add(ev, RuleUnnegotiatedExt, p.method+" answered with resultType \"task\", but the request's client capabilities did not declare the "+mcp.ExtensionTasks+" extension (a server that needs it answers -32021 MissingRequiredClientCapability)")
		}
	default:
		l.add(ev, RuleResultType, fmt.Sprintf("%s result has resultType %q, which the spec does not know (a client must treat it as invalid)", p.method, bounded(rt, 64)))
	}
}

// openRound remembers the requestState an input_required result gave.
func (l *Linter) openRound(ev client.Event, p pend) {
	var r struct {
		State json.RawMessage `json:"requestState"`
	}
	_ = json.Unmarshal(ev.Frame.Msg.Result, &r)
	round := mrtrRound{seq: ev.Seq}
	if r.State != nil {
		round.state, _ = canonical(r.State)
	}
	key := p.method + "\x00" + p.target
	if _, ok := l.mrtr[key]; !ok && len(l.mrtr) >= maxChains {
		clear(l.mrtr)
	}
	l.mrtr[key] = round
}

// requestState: request-state. A retry of an MRTR chain (the same method
// and name or uri as an input_required answer) carries the requestState
// that answer gave, unchanged; a request carries none where no answer gave
// one.
func (l *Linter) requestState(ev client.Event) {
	f := ev.Frame
	if !mrtrMethod(f.Msg.Method) || !modernRequest(f) {
		return
	}
	params := requestParams(f)
	key := f.Msg.Method + "\x00" + target(f.Msg.Method, params)
	sent := requestStateOf(params)
	round, open := l.mrtr[key]
	delete(l.mrtr, key)
	what := fmt.Sprintf("%s %q", f.Msg.Method, target(f.Msg.Method, params))
	switch {
	case open && round.state != nil && sent == nil:
		l.add(ev, RuleRequestState, fmt.Sprintf("%s: the retry carries no requestState; the input_required answer (event %d) gave one", what, round.seq))
	case open && round.state != nil:
		if got, err := canonical(sent); err != nil || !bytes.Equal(got, round.state) {
			l.add(ev, RuleRequestState, fmt.Sprintf("%s: the retry's requestState differs from the one the input_required answer (event %d) gave: it must be echoed exactly", what, round.seq))
		}
	case open && sent != nil:
		l.add(ev, RuleRequestState, fmt.Sprintf("%s: the retry carries a requestState, but the input_required answer (event %d) gave none", what, round.seq))
	case !open && sent != nil && l.started:
		l.add(ev, RuleRequestState, what+": a requestState no input_required answer gave (invented)")
	}
}

// serverExtensions: malformed-extension on the capabilities of a
// server/discover or initialize result; it also learns the extensions
// server/discover advertises.
func (l *Linter) serverExtensions(ev client.Event) {
	p, ok := l.answered(ev)
	if !ok || (p.method != mcp.MethodServerDiscover && p.method != mcp.MethodInitialize) {
		return
	}
	var r struct {
		Capabilities struct {
			Extensions json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(ev.Frame.Msg.Result, &r) != nil {
		return
	}
	exts, problem := extensionsOf(r.Capabilities.Extensions)
	if problem != "" {
		l.add(ev, RuleMalformedExt, p.method+" result: capabilities.extensions "+problem)
	}
	if p.method == mcp.MethodServerDiscover {
		if exts == nil {
			exts = []string{} // not nil: a discover result was seen
		}
		l.serverExts = exts
	}
}

// clientExtensions: malformed-extension on the client capabilities of a
// request of sonde's (initialize, or a modern request's _meta), and
// unnegotiated-extension for a tasks/* request after a server/discover that
// did not advertise the tasks extension.
func (l *Linter) clientExtensions(ev client.Event) {
	f := ev.Frame
	m := &f.Msg
	if l.serverExts != nil && strings.HasPrefix(m.Method, "tasks/") && !slices.Contains(l.serverExts, mcp.ExtensionTasks) && modernRequest(f) {
		l.add(ev, RuleUnnegotiatedExt, m.Method+": the server's server/discover result did not advertise the "+mcp.ExtensionTasks+" extension")
	}
	params := requestParams(f)
	if !bytes.Contains(params, []byte(`"extensions"`)) {
		return
	}
	var p struct {
		Capabilities struct {
			Extensions json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	where, raw := "capabilities.extensions", json.RawMessage(nil)
	if m.Method == mcp.MethodInitialize {
		if json.Unmarshal(params, &p) != nil {
			return
		}
		raw = p.Capabilities.Extensions
	} else {
		where, raw = "_meta[\""+mcp.MetaClientCapabilities+"\"].extensions", metaExtensions(params)
	}
	if _, problem := extensionsOf(raw); problem != "" {
		l.add(ev, RuleMalformedExt, m.Method+": "+where+" "+problem)
	}
}

// extensionsOf reads a capabilities.extensions value: an object whose keys
// are extension identifiers ("prefix/name", as io.modelcontextprotocol/ui)
// and whose values are the extension's settings (objects). It returns the
// identifiers and what is wrong ("" for nothing; an absent value is fine).
func extensionsOf(raw json.RawMessage) ([]string, string) {
	if raw == nil {
		return nil, ""
	}
	if t := jsonType(raw); t != jsObject {
		return nil, "is " + a(t) + ", not an object of extension settings"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, ""
	}
	var ids, bad []string
	for id, v := range m {
		ids = append(ids, id)
		prefix, name, ok := strings.Cut(id, "/")
		switch {
		case !ok || prefix == "" || name == "" || strings.ContainsAny(id, " \t\r\n"):
			bad = append(bad, fmt.Sprintf("%q is not an extension identifier (prefix/name, as %s)", bounded(id, 64), mcp.ExtensionTasks))
		case jsonType(v) != jsObject:
			bad = append(bad, fmt.Sprintf("%q is %s, not an object of settings", bounded(id, 64), a(jsonType(v))))
		}
	}
	slices.Sort(bad)
	return ids, strings.Join(bad, "; ")
}

// bounded cuts s to n bytes at most, marking the cut.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
