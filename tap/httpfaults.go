package tap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// releaseGap is the pause between two answers a reorder rule releases over
// HTTP: each goes on its own connection, so without it the host could
// receive them in any order.
const releaseGap = 25 * time.Millisecond

// httpFaults carries out fault rules on an HTTP tap's forwarding path.
// The unit is one JSON-RPC message: a POST's body on its way to the
// server; a JSON answer, or one SSE event's data, on its way to the host.
//
// To the server: a dropped request gets an SSE stream that never answers
// (the host waits, as for a lost answer), a dropped notification or
// response 202; an error rule answers the POST itself; duplicates are
// extra POSTs whose answers are discarded; close ends the session (404
// now and for every later request of that Mcp-Session-Id).
//
// To the host: a dropped JSON answer never comes (the response is held
// until the host gives up); duplicates and noise turn a JSON answer into
// an SSE stream of several events; in an SSE stream, events are dropped,
// delayed, duplicated (with their event id) or corrupted, and close ends
// the stream. Reorder holds answers across requests and releases them in
// the rule's order, releaseGap apart.
type httpFaults struct {
	e    *chaos.Engine
	p    *Proxy
	done <-chan struct{} // the proxy is closing

	mu     sync.Mutex
	closed map[[sha256.Size]byte]int // Mcp-Session-Id's hash → the close rule that ended it
	order  [][sha256.Size]byte       // closed's keys, oldest first
	gate   time.Time                 // a stall: nothing goes to the server before it
	held   map[*chaos.Rule]*httpHold
	// What the reorder rules hold (the answers' bytes), and what copies
	// sent later hold: bounded as on stdio (chaos.MaxHeldBytes,
	// chaos.MaxLaterBytes).
	heldBytes, laterBytes int
}

// maxClosed is how many sessions a close rule ended are remembered (the
// oldest is forgotten first: its later requests go to the server again).
const maxClosed = 4096

// httpHold is what one reorder rule holds over HTTP: the answers waiting,
// each released by closing its channel, and their bytes.
type httpHold struct {
	waiters []chan struct{}
	bytes   int
	timer   *time.Timer
}

func newHTTPFaults(e *chaos.Engine, p *Proxy) *httpFaults {
	return &httpFaults{e: e, p: p, done: p.closed, closed: map[[sha256.Size]byte]int{}, held: map[*chaos.Rule]*httpHold{}}
}

// reserveLater takes n bytes of what copies sent later may hold; false
// (and a note) when they hold too much already.
func (f *httpFaults) reserveLater(ex *exchange, eff chaos.Effect, n int) bool {
	f.mu.Lock()
	ok := f.laterBytes+n <= chaos.MaxLaterBytes
	if ok {
		f.laterBytes += n
	}
	held := f.laterBytes
	f.mu.Unlock()
	if !ok && eff.LaterRule != nil {
		r := eff.LaterRule
		f.fault(ex, chaos.Note{Text: fmt.Sprintf("fault rule %d (%s) did not send %d later cop(ies): the copies waiting hold %d bytes, at most %d (docs/chaos.md, \"Limits\")", r.N, r.Text, len(eff.Later), held, chaos.MaxLaterBytes), Rule: r.N, Action: r.Action})
	}
	return ok
}

func (f *httpFaults) releaseLater(n int) {
	f.mu.Lock()
	f.laterBytes -= n
	f.mu.Unlock()
}

// size is what lines hold in memory: the distinct ones (a copy is the line
// itself).
func size(lines [][]byte) int {
	n := 0
	for i, l := range lines {
		if i > 0 && len(l) == len(lines[i-1]) && (len(l) == 0 || &l[0] == &lines[i-1][0]) {
			continue
		}
		n += len(l)
	}
	return n
}

// note records what a rule did (and, for the tap's user, nothing else:
// the host's stderr is not ours over HTTP).
func (f *httpFaults) note(ex *exchange, text string) {
	f.p.offer(hchunk{ex: ex, kind: hkNote, t: time.Now(), note: text}, nil)
}

