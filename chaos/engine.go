package chaos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// maxTracked bounds the requests remembered per direction (for the method
// and tool of the responses that answer them).
const maxTracked = 16384

// Effect is what the rules do to one line. A line no rule matched has
// Lines == [the line] and nothing else set: the caller writes it as it
// came.
type Effect struct {
	// Lines are written on in the line's direction, in order, each
	// followed by "\n" (empty when the line is dropped or answered).
	Lines [][]byte
	// Delay is how long to wait before writing Lines.
	Delay time.Duration
	// Stall is how long to wait after writing them (nothing more goes
	// this way meanwhile).
	Stall time.Duration
	// Close, when set, is the close rule that closes the direction's
	// output instead of writing Lines (the host's stdout, or the server's
	// stdin; over HTTP the stream, or the session): what comes after is
	// discarded.
	Close *Rule
	// Back are lines written the other way (an error answer to the
	// sender of a request), each followed by "\n".
	Back [][]byte
	// ToHost are lines for the host's stdout when the line goes to the
	// server (noise); for a line going to the host they are in Lines.
	ToHost [][]byte
	// Stderr is text for the host's stderr.
	Stderr []byte
	// Notes say what each rule that fired did.
	Notes []Note
	// Later are copies to write LaterBy after Lines (duplicate with ms=),
	// while the direction carries on.
	Later   [][]byte
	LaterBy time.Duration
	// LaterRule is the duplicate rule that sent the last of Later.
	LaterRule *Rule
	// Hold, when set, is the reorder rule that holds Lines: the caller
	// keeps them with the others that rule holds, and writes them all
	// (Release) when Hold.Window are held or Hold.MinMS after the first.
	Hold *Rule
}

// Matched reports whether a rule fired.
func (e Effect) Matched() bool { return len(e.Notes) > 0 }

type reqInfo struct{ method, tool string }

// Engine applies rules to lines. It is safe for use by the two
// directions' forwarders at once.
type Engine struct {
	rules []*Rule
	seed  uint64
	start time.Time

	mu      sync.Mutex
	matches []int                 // per rule: frames its filters matched
	fired   []int                 // per rule: times it acted (for max=)
	off     []bool                // per rule: turned off (SetEnabled)
	rng     map[[2]int]*rand.Rand // per rule and direction
	reqs    [3]map[string]reqInfo // by the direction the request went
}

// New returns an engine over rules; seed fixes the draws of p= rules and
// of delay ranges (per rule and direction, so a run with the same seed and
// the same frames makes the same choices).
func New(rules []*Rule, seed uint64) *Engine {
	e := &Engine{rules: rules, seed: seed, start: time.Now(), matches: make([]int, len(rules)), fired: make([]int, len(rules)), off: make([]bool, len(rules)), rng: map[[2]int]*rand.Rand{}}
	for i := range e.reqs {
		e.reqs[i] = map[string]reqInfo{}
	}
	return e
}

// Rules are the engine's rules.
func (e *Engine) Rules() []*Rule { return e.rules }

// ErrNoRule is returned by SetEnabled for a rule number the engine does
// not have.
var ErrNoRule = errors.New("no such fault rule")

// RuleState is a rule and what it has done so far.
type RuleState struct {
	Rule    *Rule
	Enabled bool
	Matched int // frames its match items held for
	Fired   int // times it acted
}

// States returns each rule's state, in the rules' order.
func (e *Engine) States() []RuleState {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]RuleState, len(e.rules))
	for i, r := range e.rules {
		out[i] = RuleState{Rule: r, Enabled: !e.off[i], Matched: e.matches[i], Fired: e.fired[i]}
	}
	return out
}

// SetEnabled turns rule n (its number, from 1) on or off while the session
// runs: a rule turned off matches nothing (and counts nothing) until it is
// turned on again; frames a reorder rule holds are still released.
func (e *Engine) SetEnabled(n int, on bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, r := range e.rules {
		if r.N == n {
			e.off[i] = !on
			return nil
		}
	}
	return fmt.Errorf("%w: %d (the rules are numbered 1 to %d)", ErrNoRule, n, len(e.rules))
}

// Seed is the engine's seed.
func (e *Engine) Seed() uint64 { return e.seed }

func (e *Engine) rand(rule int, d Direction) *rand.Rand {
	k := [2]int{rule, int(d)}
	r := e.rng[k]
	if r == nil {
		r = rand.New(rand.NewPCG(e.seed, uint64(rule)<<8|uint64(d)))
		e.rng[k] = r
	}
	return r
}

