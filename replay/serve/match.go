package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// CodeUnmatched is the JSON-RPC error code of a request the capture has no
// answer for. It is stable: scripts may match on it.
const CodeUnmatched = -32010

// How a request was matched.
const (
	MatchExact = "exact" // same method and the same params (without _meta)
	MatchLoose = "loose" // same method and the same tool, prompt or resource (or same method)
	// MatchNewest is a list method answered with the newest recorded answer
	// (same cursor), whatever its other params.
	MatchNewest = "newest"
)

// Repeat says what a request gets once every recorded answer it matches
// has been played.
type Repeat string

// The values of Options.Repeat (--repeat).
const (
	// RepeatCycle plays the recorded answers again, in recorded order (the
	// default).
	RepeatCycle Repeat = "cycle"
	// RepeatLast plays the last recorded answer again and again.
	RepeatLast Repeat = "last"
	// RepeatFail answers the error CodeUnmatched.
	RepeatFail Repeat = "fail"
)

// ParseRepeat reads a --repeat value; "" is RepeatCycle.
func ParseRepeat(s string) (Repeat, error) {
	switch r := Repeat(s); r {
	case "":
		return RepeatCycle, nil
	case RepeatCycle, RepeatLast, RepeatFail:
		return r, nil
	}
	return "", fmt.Errorf("--repeat %q: want cycle, last or fail", s)
}

// Match finds the recorded request that answers a request with method and
// params: first among those with the same method and the same params
// (ignoring _meta), then among those with the same method and the same
// name (tools/call, prompts/get), uri (resources/*) only when the script
// is loose (Options.Loose), or for other methods (initialize) the same
// method alone; a list method (tools/list, prompts/list,
// resources/list, resources/templates/list) that is not an exact match
// gets the newest recorded answer with the same cursor, unless the script
// is strict. Within each step the recorded requests are played in recorded
// order, each once, and then again as the script's Repeat says (cycle: the
// one used the fewest times, the earliest on a tie; last: the last one;
// fail: none, and Match returns nil). It returns nil when nothing matches.
// Match is not safe for concurrent use.
func (s *Script) Match(method string, params json.RawMessage) (*Exchange, string) {
	canon, name, _ := canonical(method, params)
	exhausted := false
	defer func() { s.exhausted = exhausted }()
	pick := func(ok func(*Exchange) bool) *Exchange {
		var best, first, last *Exchange
		for _, ex := range s.Exchanges {
			if ex.Method != method || !ok(ex) {
				continue
			}
			if best == nil || ex.used < best.used {
				best = ex
			}
			if first == nil && ex.used == 0 {
				first = ex
			}
			last = ex
		}
		switch {
		case best == nil || s.repeat == "" || s.repeat == RepeatCycle:
			return best
		case first != nil:
			return first
		case s.repeat == RepeatLast:
			return last
		}
		exhausted = true
		return nil
	}
	if ex := pick(func(ex *Exchange) bool { return ex.canon == canon }); ex != nil {
		ex.used++
		return ex, MatchExact
	}
	if exhausted {
		return nil, ""
	}
	if isList(method) && !s.strict {
		cursor := cursorOf(params)
		var newest *Exchange
		for _, ex := range s.Exchanges {
			if ex.Method == method && cursorOf(ex.Params) == cursor {
				newest = ex
			}
		}
		if newest != nil {
			newest.used++
			return newest, MatchNewest
		}
		return nil, ""
	}
	if name != "" && !s.loose {
		return nil, "" // other arguments of a named call: only with --loose
	}
	if ex := pick(func(ex *Exchange) bool { return ex.Name == name }); ex != nil {
		ex.used++
		return ex, MatchLoose
	}
	return nil, ""
}

// isList reports whether method is one of the list methods.
func isList(method string) bool {
	switch method {
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourceTemplatesList:
		return true
	}
	return false
}