// fault records what a rule did, with its fields (client.Fault).
func (f *httpFaults) fault(ex *exchange, n chaos.Note) {
	f.p.offer(hchunk{ex: ex, kind: hkNote, t: time.Now(), note: n.Text, fault: faultOf(n)}, nil)
}

// effects records the notes of eff and writes its stderr text to the
// tap's log.
func (f *httpFaults) effects(ex *exchange, eff chaos.Effect) {
	for _, n := range eff.Notes {
		f.fault(ex, n)
	}
	if len(eff.Stderr) > 0 {
		f.p.opts.Log.Write(eff.Stderr)
	}
}

// sleep waits d, or until ctx ends or the proxy closes; it reports
// whether the whole d went by.
func (f *httpFaults) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-f.done:
	}
	return false
}

// sessionClosed reports the close rule that ended r's session (0: none).
func (f *httpFaults) sessionClosed(r *http.Request) int {
	sid := sha256.Sum256([]byte(r.Header.Get("Mcp-Session-Id")))
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed[sid]
}

// closeSession remembers that rule closed session sid, by its hash (an id
// is as long as the host makes it), the newest maxClosed of them.
func (f *httpFaults) closeSession(sid string, rule int) {
	k := sha256.Sum256([]byte(sid))
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.closed[k]; !ok {
		f.order = append(f.order, k)
	}
	f.closed[k] = rule
	if len(f.order) > maxClosed {
		delete(f.closed, f.order[0])
		f.order = f.order[1:]
	}
}

// request applies the rules to a POST's body on its way to the server. It
// either answers the host itself (true), or sets r's body to what goes
// on, and returns false for the proxy to forward it.
func (f *httpFaults) request(w http.ResponseWriter, r *http.Request, ex *exchange) bool {
	if n := f.sessionClosed(r); n > 0 {
		if r.Body != nil {
			io.Copy(io.Discard, io.LimitReader(r.Body, int64(f.p.opts.MaxMessageBytes)))
		}
		f.note(ex, fmt.Sprintf("fault rule %d: the session it closed got %s: answered 404", n, ex.stream))
		http.Error(w, "sonde tap: session closed by fault rule "+strconv.Itoa(n), http.StatusNotFound)
		return true
	}
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return false
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return false
	}
	max := f.p.opts.MaxMessageBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err != nil || len(body) > max {
		// Unreadable, or too long to hold: forwarded as it comes, no rule.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return false
	}
	r.Body.Close()
	ex.hostBody = body
	line := bytes.TrimSpace(body)
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	f.sleep(r.Context(), time.Until(gate))
	eff := f.e.Apply(chaos.ToServer, line)
	if !eff.Matched() {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		return false
	}
	f.effects(ex, eff)
	ex.noise = eff.ToHost
	if !f.sleep(r.Context(), eff.Delay) {
		return true
	}
	if eff.Stall > 0 {
		f.mu.Lock()
		f.gate = time.Now().Add(eff.Stall)
		f.mu.Unlock()
	}
	switch {
	case eff.Close != nil:
		f.closeSession(r.Header.Get("Mcp-Session-Id"), eff.Close.N)
		f.answer(w, ex, http.StatusNotFound, "text/plain; charset=utf-8", []byte("sonde tap: session closed by fault rule "+strconv.Itoa(eff.Close.N)+"\n"))
		return true
	case len(eff.Back) > 0:
		f.answer(w, ex, http.StatusOK, "application/json", eff.Back[0])
		return true
	case len(eff.Lines) == 0 || eff.Hold != nil:
		if eff.Hold != nil {
			f.note(ex, fmt.Sprintf("fault rule %d: reorder holds answers on their way to the host over HTTP; %s is forwarded", eff.Hold.N, ex.stream))
			eff.Lines = [][]byte{line}
			break
		}
		f.dropped(w, r, ex, line)
		return true
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(eff.Lines[0])), int64(len(eff.Lines[0]))
	// The copies go one after another, from one goroutine (up to
	// chaos.MaxCopies of them: not as many connections at once).
	if len(eff.Lines) > 1 {
		go f.postAll(r, ex, eff.Lines[1:], 0, 0)
	}
	if n := size(eff.Later); len(eff.Later) > 0 && f.reserveLater(ex, eff, n) {
		go f.postAll(r, ex, eff.Later, eff.LaterBy, n)
	}
	return false
}

