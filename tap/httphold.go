package tap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// Breakpoints on the HTTP tap (docs/breakpoints.md, "Over HTTP"). The
// unit is one JSON-RPC message, as for fault rules: a POST's body on its
// way to the server; a JSON answer, or one SSE event's data, on its way
// to the host. A POST whose message is held waits, its request open,
// until the Engine decides; a held JSON answer waits the same way; a held
// SSE event is taken out of its stream, which goes on (httpholdsse.go),
// and written in its place's framing when released.

// errHostGone is what a Deliver returns when the host's request ended
// (it went away, or gave up) before the decision came.
var errHostGone = errors.New("the host's HTTP request is gone (it went away or gave up)")

// decided is a decision handed to the goroutine of the exchange that waits
// for it, and what became of an answer written elsewhere (legacy).
type decided struct {
	o   hold.Outcome
	err error
}

// awaitHold offers raw (going dir) to the Engine and, when it is held,
// waits for the decision. held is false when no breakpoint held it (the
// caller forwards as without breakpoints); ok is false when the host's
// request ended first (the Engine's Deliver then reports errHostGone).
// back, when set, carries out an answer in the decider's goroutine (the
// legacy transport's: on the session's stream) before the waiter is told.
func (p *Proxy) awaitHold(ctx context.Context, ex *exchange, dir client.Direction, raw []byte, back func([]byte) error) (d decided, held, ok bool) {
	ch := make(chan decided)
	deliver := func(o hold.Outcome) error {
		if ctx.Err() != nil {
			return errHostGone
		}
		var err error
		if o.Back() && back != nil {
			err = back(o.Frame)
		}
		select {
		case ch <- decided{o, err}:
			return err
		case <-ctx.Done():
			return errHostGone
		}
	}
	if !p.offerHold(ex, dir, raw, deliver) {
		return decided{}, false, false
	}
	select {
	case d = <-ch:
		return d, true, true
	case <-ctx.Done():
		return decided{}, true, false
	}
}

// holdRequest judges a POST's message on its way to the server. It either
// answers the host itself (true: the message was answered or dropped, or
// the host went away while it was held), or leaves r's body as what goes
// on (the message, or its edit) and returns false for the proxy to forward
// it. A body that is compressed, unreadable or longer than
// MaxMessageBytes is not offered (it passes as it comes).
func (p *Proxy) holdRequest(w http.ResponseWriter, r *http.Request, ex *exchange) bool {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody || !p.opts.Hold.Armed() {
		return false
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return false
	}
	max := p.opts.MaxMessageBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err != nil || len(body) > max {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return false
	}
	r.Body.Close()
	ex.bodyWhole = true
	r.Body, r.ContentLength = wholeBody(body), int64(len(body))
	line := bytes.TrimSpace(body)
	var back func([]byte) error
	if ex.session != "" && strings.HasPrefix(ex.session, LegacySession) {
		back = func(answer []byte) error { return p.legacyAnswer(ex.session, answer) }
	}
	d, held, ok := p.awaitHold(r.Context(), ex, client.Out, line, back)
	switch {
	case !held:
		return false
	case !ok:
		return true // the host went away: nothing to answer
	}
	switch d.o.Action {
	case client.HoldEdited:
		r.Body, r.ContentLength = wholeBody(d.o.Frame), int64(len(d.o.Frame))
		r.Header.Set("Content-Length", strconv.Itoa(len(d.o.Frame)))
		return false
	case client.HoldAnswered:
		p.heldAnswered(w, r, ex, body, d)
		return true
	case client.HoldDropped:
		p.heldDropped(w, r, ex, body, line, d.o.Handle)
		return true
	}
	return false // released
}