// cursorOf returns the cursor of a list request's params ("" for none).
func cursorOf(params json.RawMessage) string {
	var p struct {
		Cursor any `json:"cursor"`
	}
	if json.Unmarshal(params, &p) != nil || p.Cursor == nil {
		return ""
	}
	b, _ := json.Marshal(p.Cursor)
	return string(b)
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

// unmatchedError is the error answered to a request nothing matches. It
// names the nearest recorded request: the same method and tool, prompt or
// resource (then with the paths where the params differ), else the same
// method with the closest name.
func (s *Script) unmatchedError(method string, params json.RawMessage) *jsonrpc.Error {
	_, name, _ := canonical(method, params)
	what := method
	if name != "" {
		what += fmt.Sprintf(" %q", name)
	}
	data := map[string]any{"method": method, "name": name, "recorded": s.Available()}
	msg := fmt.Sprintf("sonde replay: the capture has no recorded request matching %s", what)
	if near, paths := s.nearest(method, name, params); near != nil {
		nw := near.Method
		if near.Name != "" {
			nw += fmt.Sprintf(" %q", near.Name)
		}
		msg += fmt.Sprintf("; nearest: %s (recorded id %s)", nw, near.ID)
		switch {
		case near.Name == name && len(paths) > 0:
			msg += ", which differs at " + strings.Join(paths, ", ")
		case near.Name == name && s.repeat == RepeatFail:
			msg += ", whose recorded answers were all played (--repeat fail)"
		}
		nd := map[string]any{"method": near.Method, "name": near.Name, "id": near.ID}
		if len(paths) > 0 {
			nd["differs"] = paths
		}
		data["nearest"] = nd
	}
	b, _ := json.Marshal(data)
	return &jsonrpc.Error{
		Code:    CodeUnmatched,
		Message: msg + "; recorded: " + s.Available(),
		Data:    b,
	}
}

// nearest returns the recorded request closest to a request that matched
// nothing, with the paths where their params differ when it has the same
// name; nil when no recorded request has the method.
func (s *Script) nearest(method, name string, params json.RawMessage) (*Exchange, []string) {
	var best *Exchange
	bestDist := -1
	for _, ex := range s.Exchanges {
		if ex.Method != method {
			continue
		}
		d := editDistance(ex.Name, name)
		if best == nil || d < bestDist {
			best, bestDist = ex, d
		}
	}
	if best == nil || best.Name != name {
		return best, nil
	}
	return best, paramDiff(best.Params, params)
}

// paramDiff lists the paths (from the params, without _meta) where two
// params objects differ: "arguments.message", "arguments.n[2]".
func paramDiff(a, b json.RawMessage) []string {
	var out []string
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		if len(out) >= 8 {
			return
		}
		xm, xok := x.(map[string]any)
		ym, yok := y.(map[string]any)
		if xok && yok {
			keys := map[string]bool{}
			for k := range xm {
				keys[k] = true
			}
			for k := range ym {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				if path == "" && k == "_meta" {
					continue
				}
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, xm[k], ym[k])
			}
			return
		}
		xa, xok := x.([]any)
		ya, yok := y.([]any)
		if xok && yok && len(xa) == len(ya) {
			for i := range xa {
				walk(fmt.Sprintf("%s[%d]", path, i), xa[i], ya[i])
			}
			return
		}
		xb, _ := json.Marshal(x)
		yb, _ := json.Marshal(y)
		if string(xb) != string(yb) {
			if path == "" {
				path = "params"
			}
			out = append(out, path)
		}
	}
	walk("", decodeNumber(a), decodeNumber(b))
	return out
}

// decodeNumber decodes JSON keeping numbers exact (nil when it is not JSON).
func decodeNumber(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// editDistance is the Levenshtein distance between two short names.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 200 || len(rb) > 200 {
		if a == b {
			return 0
		}
		return max(len(ra), len(rb))
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
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
// request), once: of the first session that has one.
func (s *Script) answer(id jsonrpc.ID) *Anchor {
	for gen := range s.Sessions {
		k := strconv.Itoa(gen) + " " + id.String()
		if a := s.answers[k]; a != nil {
			delete(s.answers, k)
			return a
		}
	}
	return nil
}
