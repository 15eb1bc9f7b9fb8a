package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// hostSession is what an HTTP tap learnt of the host's session, for the
// requests sonde injects into it: the path its POSTs go to and the
// headers that make a request part of the session.
type hostSession struct {
	mu     sync.Mutex
	path   string // the URL path (and query) of the host's last POST
	header http.Header
	seq    uint64
}

// sessionHeaders are the headers an injected request takes from the
// host's last POST: the session, the protocol version, and the
// credentials the host gave this server (the request goes to the same
// server, at the user's word).
var sessionHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Authorization", "Cookie"}

// learn keeps what an injected request needs from a host's POST.
func (s *hostSession) learn(r *http.Request) {
	if r.Method != http.MethodPost {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.path = r.URL.RequestURI()
	s.header = http.Header{}
	for _, k := range sessionHeaders {
		if v := r.Header.Values(k); len(v) > 0 {
			s.header[k] = append([]string(nil), v...)
		}
	}
}

// learnAnswer keeps the session id a server's answer gave the host (the
// answer to initialize starts the session before the host's next POST
// carries it).
func (s *hostSession) learnAnswer(resp *http.Response) {
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" || resp.Request == nil || resp.Request.Method != http.MethodPost {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.header != nil && s.header.Get("Mcp-Session-Id") == "" {
		s.header.Set("Mcp-Session-Id", sid)
	}
}

// Inject sends req (a JSON-RPC request line) to the server in the host's
// session, through the proxy (so it is observed and recorded like the
// host's requests, with a note), and returns the answer with req's own id
// put back. The host is not involved: the answer comes back on the
// injected POST's own response. It needs a session the host has opened
// (one POST of the host's went through).
func (p *Proxy) Inject(ctx context.Context, req []byte) ([]byte, error) {
	msg, own, err := parseInjected(req)
	if err != nil {
		return nil, err
	}
	s := &p.session
	s.mu.Lock()
	if s.path == "" {
		s.mu.Unlock()
		return nil, ErrNoSession
	}
	s.seq++
	id, _ := json.Marshal("sonde-inject-" + strconv.FormatUint(s.seq, 10))
	path, header := s.path, s.header.Clone()
	s.mu.Unlock()
	msg["id"] = id
	body, _ := json.Marshal(msg)

	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1"+path, bytes.NewReader(body))
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
	for len(body) > 0 {
		end := eventEnd(body)
		if end < 0 {
			end = len(body)
		}
		if _, data, ok := splitEvent(body[:end]); ok && match(data) {
			return data
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
