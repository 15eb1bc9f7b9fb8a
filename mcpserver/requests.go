package mcpserver

import (
	"encoding/json"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/mcp"
)

// Bounds of the request fold.
const (
	maxInFlight = 10000 // requests in flight tracked (the client's --max-pending is lower)
	keptFinals  = 1024  // settled requests kept for session_explain
)

// reqKey names a request: its direction and its id as sonde shows it.
type reqKey struct {
	dir client.Direction
	id  string
}

// reqState is what the log knows of one request: its first and its
// latest lifecycle event, and a late answer to it.
type reqState struct {
	first  time.Time
	info   client.ReqInfo // the latest
	late   *client.Late
	lateAt time.Time
}

// requests folds the EvRequest events of a session: those in flight, the
// last keptFinals settled, and the handshake's answer. Its owner holds
// the lock.
type requests struct {
	inFlight  map[reqKey]*reqState
	finals    ring.Ring[*reqState]
	byKey     map[reqKey]*reqState // the finals, by key (the newest of a key)
	handshake reqKey               // initialize's or server/discover's
	hsResult  json.RawMessage      // its result
	hsMethod  string
}

func newRequests() requests {
	return requests{inFlight: map[reqKey]*reqState{}, finals: ring.New[*reqState](keptFinals), byKey: map[reqKey]*reqState{}}
}

// apply folds one event.
func (r *requests) apply(ev client.Event) {
	switch {
	case ev.Kind == client.EvRequest && ev.Req != nil && ev.Req.ID.IsValid():
		r.request(ev)
	case ev.Kind == client.EvFrame && ev.Frame != nil:
		r.frame(ev.Frame)
	}
}

func (r *requests) request(ev client.Event) {
	q := ev.Req
	k := reqKey{q.Dir, q.ID.String()}
	st := r.inFlight[k]
	if st == nil {
		if len(r.inFlight) >= maxInFlight {
			return
		}
		st = &reqState{first: ev.Time}
		if q.Method == mcp.MethodInitialize || q.Method == mcp.MethodServerDiscover {
			r.handshake, r.hsMethod = k, q.Method
		}
	}
	st.info = *q
	if !q.State.Final() {
		r.inFlight[k] = st
		return
	}
	delete(r.inFlight, k)
	if old, evicted := r.finals.Push(st); evicted {
		ok := reqKey{old.info.Dir, old.info.ID.String()}
		if r.byKey[ok] == old {
			delete(r.byKey, ok)
		}
	}
	r.byKey[k] = st
}

func (r *requests) frame(f *client.FrameInfo) {
	if f.Late != nil {
		k := reqKey{client.Out, f.Late.ID.String()}
		if st := r.byKey[k]; st != nil {
			st.late, st.lateAt = f.Late, f.Time
		}
	}
	if f.Verdict == client.VerdictResolved && f.Dir == client.In && r.hsResult == nil && r.handshake.id != "" &&
		f.Msg.ID.String() == r.handshake.id {
		r.hsResult = append(json.RawMessage(nil), f.Msg.Result...)
	}
}

// find returns the request key names, in flight or settled (sonde's own
// requests before the server's).
func (r *requests) find(id string) (*reqState, bool) {
	for _, dir := range []client.Direction{client.Out, client.In} {
		k := reqKey{dir, id}
		if st := r.inFlight[k]; st != nil {
			return st, true
		}
		if st := r.byKey[k]; st != nil {
			return st, true
		}
	}
	return nil, false
}
