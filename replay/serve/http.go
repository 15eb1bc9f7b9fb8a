package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sonde-mcp/sonde/internal/loopback"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// SessionHeader is the Streamable HTTP session header.
const SessionHeader = "Mcp-Session-Id"

// MaxSessions is how many client sessions a Handler keeps at once: the
// session past it ends the oldest (as a DELETE would), and the log says
// so. A client that never ends its session costs no more than that.
const MaxSessions = 256

// maxStreamBytes is what may wait on one stream for its reader, besides
// its 256 lines: a line past it is lost, as when the lines are 256.
const maxStreamBytes = 16 << 20

// Handler serves a script over HTTP: Streamable HTTP on every path but
// /sse and /message, and the legacy HTTP+SSE transport on those two. Each
// client session (an initialize, or a GET /sse) gets a mock of its own, as
// Serve runs it on stdio: every recorded answer unplayed, the same
// matching and synthesized answers. Close ends the sessions.
type Handler struct {
	script *Script
	o      Options
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*httpSession
	made     uint64     // sessions made so far (each one's seq)
	sharedMu sync.Mutex // one shared session is made at a time
	wg       sync.WaitGroup
}

// NewHandler returns a Handler serving s with o (Options.Stderr and
// Options.Log are shared by the sessions; MaxLineBytes caps a POST body).
// It checks o.Session against the script first.
func NewHandler(s *Script, o Options) (*Handler, error) {
	if _, err := s.session(o.Session, o); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = transport.DefaultMaxLineBytes
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Handler{script: s, o: o, ctx: ctx, cancel: cancel, sessions: map[string]*httpSession{}}, nil
}

