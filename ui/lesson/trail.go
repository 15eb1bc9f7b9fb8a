package lesson

import (
	"fmt"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// trail keeps what the FIFO comparison needs: sonde's requests in the order
// they were written, responses in the order they arrived (a FIFO client
// pairs the n-th of each), and each request's real outcome. Bounded to the
// last maxTrail of each.
type trail struct {
	// requests and responses count what they evicted, so pairs are made by
	// absolute position.
	requests  ring.Ring[request]
	responses ring.Ring[response]
	outcomes  map[int64]outcome
	labels    map[int64]string
}

func newTrail() trail {
	return trail{requests: ring.New[request](maxTrail), responses: ring.New[response](maxTrail),
		outcomes: map[int64]outcome{}, labels: map[int64]string{}}
}

type request struct {
	id     int64
	method string
}

type response struct {
	id      jsonrpc.ID
	preview string
}

type outcome struct {
	state   client.State
	latency time.Duration
}

const maxTrail = 64

func (t *trail) apply(evs []client.Event) {
	for _, ev := range evs {
		switch {
		case ev.Kind == client.EvFrame && ev.Frame.Dir == client.Out && ev.Frame.Msg.Kind == jsonrpc.KindRequest:
			if id, ok := ev.Frame.Msg.ID.Int64(); ok {
				t.requests.Push(request{id: id, method: ev.Frame.Msg.Method})
			}
		case ev.Kind == client.EvFrame && ev.Frame.Dir == client.In && ev.Frame.Msg.Kind == jsonrpc.KindResponse:
			t.responses.Push(response{id: ev.Frame.Msg.ID, preview: resultPreview(ev.Frame)})
		case ev.Kind == client.EvRequest && ev.Req.Dir == client.Out && ev.Req.State.Final():
			if id, ok := ev.Req.ID.Int64(); ok {
				t.outcomes[id] = outcome{state: ev.Req.State, latency: ev.Req.Latency}
			}
		}
	}
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

// fifoView pairs the n-th tools/call request with the n-th response, as a
// client that matched by order would, and marks every wrong pairing; the
// right-hand column is what sonde (matching by id) did.
func (m *Model) fifoView() string {
	st := m.st
	t := &m.trail
	var b strings.Builder
	b.WriteString(st.Accent.Render("If answers were matched in order (FIFO), not by id:") + "\n")
	b.WriteString(st.Header.Render(fmt.Sprintf("%-26s %-30s %s", "request", "FIFO client would get", "sonde (by id)")) + "\n")
	n := min(t.requests.Len(), max(m.h-3, 0))
	start := t.requests.Len() - n
	wrong := 0
	for i := start; i < t.requests.Len(); i++ {
		rq := t.requests.At(i)
		id := rq.id
		label := t.labels[id]
		if label == "" {
			label = rq.method
		}
		req := fmt.Sprintf("id %d %s", id, label)
		got := st.Subtle.Render("nothing yet: waits forever")
		if k := i + int(t.requests.Evicted()) - int(t.responses.Evicted()); k >= 0 && k < t.responses.Len() {
			r := *t.responses.At(k)
			if n, ok := r.id.Int64(); ok && n == id {
				got = st.OK.Render("answer of id " + r.id.String() + " " + r.preview)
			} else {
				wrong++
				got = st.Error.Render("answer of id " + r.id.String() + " " + r.preview + "  WRONG")
			}
		}
		real := st.Accent.Render("pending")
		if o, ok := t.outcomes[id]; ok {
			real = st.State(string(o.state)).Render(string(o.state))
		}
		b.WriteString(textfmt.Fit(req, 26) + " " + textfmt.Fit(got, 30) + " " + real + "\n")
	}
	if wrong > 0 {
		b.WriteString(st.Error.Render(fmt.Sprintf("%d wrong answers", wrong)) + st.Subtle.Render(": sonde matched every one by id."))
	} else if t.requests.Len() > 0 {
		b.WriteString(st.Subtle.Render("So far order and ids agree; step on to see them differ."))
	}
	return b.String()
}
