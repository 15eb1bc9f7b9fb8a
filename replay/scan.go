package replay

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

// reqKey identifies a request the way the pending pane does: direction and
// id (hashed with its type); requests without an id get a key of their own.
type reqKey struct {
	in bool
	id uint64
}

// reqTrack is what a checkpoint needs of one request: its first event, its
// last event with progress, and its last event (applying these three gives
// the pending pane the same row as applying them all).
type reqTrack struct {
	key               reqKey
	first, prog, last int32
	final             bool
	settled           int64
}

// LingerCarry bounds the settled requests a checkpoint carries: the most
// recently settled ones within the linger time. (A session settling more
// requests than this within the linger time shows, just after a rebuild,
// only these among its lingering rows.)
const LingerCarry = 512

// recentFrame is a frame seen shortly before, to find the response that
// settled a tools/list request (it comes just before the outcome).
type recentFrame struct {
	n      int32
	id     uint64
	inResp bool
	// isError: a resolved answer whose result had isError.
	isError bool
}

// scanner is the state of the pass that builds the timeline.
type scanner struct {
	tl        *Timeline
	linger    int64
	reqs      map[reqKey]*reqTrack // the current request of each key
	inflight  map[*reqTrack]struct{}
	settledQ  []*reqTrack // in the order they settled
	anon      uint64      // keys of requests without an id
	lastStart int32
	recent    [64]recentFrame
	nrecent   int
	max       int64
}

// newScanner starts the timeline's pass (see the package comment): entry
// is called with each indexed line.
func newScanner(tl *Timeline, linger time.Duration) *scanner {
	return &scanner{tl: tl, linger: int64(linger), reqs: map[reqKey]*reqTrack{}, inflight: map[*reqTrack]struct{}{}, lastStart: -1}
}

func (s *scanner) entry(p int32, e capture.Entry, line []byte) {
	tl := s.tl
	switch e.Type {
	case capture.TypeSession:
		tl.sessions = append(tl.sessions, p)
		return
	case capture.TypeFrame, capture.TypeRequest, capture.TypeStderr, capture.TypeProcess, capture.TypeNote, capture.TypeHTTP:
	default:
		return
	}
	n := int32(len(tl.ev))
	if n%CheckpointEvery == 0 {
		tl.cps = append(tl.cps, s.checkpoint())
	}
	s.max = max(s.max, e.T)
	tl.ev = append(tl.ev, p)
	tl.reached = append(tl.reached, s.max)
	var id uint64
	switch e.Type {
	case capture.TypeFrame:
		id = s.frame(n, line)
	case capture.TypeRequest:
		s.request(n, e.T, line)
	case capture.TypeProcess:
		if bytes.Contains(line, []byte(`"what":"start"`)) || bytes.Contains(line, []byte(`"what":"connect"`)) {
			s.lastStart = n
		}
		if bytes.Contains(line, []byte(`"what":"spawn-failed"`)) {
			tl.problems = append(tl.problems, n)
		}
	}
	tl.ids = append(tl.ids, id)
}

// checkpoint lists the events to apply before the next event: those of
// the requests that may still be alive (in flight, or settled within the
// linger time of the time reached), and the last process start. Requests
// that can no longer be alive are forgotten.
func (s *scanner) checkpoint() checkpoint {
	drop := 0
	for drop < len(s.settledQ) && s.settledQ[drop].settled < s.max-s.linger {
		if r := s.settledQ[drop]; s.reqs[r.key] == r {
			delete(s.reqs, r.key)
		}
		drop++
	}
	s.settledQ = append(s.settledQ[:0], s.settledQ[drop:]...)
	var carry []int32
	add := func(r *reqTrack) {
		carry = append(carry, r.first, r.last)
		if r.prog >= 0 {
			carry = append(carry, r.prog)
		}
	}
	for r := range s.inflight {
		add(r)
	}
	for _, r := range s.settledQ[max(len(s.settledQ)-LingerCarry, 0):] {
		add(r)
	}
	if s.lastStart >= 0 {
		carry = append(carry, s.lastStart)
	}
	slices.Sort(carry)
	return checkpoint{carry: slices.Compact(carry)}
}