// Close ends every session and waits for their mocks to stop.
func (h *Handler) Close() {
	h.cancel()
	h.mu.Lock()
	for id, s := range h.sessions {
		s.in.Close()
		delete(h.sessions, id)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// httpSession is one client's mock: Serve reading from in, writing to the
// session's router (its Write).
type httpSession struct {
	id     string
	seq    uint64         // the order it was made in (the oldest ends first)
	legacy bool           // HTTP+SSE: every line goes to the GET stream
	in     *io.PipeWriter // the mock's input; closing it ends the mock
	to     io.Writer      // where a client's message goes: in, or Options.Wrap's writer
	done   chan struct{}  // closed when the mock ended
	log    io.Writer

	mu      sync.Mutex
	err     error              // why the mock ended
	pending map[string]*stream // POSTs waiting for their response, by the caller's id
	streams []*stream          // open POST streams (SSE), oldest first
	get     *stream            // the GET stream
	inMu    sync.Mutex         // one message into in at a time
}

// stream is where the lines for one HTTP response go: at most 256 writes
// and maxStreamBytes wait for its reader.
type stream struct {
	ch    chan []byte
	bytes atomic.Int64 // what waits in ch
}

func newStream() *stream { return &stream{ch: make(chan []byte, 256)} }

// send queues a line; a stream whose reader is too slow loses it.
func (st *stream) send(line []byte) bool {
	if st.bytes.Add(int64(len(line))) > maxStreamBytes {
		st.bytes.Add(-int64(len(line)))
		return false
	}
	select {
	case st.ch <- line:
		return true
	default:
		st.bytes.Add(-int64(len(line)))
		return false
	}
}

// take is what the reader does with each line it gets from ch: it no
// longer waits.
func (st *stream) take(lines []byte) []byte {
	st.bytes.Add(-int64(len(lines)))
	return lines
}

// newSession starts a mock for one client, under a new random id (shared:
// under "", the session of the clients that send no session id).
func (h *Handler) newSession(legacy, shared bool) *httpSession {
	id := ""
	if !shared {
		b := make([]byte, 16)
		rand.Read(b)
		id = hex.EncodeToString(b)
	}
	pr, pw := io.Pipe()
	s := &httpSession{id: id, legacy: legacy, in: pw, to: pw, done: make(chan struct{}), log: h.o.Log, pending: map[string]*stream{}}
	var out io.Writer = s
	unwrap := func() {}
	if h.o.Wrap != nil {
		s.to, out, unwrap = h.o.Wrap(pw, s)
	}
	h.mu.Lock()
	h.made++
	s.seq = h.made
	h.sessions[s.id] = s
	var oldest *httpSession
	if len(h.sessions) > MaxSessions {
		for _, o := range h.sessions {
			if o != s && (oldest == nil || o.seq < oldest.seq) {
				oldest = o
			}
		}
		delete(h.sessions, oldest.id)
	}
	h.mu.Unlock()
	if oldest != nil {
		fmt.Fprintf(h.o.Log, "sonde replay: %d sessions open, the most kept: ended the oldest session %s\n", MaxSessions+1, oldest.id)
		oldest.in.Close()
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		err := Serve(h.ctx, h.script, pr, out, h.o)
		unwrap()
		pr.CloseWithError(io.ErrClosedPipe)
		var exit *ExitError
		if errors.As(err, &exit) {
			fmt.Fprintf(h.o.Log, "sonde replay: session %s: %v\n", s.id, exit)
		}
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
		h.mu.Lock()
		if h.sessions[s.id] == s {
			delete(h.sessions, s.id)
		}
		h.mu.Unlock()
	}()
	return s
}

// Write routes one line the mock wrote: a response to the POST waiting for
// it; anything else to the newest open POST stream, else the GET stream,
// else nowhere (logged). A line that is not JSON cannot travel over HTTP.
//
// Several lines in one Write (what a fault rule made of one line: copies,
// noise before it) travel together, routed by the last one, and reach the
// client in one write (up to 1 MiB of them: chaos writes more in batches):
// a copy of an answer comes before its stream ends.
func (s *httpSession) Write(p []byte) (int, error) {
	_ = s.send(p)
	return len(p), nil
}

// errNoStream is what send returns for a line no stream took (it was
// logged and dropped): a held frame's Deliver reports it (CodeUndelivered);
// it never ends the session.
var errNoStream = errors.New("no open stream of the session takes it")

// send routes p as Write says, and returns errNoStream when it was dropped.
func (s *httpSession) send(p []byte) error {
	lines := bytes.TrimRight(p, "\r\n")
	line := lines[bytes.LastIndexByte(lines, '\n')+1:]
	msg, err := jsonrpc.Decode(line)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		fmt.Fprintf(s.log, "sonde replay: session %s: a recorded line that is not a JSON-RPC message cannot be sent over HTTP: dropped: %.60q\n", s.id, line)
		return errNoStream
	}
	out := append([]byte(nil), lines...)
	if s.legacy {
		if s.get == nil || !s.get.send(out) {
			fmt.Fprintf(s.log, "sonde replay: session %s: no SSE stream: dropped %.60q\n", s.id, line)
			return errNoStream
		}
		return nil
	}
	if msg.Kind == jsonrpc.KindResponse {
		if st := s.pending[msg.ID.String()]; st != nil {
			delete(s.pending, msg.ID.String())
			st.send(out)
			return nil
		}
	}
	for i := len(s.streams) - 1; i >= 0; i-- {
		if s.streams[i].send(out) {
			return nil
		}
	}
	if s.get != nil && s.get.send(out) {
		return nil
	}
	fmt.Fprintf(s.log, "sonde replay: session %s: no open stream for %.60q: dropped\n", s.id, line)
	return errNoStream
}

// WriteFor routes a line played for the request the caller sent with id:
// to that request's stream when it is still open, else as Write does.
func (s *httpSession) WriteFor(id, p []byte) (int, error) {
	var rid jsonrpc.ID
	if s.legacy || rid.UnmarshalJSON(id) != nil {
		return len(p), s.send(p)
	}
	line := bytes.TrimRight(p, "\r\n")
	msg, err := jsonrpc.Decode(line)
	if err != nil || msg.Kind == jsonrpc.KindResponse {
		return len(p), s.send(p)
	}
	s.mu.Lock()
	st := s.pending[rid.String()]
	open := false
	for _, o := range s.streams {
		open = open || o == st
	}
	if st != nil && open && st.send(append([]byte(nil), line...)) {
		s.mu.Unlock()
		return len(p), nil
	}
	s.mu.Unlock()
	return len(p), s.send(p)
}

// deliver writes one message (compacted to one line) into the mock.
func (s *httpSession) deliver(body []byte) error {
	var buf bytes.Buffer
	if json.Compact(&buf, body) != nil {
		buf.Reset()
		buf.Write(bytes.ReplaceAll(body, []byte("\n"), []byte(" ")))
	}
	buf.WriteByte('\n')
	s.inMu.Lock()
	defer s.inMu.Unlock()
	_, err := s.to.Write(buf.Bytes())
	return err
}

// ServeHTTP answers one HTTP request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.o.LoopbackOnly && (!loopback.Host(r.Host) || !loopback.Origin(r.Header.Get("Origin"))) {
		fmt.Fprintf(h.o.Log, "sonde replay: refused a request with Host %.200q, Origin %.200q: not loopback (DNS rebinding?)\n", r.Host, r.Header.Get("Origin"))
		http.Error(w, "sonde replay: Host and Origin must be loopback", http.StatusForbidden)
		return
	}
	switch {
	case r.URL.Path == "/sse" && r.Method == http.MethodGet:
		h.legacyStream(w, r)
	case r.URL.Path == "/message" && r.Method == http.MethodPost:
		h.legacyPost(w, r)
	case r.Method == http.MethodPost:
		h.post(w, r)
	case r.Method == http.MethodGet:
		h.getStream(w, r)
	case r.Method == http.MethodDelete:
		s := h.lookup(r.Header.Get(SessionHeader))
		if s == nil {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		h.end(s)
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h *Handler) lookup(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// end closes a session's input: its mock ends as at stdin's end.
func (h *Handler) end(s *httpSession) {
	h.mu.Lock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
	h.mu.Unlock()
	s.in.Close()
}

// readMessage reads a POST body: one JSON-RPC message. On failure it has
// answered.
func (h *Handler) readMessage(w http.ResponseWriter, r *http.Request) ([]byte, jsonrpc.Message, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(h.o.MaxLineBytes)+1))
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return nil, jsonrpc.Message{}, false
	}
	if len(body) > h.o.MaxLineBytes {
		writeJSONError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("body longer than %d bytes", h.o.MaxLineBytes))
		return nil, jsonrpc.Message{}, false
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		writeJSONError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "batches are not supported")
		return nil, jsonrpc.Message{}, false
	}
	msg, err := jsonrpc.Decode(body)
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) && de.Class == jsonrpc.ClassNotJSON {
			writeJSONError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "parse error: the body is not JSON")
		} else {
			writeJSONError(w, http.StatusBadRequest, msg.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		}
		return nil, jsonrpc.Message{}, false
	}
	return body, msg, true
}

