package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// The rules over list and read results: cache-hint and list-item-type.
// Both look at the result answering a request of sonde's (the method comes
// from the pending request), before track forgets it.

// cachedMethods are the results that carry cache hints in 2026-07-28
// (SEP-2549): the list results, resources/read and server/discover.
var cachedMethods = [...]string{
	mcp.MethodToolsList, mcp.MethodResourcesList, mcp.MethodResourceTemplatesList,
	mcp.MethodPromptsList, mcp.MethodResourcesRead, mcp.MethodServerDiscover,
}

func cached(method string) bool {
	for _, m := range cachedMethods {
		if m == method {
			return true
		}
	}
	return false
}

// modernRev reports whether a revision is 2026-07-28 or later (revisions
// are dates: their text sorts as they do).
func modernRev(v string) bool { return len(v) == len(mcp.ModernVersion) && v >= mcp.ModernVersion }

// modernRequest reports whether a request carries a 2026-07-28 or later
// version in its _meta. A live frame of sonde's own may carry its params
// only in its bytes: they are read from there when the message has none.
func modernRequest(f *client.FrameInfo) bool {
	if !bytes.Contains(f.Raw, []byte(metaVersionKey)) && !bytes.Contains(f.Msg.Params, []byte(metaVersionKey)) {
		return false
	}
	params := f.Msg.Params
	if len(params) == 0 {
		var r struct {
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(f.Raw, &r) != nil {
			return false
		}
		params = r.Params
	}
	v, _ := metaVersion(params)
	return modernRev(v)
}

// answered returns the pending request of sonde's that a successful
// response from the server answers.
func (l *Linter) answered(ev client.Event) (pend, bool) {
	f := ev.Frame
	m := &f.Msg
	if f.Err != nil || f.Dir != client.In || m.Kind != jsonrpc.KindResponse || m.Error != nil || len(m.Result) == 0 {
		return pend{}, false
	}
	p, ok := l.pending[0][m.ID]
	return p, ok
}

// cacheHint: cache-hint. A result of a modern session's list or read
// request, or of server/discover, without ttlMs (a non-negative integer)
// and cacheScope (a string).
func (l *Linter) cacheHint(ev client.Event) {
	p, ok := l.answered(ev)
	if !ok || !cached(p.method) || !(p.modern || p.method == mcp.MethodServerDiscover) {
		return
	}
	if msg := cacheHintProblem(ev.Frame.Msg.Result); msg != "" {
		if p.method == mcp.MethodToolsList {
			msg += "; Claude Code drops a whole tools/list without them"
		}
		l.add(ev, RuleCacheHint, fmt.Sprintf("%s result (2026-07-28): %s", p.method, msg))
	}
}

// cacheHintProblem says what is wrong with a result's cache hints ("" for
// nothing).
func cacheHintProblem(result json.RawMessage) string {
	var r struct {
		TTL   json.RawMessage `json:"ttlMs"`
		Scope json.RawMessage `json:"cacheScope"`
	}
	if json.Unmarshal(result, &r) != nil {
		return "" // not an object: invalid-message's business
	}
	var problems []string
	switch t := jsonType(r.TTL); {
	case r.TTL == nil:
		problems = append(problems, "no ttlMs")
	case t != jsNumber:
		problems = append(problems, "ttlMs is "+a(t)+", not a number")
	default:
		if !nonNegInt(r.TTL) {
			problems = append(problems, "ttlMs is "+string(r.TTL)+", not a non-negative integer of milliseconds")
		}
	}
	switch t := jsonType(r.Scope); {
	case r.Scope == nil:
		problems = append(problems, "no cacheScope")
	case t != jsString:
		problems = append(problems, "cacheScope is "+a(t)+", not a string")
	}
	return strings.Join(problems, ", ")
}

// nonNegInt reports whether a JSON number is an integer ≥ 0 (1e3 and 5.0
// are integers too).
func nonNegInt(n []byte) bool {
	var f float64
	if json.Unmarshal(n, &f) != nil {
		return false
	}
	return f >= 0 && f == math.Trunc(f)
}

// jsonType names the JSON type of a value ("" for none).
func jsonType(v json.RawMessage) string {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		return jsString
	case '{':
		return jsObject
	case '[':
		return jsArray
	case 't', 'f':
		return jsBool
	case 'n':
		return jsNull
	}
	return jsNumber
}

// listItemType: list-item-type. A list result with a value of the wrong
// JSON type in one of its items, which makes strict clients drop the whole
// list.
func (l *Linter) listItemType(ev client.Event) {
	p, ok := l.answered(ev)
	if !ok {
		return
	}
	key, shape := listShape(p.method)
	if shape == nil {
		return
	}
	bad := listTypeErrors(ev.Frame.Msg.Result, key, shape)
	if len(bad) == 0 {
		return
	}
	more := ""
	if len(bad) > maxNamed {
		bad, more = bad[:maxNamed], fmt.Sprintf(" (and %d more)", len(bad)-maxNamed)
	}
	l.add(ev, RuleListItemType, fmt.Sprintf("%s: %s%s; %s", p.method, strings.Join(bad, "; "), more, losers(p.method)))
}

// maxNamed bounds the fields a list-item-type finding names.
const maxNamed = 3

// losers says which clients lose the list, as observed (mcpsnoop's
// docs/CI.md, for tools/list with readOnlyHint: "true"; see docs/lint.md).
func losers(method string) string {
	if method == mcp.MethodToolsList {
		return "strict clients drop the whole list: the TS SDK 1.32.1 rejects it, the Go SDK 1.8.0 fails to decode it, Claude Code 2.1.292 shows no tools (the Python SDK 2.3.0 accepts it)"
	}
	return "a client that validates the result against the schema (as the TS and Go SDKs do for tools/list) drops the whole list"
}
