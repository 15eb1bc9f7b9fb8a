package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// hostSession is what an injected request needs of a host's session: the
// path its POSTs go to and the headers that make a request part of it.
type hostSession struct {
	path   string // the URL path (and query) of the host's last POST
	header http.Header
}

// maxHostSessions bounds the sessions an HTTP tap keeps for injection;
// past it the oldest is forgotten (an injection into it is refused).
const maxHostSessions = 1024

// hostSessions is what an HTTP tap learnt of its hosts' sessions, for
// the requests sonde injects: each session's (by its Mcp-Session-Id, or a
// legacy session's key, LegacySession), and the latest POST's whatever
// its session (the tap's own socket injects there).
type hostSessions struct {
	mu    sync.Mutex
	by    map[string]*hostSession
	order []string // the keys of by, oldest first
	last  *hostSession
	seq   uint64
}

// sessionHeaders are the headers an injected request takes from the
// host's last POST: the session, the protocol version, and the
// credentials the host gave this server (the request goes to the same
// server, at the user's word).
var sessionHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Authorization", "Cookie"}

// sessionOf is what an injected request takes of a host's POST with
// header to uri.
func sessionOf(uri string, header http.Header) *hostSession {
	s := &hostSession{path: uri, header: http.Header{}}
	for _, k := range sessionHeaders {
		if v := header.Values(k); len(v) > 0 {
			s.header[k] = append([]string(nil), v...)
		}
	}
	return s
}

// learn keeps what an injected request needs from a host's POST, in
// session key's place ("": the POST belongs to no session yet).
func (s *hostSessions) learn(r *http.Request, key string) {
	if r.Method != http.MethodPost {
		return
	}
	hs := sessionOf(r.URL.RequestURI(), r.Header)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = hs
	if key != "" {
		s.putLocked(key, hs)
	}
}

// learnAnswer keeps the session id a server's answer to ex gave the host:
// the answer to initialize starts the session before the host's next POST
// carries it.
func (s *hostSessions) learnAnswer(resp *http.Response, ex *exchange) {
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" || ex.method != http.MethodPost || ex.session != "" {
		return
	}
	hs := sessionOf(ex.uri, ex.reqHdr)
	hs.header.Set("Mcp-Session-Id", sid)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(sid, hs)
	if s.last != nil && s.last.header.Get("Mcp-Session-Id") == "" {
		s.last.header.Set("Mcp-Session-Id", sid)
	}
}

func (s *hostSessions) putLocked(key string, hs *hostSession) {
	if s.by == nil {
		s.by = map[string]*hostSession{}
	}
	if _, ok := s.by[key]; !ok {
		if len(s.order) >= maxHostSessions {
			delete(s.by, s.order[0])
			s.order = s.order[1:]
		}
		s.order = append(s.order, key)
	}
	s.by[key] = hs
}

// forget drops session key (the host ended it).
func (s *hostSessions) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.by[key]; !ok {
		return
	}
	delete(s.by, key)
	if i := slices.Index(s.order, key); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
}

// target is where a request injected into session key goes ("": the
// latest POST's session), and the injected id it takes.
func (s *hostSessions) target(key string) (path string, header http.Header, id json.RawMessage, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.last
	if key != "" {
		hs = s.by[key]
		if hs == nil {
			return "", nil, nil, ErrSessionGone
		}
	}
	if hs == nil {
		return "", nil, nil, ErrNoSession
	}
	s.seq++
	id, _ = json.Marshal("sonde-inject-" + strconv.FormatUint(s.seq, 10))
	return hs.path, hs.header.Clone(), id, nil
}

// Inject sends req (a JSON-RPC request line) to the server in the session
// of the host's latest POST; see InjectInto.
func (p *Proxy) Inject(ctx context.Context, req []byte) ([]byte, error) {
	return p.InjectInto(ctx, "", req)
}

// SessionInjector injects into the host's session key (its Mcp-Session-Id,
// or a legacy session's key: the key ProxyOptions.Sessions was called
// with).
func (p *Proxy) SessionInjector(key string) SessionInjector {
	return SessionInjector{p: p, key: key}
}