// postAll posts bodies to the server one after another, after d; held is
// what they hold of the copies sent later (let go when done).
func (f *httpFaults) postAll(r *http.Request, ex *exchange, bodies [][]byte, d time.Duration, held int) {
	defer f.releaseLater(held)
	if !f.sleep(context.Background(), d) {
		return
	}
	for _, b := range bodies {
		select {
		case <-f.done:
			return
		default:
		}
		f.post(r, ex, b, 0)
	}
}

// dropped answers a POST whose message the rules dropped: a request's
// answer never comes (an SSE stream held open without an event until the
// host goes away or the tap stops); anything else is accepted (202), as a
// server would.
func (f *httpFaults) dropped(w http.ResponseWriter, r *http.Request, ex *exchange, line []byte) {
	msg, err := jsonrpc.Decode(line)
	if err != nil || msg.Kind != jsonrpc.KindRequest {
		f.answer(w, ex, http.StatusAccepted, "", nil)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
	f.observeAnswer(ex, http.StatusOK, "text/event-stream", nil)
	select {
	case <-r.Context().Done():
	case <-f.done:
	}
}

// answer writes the tap's own answer to the host and observes it.
func (f *httpFaults) answer(w http.ResponseWriter, ex *exchange, status int, ctype string, body []byte) {
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.WriteHeader(status)
	w.Write(body)
	f.observeAnswer(ex, status, ctype, body)
}

// observeAnswer offers what the host sent and the tap's own answer to the
// observer, as the proxy does for a forwarded exchange.
func (f *httpFaults) observeAnswer(ex *exchange, status int, ctype string, body []byte) {
	f.p.observeOwnAnswer(ex, status, ctype, body, "answered by sonde tap (fault rule)")
}

// observeHostBody offers the body the host sent (before the rules), once.
func (f *httpFaults) observeHostBody(ex *exchange) { f.p.observeHostBody(ex) }

// observeOwnAnswer offers what the host sent and an answer of the tap's
// own (note says why) to the observer, as the proxy does for a forwarded
// exchange.
func (p *Proxy) observeOwnAnswer(ex *exchange, status int, ctype string, body []byte, note string) {
	if p.opts.Observer == nil {
		return
	}
	p.observeHostBody(ex)
	now := time.Now()
	hdr := headerLines("> ", ex.reqHdr)
	if ctype != "" {
		hdr = append(hdr, "< Content-Type: "+ctype)
	}
	p.offer(hchunk{ex: ex, kind: hkHTTP, t: now, http: &client.HTTPEvent{
		Method: ex.method, URL: ex.url, Status: status, Header: hdr, Duration: now.Sub(ex.start), Stream: ex.stream,
		Note: note,
	}}, nil)
	mt := mediaType(ctype)
	if len(body) > 0 {
		p.offer(hchunk{ex: ex, kind: hkResp, ctype: mt, data: body, t: now}, nil)
	}
	if mt != "text/event-stream" {
		p.offerEnd(hchunk{ex: ex, kind: hkResp, ctype: mt, end: true, t: now}, &missCounter{})
	}
}

// observeHostBody offers the body the host sent (as it came), once.
func (p *Proxy) observeHostBody(ex *exchange) {
	if ex.hostBody == nil || ex.hostObserved || p.opts.Observer == nil {
		return
	}
	ex.hostObserved = true
	now := time.Now()
	p.offer(hchunk{ex: ex, kind: hkReq, data: ex.hostBody, t: now}, nil)
	p.offerEnd(hchunk{ex: ex, kind: hkReq, end: true, t: now}, &missCounter{})
}

// post sends body to the server as a POST of its own, after d, with r's
// headers (the session's): a duplicate the host never sees the answer of.
func (f *httpFaults) post(r *http.Request, ex *exchange, body []byte, d time.Duration) {
	if !f.sleep(context.Background(), d) {
		return
	}
	u := *r.URL
	u.Scheme, u.Host = f.p.opts.Target.Scheme, f.p.opts.Target.Host
	req, err := http.NewRequest(http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header = r.Header.Clone()
	req.Header.Del("Content-Length")
	resp, err := f.p.opts.Transport.RoundTrip(req)
	if err != nil {
		f.note(ex, fmt.Sprintf("sonde tap: a duplicate of %s could not be sent: %v", ex.stream, err))
		return
	}
	// The answer is the server's to a message the host sent once: read
	// and dropped, cut short when the proxy closes.
	copied := make(chan struct{})
	go func() {
		select {
		case <-f.done:
			resp.Body.Close()
		case <-copied:
		}
	}()
	io.Copy(io.Discard, resp.Body)
	close(copied)
	resp.Body.Close()
}

// hold waits for r's turn among the answers r holds; it reports false when
// the host went away or the tap stopped first.
// n is what the answer holds: past chaos.MaxHeldBytes for all the rules,
// r's answers are released at once.
func (f *httpFaults) hold(ctx context.Context, ex *exchange, r *chaos.Rule, n int) bool {
	me := make(chan struct{})
	f.mu.Lock()
	h := f.held[r]
	if h == nil {
		h = &httpHold{}
		f.held[r] = h
		h.timer = time.AfterFunc(time.Duration(r.MinMS)*time.Millisecond, func() { f.release(r, h, ex) })
	}
	h.waiters = append(h.waiters, me)
	h.bytes += n
	f.heldBytes += n
	full := len(h.waiters) >= r.Window || f.heldBytes > chaos.MaxHeldBytes
	f.mu.Unlock()
	if full {
		go f.release(r, h, ex)
	}
	select {
	case <-me:
		return true
	case <-ctx.Done():
	case <-f.done:
	}
	return false
}

// release lets the answers h holds go, in r's order, releaseGap apart.
func (f *httpFaults) release(r *chaos.Rule, h *httpHold, ex *exchange) {
	f.mu.Lock()
	if f.held[r] != h {
		f.mu.Unlock()
		return
	}
	delete(f.held, r)
	f.heldBytes -= h.bytes
	h.timer.Stop()
	f.mu.Unlock()
	frames := make([][][]byte, len(h.waiters))
	for i := range frames {
		frames[i] = [][]byte{[]byte(strconv.Itoa(i))}
	}
	how := "reversed"
	if r.Shuffle {
		how = "shuffled"
	}
	f.fault(ex, chaos.Note{Text: fmt.Sprintf("fault rule %d (%s) released %d held answer(s) to-host, %s", r.N, r.Text, len(frames), how), Rule: r.N, Action: r.Action, Dir: chaos.ToHost})
	for k, fr := range f.e.Release(r, chaos.ToHost, frames) {
		i, _ := strconv.Atoi(string(fr[0]))
		if k > 0 && !f.sleep(context.Background(), releaseGap) {
			for _, w := range h.waiters {
				closeOnce(w)
			}
			return
		}
		closeOnce(h.waiters[i])
	}
}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// response applies the rules to an answer on its way to the host, before
// its headers go: a JSON body is read whole and replaced; an SSE stream
// is rewritten event by event as it comes. It returns an error when the
// answer must not reach the host at all (dropped: held until the host
// gives up; the error is then not shown to anyone).
func (f *httpFaults) response(resp *http.Response, ex *exchange, ctype string) error {
	ctx := resp.Request.Context()
	switch ctype {
	case "application/json":
		return f.jsonResponse(resp, ex, ctx)
	case "text/event-stream":
		pr, pw := io.Pipe()
		go f.sseStream(ctx, ex, resp.Request, resp.Body, pw)
		resp.Body = pr
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	return nil
}

// errDropped ends a response a rule dropped.
var errDropped = fmt.Errorf("sonde tap: the answer was dropped by a fault rule")

func (f *httpFaults) jsonResponse(resp *http.Response, ex *exchange, ctx context.Context) error {
	max := f.p.opts.MaxMessageBytes
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil || len(body) > max {
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
		return nil
	}
	resp.Body.Close()
	eff := f.e.Apply(chaos.ToHost, bytes.TrimSpace(body))
	if !eff.Matched() && len(ex.noise) == 0 {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	f.effects(ex, eff)
	if !f.sleep(ctx, eff.Delay) {
		return errDropped
	}
	if eff.Hold != nil {
		if !f.hold(ctx, ex, eff.Hold, size(eff.Lines)) {
			return errDropped
		}
	}
	if len(eff.Lines) == 0 || eff.Close != nil {
		if eff.Close != nil {
			f.closeSession(resp.Request.Header.Get("Mcp-Session-Id"), eff.Close.N)
		}
		<-merge(ctx.Done(), f.done)
		return errDropped
	}
	lines := append(append([][]byte(nil), ex.noise...), eff.ToHost...)
	lines = append(lines, eff.Lines...)
	if len(lines) == 1 && len(eff.Later) == 0 {
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(lines[0])), int64(len(lines[0]))
		resp.Header.Set("Content-Length", strconv.Itoa(len(lines[0])))
		return nil
	}
	// Several messages (or noise) cannot be one JSON body: they go as an
	// SSE stream, which a host must accept for a POST's answer, written
	// one event after another as the host reads them (never all built at
	// once: up to chaos.MaxCopies copies).
	resp.Header.Set("Content-Type", "text/event-stream")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	later := len(eff.Later) > 0
	held := size(eff.Later)
	if later && !f.reserveLater(ex, eff, held) {
		later, held = false, 0
	}
	pr, pw := io.Pipe()
	go func() {
		defer f.releaseLater(held)
		write := func(b []byte) error { _, err := pw.Write(b); return err }
		if writeEvents(write, nil, lines) == nil && later && f.sleep(ctx, eff.LaterBy) {
			writeEvents(write, nil, eff.Later)
		}
		pw.Close()
	}()
	resp.Body = pr
	return nil
}

// writeEvents writes each of lines as the data of an SSE event with the
// type, id and retry of like (nil: none), one event a write, through one
// buffer.
func writeEvents(write func([]byte) error, like *transport.SSEEvent, lines [][]byte) error {
	var b []byte
	ev := transport.SSEEvent{HasData: true}
	if like != nil {
		ev.Event, ev.ID, ev.HasID, ev.Retry, ev.HasRetry = like.Event, like.ID, like.HasID, like.Retry, like.HasRetry
	}
	for _, l := range lines {
		ev.Data = l
		b = transport.AppendSSEEvent(b[:0], &ev)
		if err := write(b); err != nil {
			return err
		}
	}
	return nil
}

// sseStream copies an SSE stream to pw, applying the rules to the data of
// each event (the other fields of an event, its id among them, go with
// each copy of its data).
func (f *httpFaults) sseStream(ctx context.Context, ex *exchange, req *http.Request, up io.ReadCloser, pw *io.PipeWriter) {
	defer up.Close()
	var mu sync.Mutex // pw: the stream, and duplicates sent later
	write := func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := pw.Write(b)
		return err
	}
	noise := ex.noise
	var ev []byte
	atStart := true // the next event begins the stream
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		ev = append(ev, buf[:n]...)
		for {
			end := transport.SSEEventEnd(ev)
			if end < 0 {
				break
			}
			out, stop := f.sseEvent(ctx, ex, req, ev[:end], atStart, &noise, write)
			ev, atStart = ev[end:], false
			if len(out) > 0 {
				if werr := write(out); werr != nil {
					return
				}
			}
			if stop {
				pw.Close()
				return
			}
		}
		if len(ev) > f.p.opts.MaxMessageBytes {
			// Too long to hold as one event: it passes as it comes.
			if werr := write(ev); werr != nil {
				return
			}
			ev, atStart = ev[:0], false
		}
		if err != nil {
			if len(ev) > 0 {
				write(ev)
			}
			if err == io.EOF {
				pw.Close()
			} else {
				pw.CloseWithError(err)
			}
			return
		}
	}
}

// sseEvent applies the rules to one event (its bytes up to and with the
// blank line that ends it; atStart: they begin the stream) and returns
// what goes to the host, and whether the stream ends there. An event the
// rules change is written anew (transport.AppendSSEEvent: its type, id and
// retry with each copy of its data; its comments are not kept).
func (f *httpFaults) sseEvent(ctx context.Context, ex *exchange, req *http.Request, raw []byte, atStart bool, noise *[][]byte, write func([]byte) error) ([]byte, bool) {
	ev, ok := transport.ParseSSEEvent(raw, atStart)
	if !ok || !ev.HasData || (ev.Event != "" && ev.Event != "message") {
		return raw, false // no data (a comment, a priming event), or not a message (endpoint)
	}
	eff := f.e.Apply(chaos.ToHost, ev.Data)
	if !eff.Matched() && len(*noise) == 0 {
		return raw, false
	}
	f.effects(ex, eff)
	for _, l := range eff.Back {
		// The answer to a server's request: the host would POST it.
		if req.Method == http.MethodPost {
			go f.post(req, ex, l, 0)
		} else {
			f.note(ex, fmt.Sprintf("sonde tap: the error answer for %s cannot be sent: the legacy transport's POST endpoint is the host's", ex.stream))
		}
	}
	if !f.sleep(ctx, eff.Delay) {
		return nil, true
	}
	if eff.Hold != nil && !f.hold(ctx, ex, eff.Hold, size(eff.Lines)) {
		return nil, true
	}
	if eff.Close != nil {
		return nil, true
	}
	// One event a write: the copies (up to chaos.MaxCopies) are never
	// built at once.
	lines := append(append([][]byte(nil), *noise...), eff.ToHost...)
	*noise = nil
	if writeEvents(write, nil, lines) != nil || writeEvents(write, &ev, eff.Lines) != nil {
		return nil, true
	}
	if held := size(eff.Later); len(eff.Later) > 0 && f.reserveLater(ex, eff, held) {
		later := make([][]byte, len(eff.Later))
		for i, l := range eff.Later { // the event's bytes are reused: copied, each distinct one once
			if i > 0 && len(l) == len(eff.Later[i-1]) && (len(l) == 0 || &l[0] == &eff.Later[i-1][0]) {
				later[i] = later[i-1]
				continue
			}
			later[i] = append([]byte(nil), l...)
		}
		like := transport.SSEEvent{Event: ev.Event, ID: ev.ID, HasID: ev.HasID, Retry: ev.Retry, HasRetry: ev.HasRetry}
		go func() {
			defer f.releaseLater(held)
			if f.sleep(ctx, eff.LaterBy) {
				writeEvents(write, &like, later)
			}
		}()
	}
	if eff.Stall > 0 && !f.sleep(ctx, eff.Stall) {
		return nil, true
	}
	return nil, false
}

// merge is a channel closed when a or b is.
func merge(a, b <-chan struct{}) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		select {
		case <-a:
		case <-b:
		}
		close(c)
	}()
	return c
}

// readCloser reads from r and closes c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }
