package serve

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// CodeUnmatched is the JSON-RPC error code of a request the capture has no
// answer for. It is stable: scripts may match on it.
const CodeUnmatched = -32010

// How a request was matched.
const (
	MatchExact = "exact" // same method and the same params (without _meta)
	MatchLoose = "loose" // same method and the same tool, prompt or resource (or same method)
)

// Match finds the recorded request that answers a request with method and
// params: first among those with the same method and the same params
// (ignoring _meta), then among those with the same method and the same
// name (tools/call, prompts/get), uri (resources/*), or for other methods
// the same method alone. Within each, the recorded request used the fewest
// times wins, the earliest on a tie: each recorded answer is played once,
// in recorded order, before any is played again. It returns nil when
// nothing matches. Match is not safe for concurrent use.
func (s *Script) Match(method string, params json.RawMessage) (*Exchange, string) {
	canon, name, _ := canonical(method, params)
	pick := func(ok func(*Exchange) bool) *Exchange {
		var best *Exchange
		for _, ex := range s.Exchanges {
			if ex.Method == method && ok(ex) && (best == nil || ex.used < best.used) {
				best = ex
			}
		}
		return best
	}
	if ex := pick(func(ex *Exchange) bool { return ex.canon == canon }); ex != nil {
		ex.used++
		return ex, MatchExact
	}
	if ex := pick(func(ex *Exchange) bool { return ex.Name == name }); ex != nil {
		ex.used++
		return ex, MatchLoose
	}
	return nil, ""
}

// Available describes the recorded requests, for the error of an unmatched
// one: "tools/call echo ×2, tools/list ×1".
func (s *Script) Available() string {
	counts := map[string]int{}
	var order []string
	for _, ex := range s.Exchanges {
		k := ex.Method
		if ex.Name != "" {
			k += " " + ex.Name
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	if len(order) == 0 {
		return "none"
	}
	sort.Strings(order)
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = k + " ×" + strconv.Itoa(counts[k])
	}
	return strings.Join(parts, ", ")
}

// unmatchedError is the error answered to a request nothing matches.
func (s *Script) unmatchedError(method string, params json.RawMessage) *jsonrpc.Error {
	_, name, _ := canonical(method, params)
	what := method
	if name != "" {
		what += fmt.Sprintf(" %q", name)
	}
	data, _ := json.Marshal(map[string]string{"method": method, "name": name, "recorded": s.Available()})
	return &jsonrpc.Error{
		Code:    CodeUnmatched,
		Message: fmt.Sprintf("sonde replay: the capture has no recorded request matching %s; recorded: %s", what, s.Available()),
		Data:    data,
	}
}

// notification returns the next recorded client notification with method
// not yet used, or nil.
func (s *Script) notification(method string) *Anchor {
	q := s.notes[method]
	if len(q) == 0 {
		return nil
	}
	s.notes[method] = q[1:]
	return q[0]
}

// answer returns the recorded client response with id (to a server
// request), once.
func (s *Script) answer(id jsonrpc.ID) *Anchor {
	a := s.answers[id.String()]
	delete(s.answers, id.String())
	return a
}