func writeJSONError(w http.ResponseWriter, status int, id jsonrpc.ID, code int, text string) {
	b, _ := jsonrpc.EncodeError(id, &jsonrpc.Error{Code: int64(code), Message: "sonde replay: " + text})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// post is a Streamable HTTP POST: a request is answered with its response
// (SSE when the client accepts it, with the lines played before the
// response; else JSON), anything else with 202.
func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	body, msg, ok := h.readMessage(w, r)
	if !ok {
		return
	}
	s := h.route(w, r, msg)
	if s == nil {
		return
	}
	if msg.Kind != jsonrpc.KindRequest {
		if err := s.deliver(body); err != nil {
			http.Error(w, "the session ended", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// SSE when the client accepts it, unless the recorded server answered
	// as JSON and the client accepts JSON too.
	accept := r.Header.Get("Accept")
	sse := strings.Contains(accept, "text/event-stream") &&
		!(h.script.HTTPAnswers == "json" && (strings.Contains(accept, "application/json") || strings.Contains(accept, "*/*")))
	key := msg.ID.String()
	st := s.open(key, sse)
	defer s.closeStream(key, st)
	if err := s.deliver(body); err != nil {
		http.Error(w, "the session ended", http.StatusNotFound)
		return
	}
	s.answer(w, r, st, key, sse)
}

// route finds the mock session a POST goes to: a new one for an
// initialize, the one its session header names, or the shared one of the
// clients without a session. It answers the POST itself (and returns nil)
// for an unknown session.
func (h *Handler) route(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message) *httpSession {
	sid := r.Header.Get(SessionHeader)
	var s *httpSession
	switch {
	case msg.Kind == jsonrpc.KindRequest && msg.Method == mcp.MethodInitialize:
		s = h.newSession(false, false)
		w.Header().Set(SessionHeader, s.id)
	case sid != "":
		if s = h.lookup(sid); s == nil || s.legacy {
			http.Error(w, "unknown session", http.StatusNotFound)
			return nil
		}
	default:
		// No session (a modern-era client, or a lenient one): one shared
		// mock for the clients without a session.
		h.sharedMu.Lock()
		if s = h.lookup(""); s == nil {
			s = h.newSession(false, true)
		}
		h.sharedMu.Unlock()
	}
	return s
}

// open registers the stream that waits the answer to request key (and,
// for SSE, takes the session's other messages meanwhile).
func (s *httpSession) open(key string, sse bool) *stream {
	st := newStream()
	s.mu.Lock()
	s.pending[key] = st
	if sse {
		s.streams = append(s.streams, st)
	}
	s.mu.Unlock()
	return st
}

// closeStream forgets a stream open registered.
func (s *httpSession) closeStream(key string, st *stream) {
	s.mu.Lock()
	if s.pending[key] == st {
		delete(s.pending, key)
	}
	for i, o := range s.streams {
		if o == st {
			s.streams = append(s.streams[:i:i], s.streams[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
}

// answer writes what the mock says on st until the answer to request key:
// that answer alone as JSON, or every line as SSE events.
func (s *httpSession) answer(w http.ResponseWriter, r *http.Request, st *stream, key string, sse bool) {
	flusher, _ := w.(http.Flusher)
	started := false
	for {
		select {
		case lines := <-st.ch:
			lines = st.take(lines)
			final := false
			for line := range bytes.SplitSeq(lines, []byte("\n")) {
				m, _ := jsonrpc.Decode(line)
				if m.Kind == jsonrpc.KindResponse && m.ID.String() == key {
					if !sse && !final {
						w.Header().Set("Content-Type", "application/json")
						w.Write(line)
					}
					final = true
				}
			}
			if !sse {
				if final {
					return
				}
				continue
			}
			if !started {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Cache-Control", "no-cache")
				w.WriteHeader(http.StatusOK)
				started = true
			}
			writeEvents(w, lines)
			if flusher != nil {
				flusher.Flush()
			}
			if final {
				return
			}
		case <-s.done:
			if !started {
				s.ended(w)
			}
			return
		case <-r.Context().Done():
			return
		}
	}
}

// ended answers a POST whose mock session ended before it said anything.
func (s *httpSession) ended(w http.ResponseWriter) {
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	msg := "the mock session ended"
	if err != nil {
		msg += ": " + err.Error()
	}
	http.Error(w, msg, http.StatusBadGateway)
}

// writeEvents writes each line of lines as an SSE message event.
func writeEvents(w io.Writer, lines []byte) {
	for line := range bytes.SplitSeq(lines, []byte("\n")) {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", line)
	}
}

// getStream is the Streamable HTTP GET: the stream of what the mock
// plays outside a request (one per session).
func (h *Handler) getStream(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "GET opens an event stream: Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	s := h.lookup(r.Header.Get(SessionHeader))
	if s == nil || s.legacy {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	h.pump(w, r, s, "")
}

// pump holds an SSE stream open and writes what the session sends to its
// GET stream, after first (an event written first, e.g. legacy's
// endpoint).
func (h *Handler) pump(w http.ResponseWriter, r *http.Request, s *httpSession, first string) {
	st := newStream()
	s.mu.Lock()
	if s.get != nil {
		s.mu.Unlock()
		http.Error(w, "a stream is already open for this session", http.StatusConflict)
		return
	}
	s.get = st
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.get == st {
			s.get = nil
		}
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	io.WriteString(w, first)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case lines := <-st.ch:
			writeEvents(w, st.take(lines))
			if flusher != nil {
				flusher.Flush()
			}
		case <-s.done:
			return
		case <-h.ctx.Done():
			return
		case <-r.Context().Done():
			if s.legacy {
				h.end(s)
			}
			return
		}
	}
}

// legacyStream is the legacy transport's GET /sse: a new session, its
// endpoint event, then every line the mock writes.
func (h *Handler) legacyStream(w http.ResponseWriter, r *http.Request) {
	s := h.newSession(true, false)
	h.pump(w, r, s, "event: endpoint\ndata: /message?sessionId="+s.id+"\n\n")
}

// legacyPost is the legacy transport's POST /message?sessionId=…: the
// message goes to the mock, the answer comes on the SSE stream.
func (h *Handler) legacyPost(w http.ResponseWriter, r *http.Request) {
	s := h.lookup(r.URL.Query().Get("sessionId"))
	if s == nil || !s.legacy {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	body, _, ok := h.readMessage(w, r)
	if !ok {
		return
	}
	if err := s.deliver(body); err != nil {
		http.Error(w, "the session ended", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "Accepted")
}
