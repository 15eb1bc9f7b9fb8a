// Package chaos is the fault rules of sonde tap --fault: a small rule
// language (action:match,options; docs/chaos.md) and the engine that
// decides, line by line, what a rule does to a frame on its way between a
// host and a server: delay, drop, duplicate, corrupt, answer with an
// error instead of forwarding, add noise or stderr text, hold frames and
// release them reordered, stall a direction, close it. Engine.Apply
// decides for one whole line; a Pipe carries both directions of a session
// through the rules a line at a time, over the writers it is given (the
// tap's, or replay --serve's). It knows nothing of processes. It imports
// only the standard library, jsonrpc and client (for the type of a fault
// action, client.FaultAction).
package chaos

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"time"
)

// Direction is which way a frame goes.
type Direction uint8

// The directions a rule matches.
const (
	Both     Direction = iota // either (a rule that names none)
	ToServer                  // the host's stdin, on its way to the server
	ToHost                    // the server's stdout, on its way to the host
)

// String is the direction as a rule names it.
func (d Direction) String() string {
	switch d {
	case ToServer:
		return "to-server"
	case ToHost:
		return "to-host"
	}
	return "both"
}

// Action is what a rule does to a frame it matches: the client's type, so
// a note's action reaches a capture and the UI as it is.
type Action = client.FaultAction

// The actions.
const (
	Delay     = client.FaultDelay     // hold the frame (and those after it) ms
	Drop      = client.FaultDrop      // never forward the frame
	Duplicate = client.FaultDuplicate // forward it n+1 times
	Corrupt   = client.FaultCorrupt   // change its bytes (how=)
	Error     = client.FaultError     // answer a request with an error instead of forwarding it
	Noise     = client.FaultNoise     // write a non-JSON line to the host before it
	Stderr    = client.FaultStderr    // write text to the host's stderr
	Reorder   = client.FaultReorder   // hold frames and release them reversed or shuffled
	Stall     = client.FaultStall     // forward the frame, then nothing more that way for ms
	Close     = client.FaultClose     // close the stream instead of forwarding the frame
)

var knownKeys = map[string]bool{
	"kind": true, "dir": true, "direction": true, "method": true, "tool": true, "id": true, "every": true, "after": true, "max": true,
	"p": true, "ms": true, "n": true, "how": true, "code": true, "message": true, "text": true,
	"window": true, "order": true, "during": true,
}

// kinds are the words a rule names a frame's kind by.
var kinds = map[string]jsonrpc.Kind{"request": jsonrpc.KindRequest, "response": jsonrpc.KindResponse, "notification": jsonrpc.KindNotification}

var actions = map[Action]bool{Delay: true, Drop: true, Duplicate: true, Corrupt: true, Error: true, Noise: true, Stderr: true, Reorder: true, Stall: true, Close: true}

// The ways corrupt changes a line.
const (
	HowTruncate       = "truncate"         // the first half of the line
	HowBreakJSON      = "break-json"       // a trailing comma before the closing brace
	HowStringID       = "string-id"        // an integer id becomes a string ("7")
	HowResultAndError = "result-and-error" // a response gets both result and error
)

// Rule is one parsed --fault rule.
type Rule struct {
	// N is the rule's number (1-based, in the order given), Text its
	// source.
	N    int
	Text string

	Action Action
	// Match.
	Dir    Direction
	Kind   jsonrpc.Kind // jsonrpc.KindInvalid for any
	Method string       // a request's method; a response's, the method of the request it answers
	Tool   string       // the tool of a tools/call request, or of the request a response answers
	ID     string       // the id as on the wire: 7, or "7" (quoted) for a string id
	Every  int          // only every Nth match (0: all)
	After  int          // only after the first N matches
	Max    int          // acts at most N times (0: no limit)
	P      float64
	pSet   bool
	// During is a time window from the start of the session (the
	// engine's creation): only frames within [From, To) match.
	From, To time.Duration
	during   bool

	// Options.
	MinMS, MaxMS int    // delay: ms=N or ms=LO-HI
	Times        int    // duplicate: n= extra copies (default 1)
	How          string // corrupt
	Code         int64  // error: the JSON-RPC code (default -32603)
	Message      string // error: the message (default "sonde chaos")
	Text2        string // noise, stderr: the text written
	Window       int    // reorder: how many frames are held (default 4)
	Shuffle      bool   // reorder: order=random (else reversed)
}

