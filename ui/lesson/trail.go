package lesson

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// trail keeps what the FIFO comparison needs: sonde's requests as they
// were written, responses as they arrived, and the requests given up
// (timed out, cancelled, ended by an exit) before an answer, in one order;
// and each request's real outcome. Bounded to the last maxTrail events.
type trail struct {
	evs      ring.Ring[trailEv]
	outcomes map[int64]outcome
	labels   map[int64]string
}

func newTrail() trail {
	return trail{evs: ring.New[trailEv](maxTrail), outcomes: map[int64]outcome{}, labels: map[int64]string{}}
}

// trailEv is a request written (id, method), a response arrived (resp), or
// a request given up (id).
type trailEv struct {
	kind   trailKind
	id     int64
	method string
	resp   response
}

type trailKind uint8

const (
	evReq trailKind = iota
	evResp
	evGiveUp
)

type response struct {
	id      jsonrpc.ID
	preview string
}

type outcome struct {
	state   client.State
	latency time.Duration
}

const maxTrail = 256

func (t *trail) apply(evs []client.Event) {
	for _, ev := range evs {
		switch {
		case ev.Kind == client.EvFrame && ev.Frame.Dir == client.Out && ev.Frame.Msg.Kind == jsonrpc.KindRequest:
			if id, ok := ev.Frame.Msg.ID.Int64(); ok {
				t.evs.Push(trailEv{kind: evReq, id: id, method: ev.Frame.Msg.Method})
			}
		case ev.Kind == client.EvFrame && ev.Frame.Dir == client.In && ev.Frame.Msg.Kind == jsonrpc.KindResponse:
			t.evs.Push(trailEv{kind: evResp, resp: response{id: ev.Frame.Msg.ID, preview: resultPreview(ev.Frame)}})
		case ev.Kind == client.EvRequest && ev.Req.Dir == client.Out && ev.Req.State.Final():
			id, ok := ev.Req.ID.Int64()
			if !ok {
				continue
			}
			t.outcomes[id] = outcome{state: ev.Req.State, latency: ev.Req.Latency}
			if ev.Req.State != client.StateResolved && ev.Req.State != client.StateError && ev.Req.State != client.StateRetried {
				t.evs.Push(trailEv{kind: evGiveUp, id: id})
			}
		}
	}
}

// fifo is what a client that matched answers by order would have done: it
// gives each response to the oldest request still waiting; a request that
// timed out or was cancelled stops waiting; a response that comes when no
// request waits (a late answer) is read by the next request sent.
type fifo struct {
	order   []int64            // the requests, in the order written
	got     map[int64]response // the answer each was given
	gaveUp  map[int64]bool
	backlog []response // answers no request was waiting for
}

func (t *trail) fifo() fifo {
	f := fifo{got: map[int64]response{}, gaveUp: map[int64]bool{}}
	var queue []int64
	for i := 0; i < t.evs.Len(); i++ {
		e := t.evs.At(i)
		switch e.kind {
		case evReq:
			f.order = append(f.order, e.id)
			if len(f.backlog) > 0 {
				f.got[e.id], f.backlog = f.backlog[0], f.backlog[1:]
				continue
			}
			queue = append(queue, e.id)
		case evResp:
			if len(queue) == 0 {
				f.backlog = append(f.backlog, e.resp)
				continue
			}
			f.got[queue[0]], queue = e.resp, queue[1:]
		case evGiveUp:
			if i := slices.Index(queue, e.id); i >= 0 {
				queue = slices.Delete(queue, i, i+1)
				f.gaveUp[e.id] = true
			}
		}
	}
	return f
}

// resultPreview is the text a tool result carried, for the comparison.
func resultPreview(f *client.FrameInfo) string {
	if f.Msg.Error != nil {
		return "error " + f.Msg.Error.Message
	}
	s := string(f.Msg.Result)
	if i := strings.Index(s, `"text":"`); i >= 0 {
		rest := s[i+8:]
		if j := strings.IndexByte(rest, '"'); j >= 0 {
			return fmt.Sprintf("%q", rest[:j])
		}
	}
	return textfmt.Preview(f.Msg.Result, 24)
}

// fifoView shows what a client matching answers in FIFO order would have
// given each request (see fifo), marks every wrong pairing and says why;
// the right-hand column is what sonde (matching by id) did.
func (m *Model) fifoView() string {
	st := m.st
	t := &m.trail
	f := t.fifo()
	var b strings.Builder
	b.WriteString(st.Accent.Render("If answers were matched in order (FIFO), not by id:") + "\n")
	b.WriteString(st.Header.Render(fmt.Sprintf("%-26s %-36s %s", "request", "FIFO client would get", "sonde (by id)")) + "\n")
	// The count is over every request, not only the rows that fit.
	wrong := 0
	for _, id := range f.order {
		if r, ok := f.got[id]; ok {
			if n, ok := r.id.Int64(); !ok || n != id {
				wrong++
			}
		}
	}
	n := min(len(f.order), max(m.h-4, 0))
	for _, id := range f.order[len(f.order)-n:] {
		label := t.labels[id]
		if label == "" {
			label = m.methodOf(id)
		}
		req := fmt.Sprintf("id %d %s", id, label)
		got := st.Subtle.Render("nothing yet: waits")
		if r, ok := f.got[id]; ok {
			if n, ok := r.id.Int64(); ok && n == id {
				got = st.OK.Render("answer of id " + r.id.String() + " " + r.preview)
			} else {
				got = st.Error.Render("answer of id " + r.id.String() + " " + r.preview + "  WRONG")
			}
		} else if f.gaveUp[id] {
			got = st.Warn.Render("gave up, no answer")
		}
		real := st.Accent.Render("pending")
		if o, ok := t.outcomes[id]; ok {
			real = st.State(string(o.state)).Render(string(o.state))
		}
		b.WriteString(textfmt.Fit(req, 26) + " " + textfmt.Fit(got, 36) + " " + real + "\n")
	}
	switch {
	case len(f.backlog) > 0:
		r := f.backlog[0]
		b.WriteString(st.Error.Render("The answer of id "+r.id.String()+" came after its request gave up") +
			st.Subtle.Render(": no request waits for it, so a FIFO client hands it to the next request it sends (step on to see it go wrong)."))
	case wrong > 0:
		noun := "wrong answers"
		if wrong == 1 {
			noun = "wrong answer"
		}
		more := ""
		switch hidden := len(f.order) - n; {
		case hidden == 1:
			more = " (1 row above: z zooms)"
		case hidden > 1:
			more = fmt.Sprintf(" (%d rows above: z zooms)", hidden)
		}
		b.WriteString(st.Error.Render(fmt.Sprintf("%d %s", wrong, noun)) + st.Subtle.Render(": sonde matched every one by id."+more))
	case len(f.order) > 0:
		b.WriteString(st.Subtle.Render("So far order and ids agree; step on to see them differ."))
	}
	return b.String()
}

// methodOf is the method of request id in the trail.
func (m *Model) methodOf(id int64) string {
	for i := m.trail.evs.Len() - 1; i >= 0; i-- {
		if e := m.trail.evs.At(i); e.kind == evReq && e.id == id {
			return e.method
		}
	}
	return ""
}