// heldAnswered answers a POST whose request was answered in the server's
// place: in the form the host asked for (JSON when its Accept allows it,
// else one SSE event), with its Mcp-Session-Id. Over the legacy transport
// the answer went on the session's stream (back): the POST gets 202, or
// 502 when that stream is gone.
func (p *Proxy) heldAnswered(w http.ResponseWriter, r *http.Request, ex *exchange, body []byte, d decided) {
	note := "answered by sonde tap (breakpoint " + d.o.Handle + ")"
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		w.Header().Set("Mcp-Session-Id", sid)
	}
	if strings.HasPrefix(ex.session, LegacySession) {
		if d.err != nil {
			p.ownAnswer(w, ex, body, http.StatusBadGateway, "text/plain; charset=utf-8", []byte("sonde tap: the answer of "+d.o.Handle+" could not go on the session's stream: "+d.err.Error()+"\n"), note)
			return
		}
		p.ownAnswer(w, ex, body, http.StatusAccepted, "", nil, note)
		return
	}
	if acceptsJSON(r.Header.Values("Accept")) {
		w.Header().Set("Content-Length", strconv.Itoa(len(d.o.Frame)))
		p.ownAnswer(w, ex, body, http.StatusOK, "application/json", d.o.Frame, note)
		return
	}
	ev := transport.AppendSSEEvent(nil, &transport.SSEEvent{Event: "message", Data: d.o.Frame, HasData: true})
	p.ownAnswer(w, ex, body, http.StatusOK, "text/event-stream", ev, note)
}

// acceptsJSON reports whether an Accept header takes application/json (no
// header, */* and application/* do too).
func acceptsJSON(vals []string) bool {
	if len(vals) == 0 {
		return true
	}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			switch t := mediaType(strings.TrimSpace(part)); t {
			case "application/json", "*/*", "application/*":
				return true
			}
		}
	}
	return false
}

// heldDropped answers a POST whose message was dropped, as a server that
// never got it would be seen: a notification or response is accepted
// (202); a request gets no answer: the POST stays open, without headers,
// until the host gives up, the tap stops, or the break timeout passes once
// more, when it is answered 504 (what a gateway says of a server that
// never answered).
func (p *Proxy) heldDropped(w http.ResponseWriter, r *http.Request, ex *exchange, body, line []byte, handle string) {
	note := "dropped by sonde tap (breakpoint " + handle + ")"
	msg, err := jsonrpc.Decode(line)
	if err != nil || msg.Kind != jsonrpc.KindRequest {
		p.ownAnswer(w, ex, body, http.StatusAccepted, "", nil, note)
		return
	}
	if !p.waitDropped(r.Context()) {
		return
	}
	p.ownAnswer(w, ex, body, http.StatusGatewayTimeout, "text/plain; charset=utf-8", []byte("sonde tap: the request was dropped at breakpoint "+handle+": the server never got it\n"), note)
}

// waitDropped waits as long as a dropped request's answer would not come:
// until ctx ends (false), or the tap stops or the break timeout passes
// (true: answer the host that nothing came).
func (p *Proxy) waitDropped(ctx context.Context) bool {
	var timeout <-chan time.Time
	if d := p.opts.Hold.Timeout(); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-p.closed:
	case <-timeout:
	}
	return true
}

// ownAnswer writes the tap's own answer to a POST the server never saw,
// and observes the host's body (as it came) and the answer.
func (p *Proxy) ownAnswer(w http.ResponseWriter, ex *exchange, hostBody []byte, status int, ctype string, body []byte, note string) {
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.WriteHeader(status)
	w.Write(body)
	if ex.hostBody == nil {
		ex.hostBody = hostBody
	}
	p.observeOwnAnswer(ex, status, ctype, body, note)
	if mt := mediaType(ctype); mt == "text/event-stream" && p.opts.Observer != nil {
		p.offerEnd(hchunk{ex: ex, kind: hkResp, ctype: mt, end: true, t: time.Now()}, &missCounter{})
	}
}

// holdJSONResponse judges a JSON answer on its way to the host (before its
// headers go): it is read whole and, when held, waits for the decision.
// An edit replaces the body (Content-Length fixed); a drop holds the
// answer back as a server that never answered (errDropped once the host
// gave up, the tap stops or the break timeout passes once more: the host
// gets 504).
func (p *Proxy) holdJSONResponse(resp *http.Response) error {
	if !p.opts.Hold.Armed() || resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	max := p.opts.MaxMessageBytes
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil || len(body) > max {
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
		return nil
	}
	resp.Body.Close()
	resp.Body = wholeBody(body)
	ctx := resp.Request.Context()
	d, held, ok := p.awaitHold(ctx, exchangeOf(resp.Request), client.In, bytes.TrimSpace(body), nil)
	switch {
	case !held:
		return nil
	case !ok:
		return errDropped
	}
	switch d.o.Action {
	case client.HoldEdited:
		resp.Body, resp.ContentLength = wholeBody(d.o.Frame), int64(len(d.o.Frame))
		resp.Header.Set("Content-Length", strconv.Itoa(len(d.o.Frame)))
	case client.HoldDropped:
		p.waitDropped(ctx)
		return errDropped
	}
	return nil
}