// SessionInjector injects into one host session of a Proxy.
type SessionInjector struct {
	p   *Proxy
	key string
}

// Inject sends req into the injector's session (Proxy.InjectInto).
func (s SessionInjector) Inject(ctx context.Context, req []byte) ([]byte, error) {
	return s.p.InjectInto(ctx, s.key, req)
}

// InjectInto sends req (a JSON-RPC request line) to the server in the
// host's session key ("": the session of the host's latest POST), through
// the proxy (so it is observed and recorded like the host's requests,
// with a note), and returns the answer with req's own id put back. The
// host is not involved: the answer comes back on the injected POST's own
// response. It needs a session the host has opened (one POST of the
// host's went through); a legacy HTTP+SSE session is refused
// (ErrLegacyInject: its answers come on the host's own stream).
func (p *Proxy) InjectInto(ctx context.Context, key string, req []byte) ([]byte, error) {
	msg, own, err := parseInjected(req)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(key, LegacySession) {
		return nil, ErrLegacyInject
	}
	path, header, id, err := p.hosts.target(key)
	if err != nil {
		return nil, err
	}
	if p.legacySession(path) != "" {
		return nil, ErrLegacyInject
	}
	msg["id"] = id
	body, _ := json.Marshal(msg)

	r, err := http.NewRequestWithContext(context.WithValue(ctx, injectedKey{}, true), http.MethodPost, "http://127.0.0.1"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header = header
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Host = "127.0.0.1"
	p.offer(hchunk{kind: hkNote, ex: &exchange{session: header.Get("Mcp-Session-Id")}, t: time.Now(), note: fmt.Sprintf("sonde inject: request %s %s sent to the server in the host's session (its own POST; the host sees nothing of it)", id, msg["method"])}, nil)
	w := &answerWriter{header: http.Header{}, max: p.opts.MaxMessageBytes}
	p.ServeHTTP(w, r)
	if w.status >= 300 {
		return nil, fmt.Errorf("the server answered HTTP %d: %s", w.status, bytes.TrimSpace(w.body.Bytes()))
	}
	answer := findAnswer(w.body.Bytes(), mediaType(w.header.Get("Content-Type")), id)
	if answer == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the server's answer to the injected request did not come (HTTP %d)", w.status)
	}
	return withID(answer, own), nil
}

// injectedKey marks the context of an injected request, whose POST
// teaches the proxy nothing of the hosts' sessions.
type injectedKey struct{}

// injected reports whether r is an injected request.
func injected(r *http.Request) bool {
	return r != nil && r.Context().Value(injectedKey{}) != nil
}

// findAnswer is the response with id in a JSON body or an SSE stream.
func findAnswer(body []byte, ctype string, id json.RawMessage) []byte {
	match := func(b []byte) bool {
		got, method := jsonrpc.ScanID(b)
		return !method && got.IsValid() && got.String() == string(id)
	}
	if ctype != "text/event-stream" {
		b := bytes.TrimSpace(body)
		if match(b) {
			return b
		}
		return nil
	}
	for atStart := true; len(body) > 0; atStart = false {
		end, ev := transport.SSEEventEnd(body), body
		if end < 0 {
			// The answer's body is whole: a last event without its
			// blank line is read as if it had one.
			end, ev = len(body), append(body[:len(body):len(body)], "\n\n"...)
		} else {
			ev = body[:end]
		}
		if ev, ok := transport.ParseSSEEvent(ev, atStart); ok && ev.HasData && match(ev.Data) {
			return ev.Data
		}
		body = body[end:]
	}
	return nil
}

// answerWriter is the response writer of an injected request: it keeps
// the status, the headers and up to max bytes of the body.
type answerWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
	max    int
}

func (w *answerWriter) Header() http.Header { return w.header }

func (w *answerWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *answerWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if room := w.max - w.body.Len(); room > 0 {
		w.body.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

// Flush is a no-op: the body is read once the answer is complete.
func (w *answerWriter) Flush() {}