// problemVerdict reports whether a frame verdict is an error or a
// violation.
func problemVerdict(v []byte) bool {
	switch client.Verdict(v) {
	case client.VerdictMalformed, client.VerdictInvalid, client.VerdictTooLong, client.VerdictUnknown,
		client.VerdictDuplicate, client.VerdictLate, client.VerdictRemoteError:
		return true
	}
	return false
}

// frame reads a frame line's id, direction, kind and verdict without
// decoding it: in a JSON line, a quoted key cannot occur inside a string
// value (its quotes would be escaped), so a byte search finds the field.
func (s *scanner) frame(n int32, line []byte) uint64 {
	head := line
	if i := bytes.Index(line, []byte(`,"raw":`)); i >= 0 {
		head = line[:i]
	}
	var id uint64
	if v := fieldValue(head, `"id":`); v != nil {
		id = idHashRaw(v)
	}
	if v := fieldValue(line, `"verdict":`); len(v) > 2 {
		if problemVerdict(v[1 : len(v)-1]) {
			s.tl.problems = append(s.tl.problems, n)
		}
	}
	inResp := bytes.Contains(head, []byte(`"dir":"in"`)) && bytes.Contains(head, []byte(`"kind":"response"`))
	isErr := inResp && bytes.Contains(line, []byte(`isError`)) && resultIsError(line)
	s.recent[s.nrecent%len(s.recent)] = recentFrame{n: n, id: id, inResp: inResp, isError: isErr}
	s.nrecent++
	return id
}

// resultIsError decodes a response frame's line, only when it may hold
// isError, and reports whether its result has isError set.
func resultIsError(line []byte) bool {
	var rec struct {
		Raw     string `json:"raw"`
		Verdict string `json:"verdict"`
	}
	if json.Unmarshal(line, &rec) != nil || client.Verdict(rec.Verdict) != client.VerdictResolved {
		return false
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	return json.Unmarshal([]byte(rec.Raw), &msg) == nil && mcp.ResultIsError(msg.Result)
}

// answerIsError reports whether the answer to sonde's request id, among
// the recent frames, had isError.
func (s *scanner) answerIsError(id uint64) bool {
	for i := 1; i <= min(s.nrecent, len(s.recent)); i++ {
		if f := s.recent[(s.nrecent-i)%len(s.recent)]; f.inResp && f.id == id {
			return f.isError
		}
	}
	return false
}

// fieldValue returns the JSON value (a number or a string, as written)
// after key in line, or nil.
func fieldValue(line []byte, key string) []byte {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return nil
	}
	v := line[i+len(key):]
	if len(v) == 0 {
		return nil
	}
	if v[0] == '"' {
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case '\\':
				j++
			case '"':
				return v[:j+1]
			}
		}
		return nil
	}
	j := 0
	for j < len(v) && (v[j] == '-' || v[j] >= '0' && v[j] <= '9') {
		j++
	}
	if j == 0 {
		return nil
	}
	return v[:j]
}

// reqFields are the fields of a request record the scan needs.
type reqFields struct {
	in       bool
	id       []byte // as written: 3 or "3"; nil without an id
	method   string
	state    client.State
	progress bool
}