// ParseError is a rule that cannot be parsed: the rule, the 1-based
// character position of the problem, and what is wrong.
//
// A value over its limit (docs/chaos.md, "Limits") has Err == ErrLimit,
// so errors.Is(err, ErrLimit) tells it from a rule that is malformed.
type ParseError struct {
	Rule string
	Pos  int
	Msg  string
	Err  error // ErrLimit, or nil
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("fault rule %q: at character %d: %s", e.Rule, e.Pos, e.Msg)
}

// Unwrap is ErrLimit for a value over its limit.
func (e *ParseError) Unwrap() error { return e.Err }

// problem is what is wrong with one item: limit when it is a value over
// its limit.
type problem struct {
	msg   string
	limit bool
}

func bad(f string, a ...any) *problem { return &problem{msg: fmt.Sprintf(f, a...)} }

// over is the problem of key's value val over max (what, when not "",
// says the limit's unit).
func over(key, val string, max any, what string) *problem {
	if what != "" {
		what = " " + what
	}
	return &problem{msg: fmt.Sprintf("%s=%s: over the limit of %v%s (docs/chaos.md, \"Limits\")", key, quote(val), max, what), limit: true}
}

// quote quotes a value for an error, cut to MaxValueBytes.
func quote(v string) string {
	if len(v) > MaxValueBytes {
		return strconv.Quote(v[:MaxValueBytes]) + "…"
	}
	return strconv.Quote(v)
}

// Parse parses one rule: action:match,options, for example
// delay:to-host,method=tools/call,ms=3000. n is its number.
func Parse(text string, n int) (*Rule, error) {
	if len(text) > MaxRuleBytes {
		return nil, &ParseError{Rule: text[:64] + "…", Pos: MaxRuleBytes + 1, Msg: fmt.Sprintf("the rule is %d bytes, over the limit of %d (docs/chaos.md, \"Limits\")", len(text), MaxRuleBytes), Err: ErrLimit}
	}
	r := &Rule{N: n, Text: text, Times: 1, Code: -32603, Message: "sonde chaos"}
	fail := func(pos int, f string, a ...any) error {
		return &ParseError{Rule: text, Pos: pos + 1, Msg: fmt.Sprintf(f, a...)}
	}
	failP := func(pos int, p *problem) error {
		e := &ParseError{Rule: text, Pos: pos + 1, Msg: p.msg}
		if p.limit {
			e.Err = ErrLimit
		}
		return e
	}
	act, rest, hasColon := strings.Cut(text, ":")
	r.Action = Action(strings.TrimSpace(act))
	if !actions[r.Action] {
		return nil, fail(0, "unknown action %q (want delay, drop, duplicate, corrupt, error, noise, stderr, reorder, stall or close)", act)
	}
	seen := map[string]bool{}
	if hasColon {
		pos := len(act) + 1
		for _, item := range strings.Split(rest, ",") {
			at := pos
			pos += len(item) + 1
			item = strings.TrimSpace(item)
			if item == "" {
				return nil, fail(at, "empty item")
			}
			key, val, isKV := strings.Cut(item, "=")
			if !isKV {
				if err := r.bare(item); err != "" {
					return nil, fail(at, "%s", err)
				}
				continue
			}
			if seen[key] {
				return nil, fail(at, "%s given twice", key)
			}
			seen[key] = true
			if !knownKeys[key] {
				return nil, fail(at, "unknown option %q", key)
			}
			if p := r.option(key, val); p != nil {
				return nil, failP(at+len(key)+1, p)
			}
		}
	}
	if err := r.check(seen); err != "" {
		return nil, fail(len(text), "%s", err)
	}
	return r, nil
}

// bare is an item without '=': a direction or a kind.
func (r *Rule) bare(item string) string {
	switch item {
	case "to-server", "to-host":
		if r.Dir != Both {
			return "a second direction " + strconv.Quote(item)
		}
		r.Dir = map[string]Direction{"to-server": ToServer, "to-host": ToHost}[item]
	case "request", "response", "notification":
		if r.Kind != jsonrpc.KindInvalid {
			return "a second kind " + strconv.Quote(item)
		}
		r.Kind = kinds[item]
	default:
		return fmt.Sprintf("unknown item %q (want to-server, to-host, request, response, notification or key=value)", item)
	}
	return ""
}