// frame is what the rules match on.
type frame struct {
	msg    jsonrpc.Message
	ok     bool
	kind   jsonrpc.Kind
	method string
	tool   string
	id     string
	hasID  bool
}

func other(d Direction) Direction {
	if d == ToServer {
		return ToHost
	}
	return ToServer
}

// classify decodes line and tracks requests (under e.mu).
func (e *Engine) classify(d Direction, line []byte) frame {
	var f frame
	m, err := jsonrpc.Decode(line)
	if err != nil {
		return f
	}
	f.msg, f.ok = m, true
	switch m.Kind {
	case jsonrpc.KindRequest:
		f.kind, f.method, f.id, f.hasID = jsonrpc.KindRequest, m.Method, m.ID.String(), true
		if m.Method == "tools/call" {
			var p struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				f.tool = p.Name
			}
		}
		// Tracked only when no value is longer than a rule's can be (no
		// rule matches it anyway): what a peer's ids, methods and tool
		// names hold here stays bounded.
		if len(f.id) <= MaxValueBytes {
			reqs := e.reqs[d]
			if len(reqs) >= maxTracked {
				for k := range reqs {
					delete(reqs, k)
					break
				}
			}
			reqs[f.id] = reqInfo{short(f.method), short(f.tool)}
		}
	case jsonrpc.KindNotification:
		f.kind, f.method = jsonrpc.KindNotification, m.Method
	case jsonrpc.KindResponse:
		f.kind, f.id, f.hasID = jsonrpc.KindResponse, m.ID.String(), true
		reqs := e.reqs[other(d)]
		if q, ok := reqs[f.id]; ok {
			f.method, f.tool = q.method, q.tool
			delete(reqs, f.id)
		}
	}
	return f
}

// short is v, or "" when it is longer than any rule's match value (then
// it matches no rule that names one).
func short(v string) string {
	if len(v) > MaxValueBytes {
		return ""
	}
	return v
}

func (r *Rule) filters(d Direction, f *frame) bool {
	if r.Dir != Both && r.Dir != d {
		return false
	}
	if r.Kind != jsonrpc.KindInvalid && r.Kind != f.kind {
		return false
	}
	if r.Method != "" && r.Method != f.method {
		return false
	}
	if r.Tool != "" && r.Tool != f.tool {
		return false
	}
	if r.ID != "" && (!f.hasID || r.ID != f.id) {
		return false
	}
	return true
}

// inWindow reports whether now is within r's during= window (always
// without one).
func (r *Rule) inWindow(since time.Duration) bool {
	return !r.during || since >= r.From && since < r.To
}

// Note says what one rule did to one frame: in words (Text: "fault rule
// N (RULE) dropped the response to id 7 (tools/call echo) to-host", the
// form docs/chaos.md shows), and as fields a consumer can act on without
// reading the words.
type Note struct {
	Text   string
	Rule   int    // the rule's number
	Action Action // what it did
	Dir    Direction
	// Kind is the frame's kind (request, response, notification),
	// jsonrpc.KindInvalid for a line that is not a JSON-RPC message (and
	// for a release of held frames).
	Kind jsonrpc.Kind
	// ID is the frame's id (a response's is the id of the request it
	// answers); invalid when it has none.
	ID jsonrpc.ID
	// Method is a request's or notification's method, or for a response
	// the method of the request it answers (when known).
	Method string
}

// note is the Note of rule r, going d, that did what did says (no frame
// named: a release of held frames).
func (r *Rule) note(d Direction, did string) Note {
	return Note{Text: fmt.Sprintf("fault rule %d (%s) %s", r.N, r.Text, did), Rule: r.N, Action: r.Action, Dir: d}
}

// note is the Note of rule r acting on f going d.
func (f *frame) note(r *Rule, d Direction, did string) Note {
	n := r.note(d, did)
	n.Kind, n.Method = f.kind, f.method
	if f.hasID {
		n.ID = f.msg.ID
	}
	return n
}

// describe names a frame in a note: "the response to id 7 (tools/call
// echo)".
func (f *frame) describe() string {
	if !f.ok {
		return "a line that is not a JSON-RPC message"
	}
	what := ""
	switch f.kind {
	case jsonrpc.KindRequest:
		what = "the request id " + clip(f.id)
	case jsonrpc.KindResponse:
		what = "the response to id " + clip(f.id)
	default:
		what = "a notification"
	}
	if f.method != "" {
		what += " (" + clip(f.method)
		if f.tool != "" {
			what += " " + clip(f.tool)
		}
		what += ")"
	}
	return what
}