// requestFields reads a request record's fields. A line laid out as this
// package's recorder writes it ({"type":"request",…, fields in Record's
// order}) is read by byte search: the top-level dir, id, method and state
// come before progress and error, and a key inside a string value has its
// quotes escaped, so the first match before "state" is the top-level one.
// Other layouts are decoded in full.
func requestFields(line []byte) (reqFields, bool) {
	var f reqFields
	if !bytes.HasPrefix(line, []byte(`{"type":"request"`)) {
		var r struct {
			Dir      string          `json:"dir"`
			ID       json.RawMessage `json:"id"`
			Method   string          `json:"method"`
			State    client.State    `json:"state"`
			Progress json.RawMessage `json:"progress"`
		}
		if json.Unmarshal(line, &r) != nil {
			return f, false
		}
		f = reqFields{in: r.Dir == capture.DirIn, method: r.Method, state: r.State,
			progress: len(r.Progress) > 0 && string(r.Progress) != "null"}
		if len(r.ID) > 0 && string(r.ID) != "null" {
			f.id = r.ID
		}
		return f, true
	}
	st := bytes.Index(line, []byte(`,"state":`))
	if st < 0 {
		return f, false
	}
	head := line[:st]
	state := fieldValue(line[st:], `"state":`)
	if len(state) < 2 {
		return f, false
	}
	f.state = internState(state[1 : len(state)-1])
	f.in = bytes.Contains(head, []byte(`,"dir":"in"`))
	f.id = fieldValue(head, `,"id":`)
	if m := fieldValue(head, `,"method":`); len(m) >= 2 {
		f.method = internMethod(m[1 : len(m)-1])
	}
	rest := line[st:]
	if e := bytes.Index(rest, []byte(`,"error":`)); e >= 0 {
		rest = rest[:e]
	}
	f.progress = bytes.Contains(rest, []byte(`,"progress":{`))
	return f, true
}

// states are the request states, for internState.
var states = [...]client.State{client.StateQueued, client.StateSent, client.StateProgress, client.StateResolved,
	client.StateError, client.StateTimeout, client.StateCancelled, client.StateExited, client.StateClosed,
	client.StateProtocol, client.StateHTTP, client.StateRejected, client.StateReceived, client.StateAnswered,
	client.StateRetried, client.StateHeld}

// internState returns the state named b without allocating for a known
// one.
func internState(b []byte) client.State {
	for _, s := range states {
		if string(b) == string(s) {
			return s
		}
	}
	return client.State(b)
}

// internMethod returns the method named b without allocating for the
// methods a scan compares.
func internMethod(b []byte) string {
	for _, m := range [...]string{mcp.MethodToolsCall, mcp.MethodToolsList} {
		if string(b) == m {
			return m
		}
	}
	return string(b)
}

// request tracks the request of a request record.
func (s *scanner) request(n int32, t int64, line []byte) {
	r, ok := requestFields(line)
	if !ok {
		return
	}
	k := reqKey{in: r.in}
	if r.id != nil {
		k.id = idHashRaw(r.id)
	}
	if k.id == 0 {
		s.anon++ // no id (rejected): a row of its own
		k.id = ^s.anon
	}
	tr := s.reqs[k]
	if tr == nil || tr.final {
		tr = &reqTrack{key: k, first: n, prog: -1}
		s.reqs[k] = tr
		s.inflight[tr] = struct{}{}
	}
	tr.last = n
	if r.progress {
		tr.prog = n
	}
	if r.state.Final() {
		tr.final, tr.settled = true, t
		delete(s.inflight, tr)
		s.settledQ = append(s.settledQ, tr)
		// An error as every count has it (client.Errored): not the
		// caller's cancel, and a result with isError too.
		if client.Errored(r.state, r.state == client.StateResolved && !k.in && s.answerIsError(k.id)) {
			s.tl.problems = append(s.tl.problems, n)
		}
		if r.state == client.StateResolved && r.method == mcp.MethodToolsList && !k.in {
			s.toolsResponse(k.id)
		}
	}
}

// toolsResponse records the response frame that settled tools/list id.
func (s *scanner) toolsResponse(id uint64) {
	for i := 1; i <= min(s.nrecent, len(s.recent)); i++ {
		f := s.recent[(s.nrecent-i)%len(s.recent)]
		if f.inResp && f.id == id {
			if l := len(s.tl.tools); l == 0 || s.tl.tools[l-1] < f.n {
				s.tl.tools = append(s.tl.tools, f.n)
			}
			return
		}
	}
}