func (r *Rule) option(key, val string) *problem {
	var p *problem
	switch key {
	case "kind":
		if kinds[val] == jsonrpc.KindInvalid {
			return bad("kind=%s: want request, response or notification", quote(val))
		}
		r.Kind = kinds[val]
	case "dir", "direction":
		if val != "to-server" && val != "to-host" {
			return bad("%s=%s: want to-server or to-host", key, quote(val))
		}
		r.Dir = map[string]Direction{"to-server": ToServer, "to-host": ToHost}[val]
	case "method":
		r.Method, p = optValue(key, val)
	case "tool":
		r.Tool, p = optValue(key, val)
	case "id":
		if val == "" {
			return bad("id=: want an id (7, or \"7\" for a string id)")
		}
		r.ID, p = optValue(key, val)
	case "every":
		r.Every, p = optNum(key, val, 1, MaxCount, "")
	case "after":
		r.After, p = optNum(key, val, 0, MaxCount, "")
	case "max":
		r.Max, p = optNum(key, val, 1, MaxCount, "")
	case "p":
		v, e := strconv.ParseFloat(val, 64)
		if e != nil || !(v > 0 && v <= 1) {
			return bad("p=%s: want a probability in (0, 1]", quote(val))
		}
		r.P, r.pSet = v, true
	case "ms":
		return r.msOption(key, val)
	case "n":
		r.Times, p = optNum(key, val, 1, MaxCopies, "copies")
	case "how":
		switch val {
		case HowTruncate, HowBreakJSON, HowStringID, HowResultAndError:
			r.How = val
		default:
			return bad("how=%s: want truncate, break-json, string-id or result-and-error", quote(val))
		}
	case "code":
		return r.codeOption(key, val)
	case "message":
		if len(val) > MaxTextBytes {
			return over(key, val, MaxTextBytes, "bytes")
		}
		r.Message = val
	case "text":
		if len(val) > MaxTextBytes {
			return over(key, val, MaxTextBytes, "bytes")
		}
		r.Text2 = val
	case "during":
		return r.duringOption(key, val)
	case "window":
		r.Window, p = optNum(key, val, 2, MaxWindow, "frames")
	case "order":
		if val != "reverse" && val != "random" {
			return bad("order=%s: want reverse or random", quote(val))
		}
		r.Shuffle = val == "random"
	default:
		return bad("unknown option %s", quote(key))
	}
	return p
}

// optNum is val as an integer in [min, max]; a value past max (or too
// large for an int) is over the limit.
func optNum(key, val string, min, max int, what string) (int, *problem) {
	v, err := strconv.Atoi(val)
	if errors.Is(err, strconv.ErrRange) && v > 0 || err == nil && v > max {
		return 0, over(key, val, max, what)
	}
	if err != nil || v < min {
		return 0, bad("%s=%s: want an integer ≥ %d", key, quote(val), min)
	}
	return v, nil
}

// optValue is a match value, at most MaxValueBytes long.
func optValue(key, val string) (string, *problem) {
	if len(val) > MaxValueBytes {
		return "", over(key, val, MaxValueBytes, "bytes")
	}
	return val, nil
}

// msOption is ms=N or ms=LO-HI, at most MaxMS.
func (r *Rule) msOption(key, val string) *problem {
	lo, hi, isRange := strings.Cut(val, "-")
	a, e1 := strconv.Atoi(lo)
	b, e2 := a, e1
	if isRange {
		b, e2 = strconv.Atoi(hi)
	}
	if errors.Is(e1, strconv.ErrRange) && a > 0 || errors.Is(e2, strconv.ErrRange) && b > 0 || e1 == nil && e2 == nil && max(a, b) > MaxMS {
		return over(key, val, MaxMS, "(1h)")
	}
	if e1 != nil || e2 != nil || a < 0 || b < a {
		return bad("ms=%s: want milliseconds N or a range LO-HI (at most %d)", quote(val), MaxMS)
	}
	r.MinMS, r.MaxMS = a, b
	return nil
}

// codeOption is code=N, within ±MaxCode.
func (r *Rule) codeOption(key, val string) *problem {
	c, e := strconv.ParseInt(val, 10, 64)
	if errors.Is(e, strconv.ErrRange) || e == nil && (c > MaxCode || c < -MaxCode) {
		return over(key, val, "±9007199254740991 (2^53-1)", "")
	}
	if e != nil {
		return bad("code=%s: want an integer", quote(val))
	}
	r.Code = c
	return nil
}