// clip cuts a frame's value to MaxValueBytes for a note (a note per rule
// that fires: a frame with a long id must not make each one that long).
func clip(v string) string {
	if len(v) <= MaxValueBytes {
		return v
	}
	return v[:MaxValueBytes] + "…"
}

// Apply runs the rules over one line going d (without its "\n"; a "\r"
// before it is part of the line), in the order they were given: each rule
// that matches acts on the line as the rules before it left it; drop and
// error end the line's way (the rules after them do not see it).
func (e *Engine) Apply(d Direction, line []byte) Effect {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.classify(d, line)
	eff := Effect{Lines: [][]byte{line}}
	copies := 0 // what the duplicate rules have added, at most MaxCopies
	for i, r := range e.rules {
		if e.off[i] || !r.filters(d, &f) || !r.inWindow(time.Since(e.start)) {
			continue
		}
		if !e.fires(i, r, d) {
			continue
		}
		note := func(did string) {
			eff.Notes = append(eff.Notes, f.note(r, d, did))
		}
		switch r.Action {
		case Delay:
			ms := r.draw(e.rand(i, d))
			var cut string
			eff.Delay, cut = addUpTo(eff.Delay, ms, "delays")
			note(fmt.Sprintf("delayed %s %s by %dms%s", f.describe(), d, ms, cut))
		case Drop:
			note(fmt.Sprintf("dropped %s %s", f.describe(), d))
			eff.Lines = nil
			return eff
		case Duplicate:
			copies = e.duplicate(i, r, d, &f, &eff, copies, note)
		case Corrupt:
			corruptLines(r, d, &f, &eff, note)
		case Error:
			if !f.ok || f.kind != jsonrpc.KindRequest {
				continue
			}
			ans, err := jsonrpc.EncodeError(f.msg.ID, &jsonrpc.Error{Code: r.Code, Message: r.Message})
			if err != nil {
				continue
			}
			eff.Lines = nil
			eff.Back = append(eff.Back, ans)
			note(fmt.Sprintf("answered %s with error %d %q instead of forwarding it %s", f.describe(), r.Code, r.Message, d))
			return eff
		case Noise:
			if d == ToHost {
				eff.Lines = append([][]byte{[]byte(r.Text2)}, eff.Lines...)
			} else {
				eff.ToHost = append(eff.ToHost, []byte(r.Text2))
			}
			note(fmt.Sprintf("wrote a noise line to the host (at %s %s)", f.describe(), d))
		case Stderr:
			eff.Stderr = append(append(eff.Stderr, r.Text2...), '\n')
			note(fmt.Sprintf("wrote to the host's stderr (at %s %s)", f.describe(), d))
		case Stall:
			ms := r.draw(e.rand(i, d))
			var cut string
			eff.Stall, cut = addUpTo(eff.Stall, ms, "stalls")
			note(fmt.Sprintf("stalled %s for %dms after %s%s", d, ms, f.describe(), cut))
		case Close:
			what := "the host's stdout"
			if d == ToServer {
				what = "the server's stdin"
			}
			note(fmt.Sprintf("closed %s instead of forwarding %s %s", what, f.describe(), d))
			eff.Lines, eff.Close = nil, r
			return eff
		case Reorder:
			note(fmt.Sprintf("held %s %s to reorder it", f.describe(), d))
			eff.Hold = r
			return eff
		}
	}
	return eff
}

// fires counts a match of rule i (r) going d and reports whether the rule
// acts on it: past after=, on every= and p=, under max=.
func (e *Engine) fires(i int, r *Rule, d Direction) bool {
	e.matches[i]++
	m := e.matches[i]
	if m <= r.After {
		return false
	}
	if r.Every > 0 && (m-r.After)%r.Every != 0 {
		return false
	}
	if r.pSet && e.rand(i, d).Float64() >= r.P {
		return false
	}
	if r.Max > 0 && e.fired[i] >= r.Max {
		return false
	}
	e.fired[i]++
	return true
}

// duplicate is rule i (r, a duplicate) acting on frame f: its copies of the
// line as it is now, at once or ms= later; copies is what the duplicate
// rules added before it, and the result what they have added with it.
func (e *Engine) duplicate(i int, r *Rule, d Direction, f *frame, eff *Effect, copies int, note func(string)) int {
	cur := eff.Lines[len(eff.Lines)-1]
	n := min(r.Times, MaxCopies-copies)
	copies += n
	cut := ""
	if n < r.Times {
		cut = fmt.Sprintf(" (not %d: one frame gets at most %d copies from all the rules)", r.Times, MaxCopies)
	}
	if r.MaxMS > 0 {
		ms := r.draw(e.rand(i, d))
		for range n {
			eff.Later = append(eff.Later, cur)
		}
		eff.LaterBy, eff.LaterRule = time.Duration(ms)*time.Millisecond, r
		note(fmt.Sprintf("sent %s %s %d more time(s), %dms later%s", f.describe(), d, n, ms, cut))
		return copies
	}
	for range n {
		eff.Lines = append(eff.Lines, cur)
	}
	note(fmt.Sprintf("sent %s %s %d more time(s)%s", f.describe(), d, n, cut))
	return copies
}