// legacyAnswer writes answer, as a message event, on the stream of the
// legacy session key (the answer to a request the host POSTed).
func (p *Proxy) legacyAnswer(key string, answer []byte) error {
	s := p.streamOf(key)
	if s == nil {
		return fmt.Errorf("the legacy session's event stream is not open")
	}
	return s.write(transport.AppendSSEEvent(nil, &transport.SSEEvent{Event: "message", Data: answer, HasData: true}))
}

// answerServer posts answer (to a request the server sent on ex's stream,
// answered in the host's place) to the server, as the host would: to the
// stream's own URL with its session headers, or over the legacy transport
// to the session's POST endpoint. The server's answer is read and dropped.
func (p *Proxy) answerServer(ex *exchange, req *http.Request, answer []byte) error {
	path, header := req.URL.RequestURI(), sessionOf("", req.Header).header
	if k := ex.legacyKey.Load(); k != nil {
		path = strings.TrimPrefix(*k, LegacySession)
	}
	u := *p.opts.Target
	ru, err := u.Parse(path)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, ru.String(), bytes.NewReader(answer))
	if err != nil {
		return err
	}
	out.Header = header
	out.Header.Set("Content-Type", "application/json")
	out.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := p.opts.Transport.RoundTrip(out)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("the server answered the answer's POST with HTTP %d", resp.StatusCode)
	}
	return nil
}

// wholeBody is a body in memory that returns io.EOF with its last bytes,
// as a body read from the network does: a reader that reads exactly its
// length (the transport, with Content-Length) sees its end at once, and
// observation records its end before the answer's.
func wholeBody(b []byte) io.ReadCloser { return &memBody{b: b} }

type memBody struct{ b []byte }

func (m *memBody) Read(p []byte) (int, error) {
	n := copy(p, m.b)
	m.b = m.b[n:]
	if len(m.b) == 0 {
		return n, io.EOF
	}
	return n, nil
}

func (m *memBody) Close() error { return nil }

// maxHoldSessions bounds holdSess (past it, steps go to the recording of
// no session).
const maxHoldSessions = 4096

func holdKey(dir client.Direction, id string) string { return dir.String() + " " + id }

// offerHold offers raw to the Engine, remembering the session of ex (its
// exchange) while it is held, for NoteHold.
func (p *Proxy) offerHold(ex *exchange, dir client.Direction, raw []byte, deliver hold.Deliver) bool {
	k := ""
	if ex != nil && ex.session != "" {
		if id, _ := jsonrpc.ScanID(raw); id.IsValid() {
			k = holdKey(dir, id.String())
			p.holdMu.Lock()
			if p.holdSess == nil {
				p.holdSess = map[string]string{}
			}
			if len(p.holdSess) < maxHoldSessions {
				p.holdSess[k] = ex.session
			}
			p.holdMu.Unlock()
		}
	}
	held := p.opts.Hold.Offer(dir, raw, deliver)
	if !held && k != "" {
		p.holdMu.Lock()
		delete(p.holdSess, k)
		p.holdMu.Unlock()
	}
	return held
}

// NoteHold records a step of a frame the breakpoints held (set it as the
// hold.Options.Note of ProxyOptions.Hold's Engine): a note with the step
// (client.Observer.Hold, in HoldText's words), in the recording of the
// frame's session, in order with what the proxy observes.
func (p *Proxy) NoteHold(h client.Hold) {
	sess := ""
	if h.ID.IsValid() {
		k := holdKey(h.Dir, h.ID.String())
		p.holdMu.Lock()
		sess = p.holdSess[k]
		if h.Action != client.HoldHeld {
			delete(p.holdSess, k)
		}
		p.holdMu.Unlock()
	}
	now := time.Now()
	p.offer(hchunk{ex: &exchange{session: sess, start: now, stream: "breakpoints"}, kind: hkNote, note: hold.Text(h), hold: &h, t: now}, nil)
}
