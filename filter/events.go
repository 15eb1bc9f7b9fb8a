package filter

import (
	"slices"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// Requests describes the events of a session (a capture) as Items: a
// response with its request's method and tool, every event of a request
// with its outcome and latency. A first pass Learns the events; Rewind,
// then a second pass asks for each event's Item. It holds a few words per
// request of the session.
type Requests struct {
	gen  int
	reqs map[reqKey]*req
	// limit, when above 0, bounds reqs (a live session, NewLiveRequests):
	// order holds the keys, oldest first, to forget the oldest.
	limit int
	order []reqKey
}

type reqKey struct {
	gen int
	dir client.Direction
	id  string
}

type req struct {
	method, tool string
	state        client.State
	latency      time.Duration
	final        bool
	isError      bool
}

// NewRequests returns an empty index.
func NewRequests() *Requests { return &Requests{reqs: map[reqKey]*req{}} }

// NewLiveRequests returns an empty index for a session still going, such
// as the UI's: Learn each event as it arrives, remember Gen with it, and
// ask ItemAt for its Item whenever it is judged (what is known of its
// request then: a response's method and tool, the outcome and latency once
// settled). It remembers the last limit requests.
func NewLiveRequests(limit int) *Requests {
	return &Requests{reqs: map[reqKey]*req{}, limit: max(limit, 1)}
}

// Gen is the server process the events learnt last belong to (ids start
// again with each): give it to ItemAt with an event learnt now.
func (r *Requests) Gen() int { return r.gen }

// Rewind starts the second pass (the session generations count again).
func (r *Requests) Rewind() { r.gen = 0 }

// step counts the server processes: ids start again with a new one.
func (r *Requests) step(ev *client.Event) {
	if ev.StartsSession() {
		r.gen++
	}
}

// Learn records what ev says about its request (the first pass).
func (r *Requests) Learn(ev client.Event) {
	r.step(&ev)
	switch {
	case ev.Kind == client.EvRequest && ev.Req != nil && ev.Req.ID.IsValid():
		k := reqKey{r.gen, ev.Req.Dir, ev.Req.ID.String()}
		q := r.reqs[k]
		if q == nil {
			q = &req{}
			r.reqs[k] = q
			r.remember(k)
		}
		if ev.Req.Method != "" {
			q.method = ev.Req.Method
		}
		if ev.Req.Tool != "" {
			q.tool = ev.Req.Tool
		}
		q.state = ev.Req.State
		if ev.Req.State.Final() {
			q.final, q.latency = true, ev.Req.Latency
		}
	case ev.Kind == client.EvFrame && ev.Frame != nil && ev.Frame.Msg.Kind == jsonrpc.KindResponse &&
		ev.Frame.Verdict == client.VerdictResolved && mcp.ResultIsError(ev.Frame.Msg.Result):
		if q := r.reqs[reqKey{r.gen, opposite(ev.Frame.Dir), ev.Frame.Msg.ID.String()}]; q != nil {
			q.isError = true
		}
	}
}

// remember bounds a live index: past its limit, the oldest request is
// forgotten.
func (r *Requests) remember(k reqKey) {
	if r.limit <= 0 {
		return
	}
	r.order = append(r.order, k)
	if len(r.order) > r.limit {
		delete(r.reqs, r.order[0])
		r.order = slices.Delete(r.order, 0, 1)
	}
}

func opposite(d client.Direction) client.Direction {
	if d == client.In {
		return client.Out
	}
	return client.In
}

// Item describes ev (the second pass); ok is false for an event that is
// neither a frame nor a request's (stderr, a process, a note).
func (r *Requests) Item(ev client.Event) (it Item, ok bool) {
	r.step(&ev)
	return r.ItemAt(ev, r.gen)
}

// ItemAt is Item for an event of server process gen (Gen when it was
// learnt), judged by what is known of its request now; it does not count
// processes.
func (r *Requests) ItemAt(ev client.Event, gen int) (it Item, ok bool) {
	switch {
	case ev.Kind == client.EvRequest && ev.Req != nil:
		it = Item{Method: ev.Req.Method, Tool: ev.Req.Tool, Dir: ev.Req.Dir.String(), Kind: "request",
			Status: []string{string(ev.Req.State)}, Payload: ev.Req.Params}
		if ev.Req.ID.IsValid() {
			it.ID = ev.Req.ID.String()
			r.withRequest(&it, reqKey{gen, ev.Req.Dir, it.ID})
		}
		if ev.Req.State.Final() {
			it.Failed = failedState(ev.Req.State) || it.Failed
		}
		return it, true
	case ev.Kind == client.EvFrame && ev.Frame != nil:
		f := ev.Frame
		it = Item{Method: f.Msg.Method, Dir: f.Dir.String(), Status: []string{string(f.Verdict)}, Payload: f.Raw,
			Failed: ProblemVerdict(f.Verdict)}
		switch {
		case f.Msg.Kind == jsonrpc.KindResponse && f.Msg.Error != nil:
			it.Kind = "error"
		case f.Msg.Kind != jsonrpc.KindInvalid:
			it.Kind = f.Msg.Kind.String()
		}
		if f.Msg.ID.IsValid() {
			it.ID = f.Msg.ID.String()
			dir := f.Dir
			if f.Msg.Kind == jsonrpc.KindResponse {
				dir = opposite(f.Dir) // a response answers a request sent the other way
			}
			r.withRequest(&it, reqKey{gen, dir, it.ID})
		}
		return it, true
	}
	return Item{}, false
}

// withRequest adds what is known of request k to it.
func (r *Requests) withRequest(it *Item, k reqKey) {
	q := r.reqs[k]
	if q == nil {
		return
	}
	if it.Method == "" {
		it.Method = q.method
	}
	if it.Tool == "" {
		it.Tool = q.tool
	}
	if q.final {
		it.Status = append(it.Status, string(q.state))
		it.Duration, it.HasDuration = q.latency, true
		it.Failed = it.Failed || failedState(q.state)
	}
	it.IsError = q.isError
	if q.isError {
		it.Status = append(it.Status, "isError")
	}
}

// problemVerdicts are the verdicts of a frame that broke the protocol.
var problemVerdicts = []client.Verdict{client.VerdictMalformed, client.VerdictInvalid, client.VerdictTooLong,
	client.VerdictUnknown, client.VerdictDuplicate, client.VerdictLate, client.VerdictUndeclared}

// failedState reports whether a final state is an error (client.Errored;
// a result's isError is IsError): a cancel by the caller is not.
func failedState(s client.State) bool { return client.Errored(s, false) }

// ProblemVerdict reports whether a frame's verdict is a problem: the frame
// broke the protocol (malformed, invalid, too long, an unknown, duplicate
// or late answer, an undeclared request).
func ProblemVerdict(v client.Verdict) bool { return slices.Contains(problemVerdicts, v) }