// duringOption is during=FROM-TO, durations from the session's start.
func (r *Rule) duringOption(key, val string) *problem {
	a, b, ok := strings.Cut(val, "-")
	from, e1 := time.ParseDuration(a)
	to, e2 := time.ParseDuration(b)
	if ok && e1 == nil && e2 == nil && from >= 0 && (from > MaxDuring || to > MaxDuring) {
		return over(key, val, "8784h (366 days)", "from the session's start")
	}
	if !ok || e1 != nil || e2 != nil || from < 0 || to <= from {
		return bad("during=%s: want a window FROM-TO from the session's start, e.g. 5s-30s", quote(val))
	}
	r.From, r.To, r.during = from, to, true
	return nil
}

// check holds the options to the action.
func (r *Rule) check(seen map[string]bool) string {
	only := map[string][]Action{
		"ms": {Delay, Reorder, Stall, Duplicate}, "n": {Duplicate}, "window": {Reorder}, "order": {Reorder}, "how": {Corrupt}, "code": {Error}, "message": {Error}, "text": {Noise, Stderr},
	}
	for key, acts := range only {
		if !seen[key] {
			continue
		}
		ok := false
		for _, a := range acts {
			ok = ok || a == r.Action
		}
		if !ok {
			return fmt.Sprintf("%s= does not apply to %s", key, r.Action)
		}
	}
	switch r.Action {
	case Delay, Stall:
		if !seen["ms"] {
			return string(r.Action) + " needs ms=N or ms=LO-HI"
		}
	case Reorder:
		if r.Window == 0 {
			r.Window = 4
		}
		if !seen["ms"] {
			r.MinMS, r.MaxMS = 1000, 1000
		}
		if r.MaxMS != r.MinMS || r.MinMS == 0 {
			return "reorder's ms= is how long the first frame held may wait: one value > 0"
		}
	case Corrupt:
		if r.How == "" {
			return "corrupt needs how=truncate, break-json, string-id or result-and-error"
		}
	case Error:
		if r.Kind != jsonrpc.KindInvalid && r.Kind != jsonrpc.KindRequest {
			return "error answers requests: kind=" + r.Kind.String() + " never matches"
		}
		r.Kind = jsonrpc.KindRequest
	case Noise:
		if r.Text2 == "" {
			r.Text2 = "sonde chaos: noise on stdout"
		}
		if strings.HasPrefix(strings.TrimSpace(r.Text2), "{") || strings.HasPrefix(strings.TrimSpace(r.Text2), "[") {
			return "noise text= must not look like JSON"
		}
	case Stderr:
		if r.Text2 == "" {
			r.Text2 = "sonde chaos: text on stderr"
		}
	}
	return ""
}

// tooMany is the error of rule n (text) when n is past MaxRules.
func tooMany(text string, n int) error {
	if n <= MaxRules {
		return nil
	}
	if len(text) > 64 {
		text = text[:64] + "…"
	}
	return &ParseError{Rule: text, Pos: 1, Msg: fmt.Sprintf("rule %d: over the limit of %d rules (docs/chaos.md, \"Limits\")", n, MaxRules), Err: ErrLimit}
}

// ParseFile parses the rules of a --faults file: one a line, blank lines
// and lines starting with '#' skipped. first is the number of the first
// rule (rules given with --fault before it). name is the file's name, for
// errors.
func ParseFile(r io.Reader, name string, first int) ([]*Rule, error) {
	var rules []*Rule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if err := tooMany(text, first+len(rules)); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		rule, err := Parse(text, first+len(rules))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		rules = append(rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rules, nil
}

// Load parses the rules of the --fault flags (texts, in order) and of a
// --faults file (when file is not ""), numbered in that order, into an
// engine: nil when there are none. Without seedSet a new seed is taken
// (Engine.Seed tells which). The error names the rule, and the file and
// line.
func Load(texts []string, file string, seed uint64, seedSet bool) (*Engine, error) {
	var rules []*Rule
	for _, text := range texts {
		if err := tooMany(text, len(rules)+1); err != nil {
			return nil, err
		}
		r, err := Parse(text, len(rules)+1)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		more, err := ParseFile(f, file, len(rules)+1)
		f.Close()
		if err != nil {
			return nil, err
		}
		rules = append(rules, more...)
	}
	if len(rules) == 0 {
		if seedSet {
			return nil, errors.New("--seed is the seed of fault rules: give --fault or --faults")
		}
		return nil, nil
	}
	if !seedSet {
		seed = uint64(time.Now().UnixNano())
	}
	return New(rules, seed), nil
}