// corruptLines is rule r (a corrupt) acting on frame f: the line and each
// copy of it changed.
func corruptLines(r *Rule, d Direction, f *frame, eff *Effect, note func(string)) {
	last := len(eff.Lines) - 1
	out, what := corrupt(eff.Lines[last], r.How)
	if out == nil {
		note(fmt.Sprintf("left %s %s unchanged: %s", f.describe(), d, what))
		return
	}
	// The copies are the line itself (the same bytes, not equal
	// ones): found without reading them.
	was := eff.Lines[last]
	for j := range eff.Lines {
		if same(eff.Lines[j], was) {
			eff.Lines[j] = out
		}
	}
	note(fmt.Sprintf("corrupted %s %s: %s", f.describe(), d, what))
}

// draw is the rule's ms=: the value, or one drawn from its range.
func (r *Rule) draw(rng *rand.Rand) int {
	ms := r.MinMS
	if r.MaxMS > r.MinMS {
		ms += rng.IntN(r.MaxMS - r.MinMS + 1)
	}
	return ms
}

// addUpTo adds ms to total, up to MaxDelay, and says so when it cuts.
func addUpTo(total time.Duration, ms int, what string) (time.Duration, string) {
	sum := total + time.Duration(ms)*time.Millisecond
	if sum <= MaxDelay {
		return sum, ""
	}
	return MaxDelay, fmt.Sprintf(" (cut to %v in all: one frame's %s add up to at most %v)", MaxDelay-total, what, MaxDelay)
}

// same reports whether a and b are the same bytes in memory (a copy that
// duplicate added is the line itself).
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Release orders the frames a reorder rule held (each a slice of lines),
// for writing: reversed, or shuffled with the rule's draws (order=random).
func (e *Engine) Release(r *Rule, d Direction, held [][][]byte) [][][]byte {
	out := make([][][]byte, len(held))
	copy(out, held)
	if !r.Shuffle {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	i := e.index(r)
	if i < 0 {
		return out
	}
	rng := e.rand(i, d)
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

func (e *Engine) index(r *Rule) int {
	for i, x := range e.rules {
		if x == r {
			return i
		}
	}
	return -1
}

// corrupt changes line as how says; nil (and why) when it cannot.
func corrupt(line []byte, how string) ([]byte, string) {
	body := bytes.TrimRight(line, "\r")
	cr := line[len(body):]
	body = bytes.TrimRight(body, " \t")
	switch how {
	case HowTruncate:
		if len(line) < 2 {
			return nil, "too short to truncate"
		}
		return append([]byte(nil), line[:len(line)/2]...), fmt.Sprintf("truncated to %d of %d bytes", len(line)/2, len(line))
	case HowBreakJSON:
		if len(body) == 0 || body[len(body)-1] != '}' {
			return nil, "not a JSON object"
		}
		return join(body[:len(body)-1], []byte(",}"), cr), "a trailing comma before the closing brace"
	case HowResultAndError:
		m, err := jsonrpc.Decode(line)
		if err != nil || m.Kind != jsonrpc.KindResponse || body[len(body)-1] != '}' {
			return nil, "not a response"
		}
		add := `,"error":{"code":-32603,"message":"sonde chaos"}`
		what := "an error added next to the result"
		if m.Error != nil {
			add, what = `,"result":{}`, "a result added next to the error"
		}
		return join(body[:len(body)-1], []byte(add+"}"), cr), what
	case HowStringID:
		start, end, ok := idSpan(body)
		if !ok {
			return nil, "no integer id"
		}
		id := body[start:end]
		return join(body[:start], []byte(strconv.Quote(string(id))), body[end:], cr), fmt.Sprintf("id %s became the string %q", id, id)
	}
	return nil, "unknown how"
}

func join(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// idSpan finds the value of the top-level "id" member of a JSON object
// when it is a number: its start and end offsets.
func idSpan(obj []byte) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, false
		}
		end := int(dec.InputOffset())
		if key == "id" && len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
			return end - len(raw), end, true
		}
	}
	return 0, 0, false
}
