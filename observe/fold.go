package observe

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Mode says whose session a Folder follows.
type Mode uint8

const (
	// ModeClient: sonde drives the session. Its requests are CLIENT spans
	// whose ids are the traceparent sonde put in their _meta (Injector);
	// the server's requests are SERVER spans.
	ModeClient Mode = iota
	// ModeTap: sonde tap watches a host and a server. The host's requests
	// are CLIENT spans and the server's SERVER spans, the spans the host
	// would emit, each parented on the traceparent the host put in the
	// request's _meta (passed through untouched) when there is one.
	ModeTap
)

// Defaults of FoldOptions.
const (
	// DefaultHold is how long (in event time) an ended request's span
	// waits for a late or duplicate answer before it is emitted.
	DefaultHold = 5 * time.Second
	// DefaultHoldMax is how many ended spans wait at most; past it the
	// oldest goes out.
	DefaultHoldMax = 1024
	// MaxContentBytes bounds gen_ai.tool.call.arguments and .result.
	MaxContentBytes = 32 << 10
)

// FoldOptions configure a Folder.
type FoldOptions struct {
	Mode Mode
	// Parent is the span context sonde's spans are children of
	// (--traceparent); in ModeTap a request's own traceparent wins.
	Parent trace.SpanContext
	// Content adds gen_ai.tool.call.arguments and .result (--otlp-content),
	// passed through Redact first.
	Content bool
	Redact  func([]byte) []byte
	// Hold and HoldMax: see DefaultHold and DefaultHoldMax.
	Hold    time.Duration
	HoldMax int
}

// key names a request: its direction (Out: sonde's or the host's; In: the
// server's) and its id.
type key struct {
	dir client.Direction
	id  jsonrpc.ID
}

// spanEvent is an event of a span, kept until the span is emitted.
type spanEvent struct {
	name  string
	at    time.Time
	attrs []attribute.KeyValue
}

// req is one request followed from its start to its outcome.
type req struct {
	key
	method, tool, prompt, uri string
	start, end                time.Time
	// sc: in ModeClient the ids sent in the request's _meta (the span's
	// own); in ModeTap the host's (the span's parent).
	sc           trace.SpanContext
	args, result []byte
	state        client.State
	errType      string
	desc         string
	code         string // rpc.response.status_code
	version      string // mcp.protocol.version from _meta (modern) or the initialize result
	events       []spanEvent
	// rounds are the earlier rounds of a modern operation answered
	// input_required (oldest first); the request holding them is the last.
	rounds []*req
}

// session is what the spans of one connection share.
type session struct {
	open      bool
	start     time.Time
	transport string
	address   string
	port      int
	protoName string
	// protoVersion is network.protocol.version: the HTTP version of the
	// server's answers ("1.1", "2"); none over stdio.
	protoVersion string
	version      string
	id           string // Mcp-Session-Id
	modern       bool
	traceID      trace.TraceID // for requests that carried no traceparent
	adopted      bool          // traceID is the one sonde's requests carry
	errType      string
}

// Folder turns a client's (or an observer's) events into spans and
// metrics by the OpenTelemetry MCP conventions (docs/otel.md). It is not
// safe for concurrent use: one goroutine applies the events in order.
type Folder struct {
	tracer   trace.Tracer
	metrics  *instruments
	o        FoldOptions
	sess     session
	open     map[key]*req
	waiting  map[key]*req // rounds answered input_required, awaiting their retry
	held     []*req       // ended, waiting a little for a late answer (from heldHead on)
	heldHead int
	heldBy   map[key]*req
	sets     map[setKey]*shared // what the session's spans of one kind share
	scratch  []attribute.KeyValue
	free     []*req                   // emitted, for reuse (newReq)
	kinds    [2]trace.SpanStartOption // client, server
}

// NewFolder returns a folder emitting through t; m records the metrics
// (nil: none).
func NewFolder(t trace.Tracer, m *Metrics, o FoldOptions) *Folder {
	if o.Hold <= 0 {
		o.Hold = DefaultHold
	}
	if o.HoldMax <= 0 {
		o.HoldMax = DefaultHoldMax
	}
	f := &Folder{tracer: t, o: o, open: map[key]*req{}, waiting: map[key]*req{}, heldBy: map[key]*req{}, sets: map[setKey]*shared{},
		kinds: [2]trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithSpanKind(trace.SpanKindServer)}}
	if m != nil {
		f.metrics = m.inst
	}
	return f
}

// Apply folds one event.
func (f *Folder) Apply(ev client.Event) {
	switch ev.Kind {
	case client.EvProcess:
		f.process(ev)
	case client.EvHTTP:
		f.http(ev.Time, ev.HTTP)
	case client.EvFrame:
		f.frame(ev.Frame)
	case client.EvRequest:
		f.request(ev.Time, ev.Req)
	}
	f.Flush(ev.Time)
}

// Flush emits the ended spans that have waited Hold by now.
func (f *Folder) Flush(now time.Time) {
	h := f.heldHead
	for h < len(f.held) && (len(f.held)-h > f.o.HoldMax || now.Sub(f.held[h].end) >= f.o.Hold) {
		f.emitHeld(f.held[h])
		f.held[h] = nil
		h++
	}
	// The emitted spans leave the front; the rest moves down only once
	// it is the smaller part (a copy per span emitted would cost as much
	// as the span).
	switch {
	case h == len(f.held):
		f.held, h = f.held[:0], 0
	case h > len(f.held)/2:
		n := copy(f.held, f.held[h:])
		clear(f.held[n:])
		f.held, h = f.held[:n], 0
	}
	f.heldHead = h
}

// End ends the stream at t: requests without an outcome end there
// (session_closed), the held spans go out, and the session's duration is
// recorded.
func (f *Folder) End(t time.Time) {
	for _, r := range f.waiting {
		f.open[r.key] = r
	}
	f.waiting = map[key]*req{}
	for _, r := range f.open {
		r.end, r.state = t, client.StateClosed
		r.errType, r.desc = ErrTypeClosed, "the session ended before the request's outcome"
		f.finish(r)
	}
	for _, r := range f.held[f.heldHead:] {
		f.emitHeld(r)
	}
	f.held, f.heldHead = nil, 0
	f.endSession(t)
}

func (f *Folder) process(ev client.Event) {
	p := ev.Proc
	switch p.What {
	case client.ProcStart, client.ProcConnect:
		prevTrace := f.sess.traceID
		if f.sess.open {
			f.endSession(ev.Time)
		}
		clear(f.sets)
		f.sess = session{open: true, start: ev.Time, traceID: newTraceID(), adopted: f.sess.adopted}
		if f.sess.adopted {
			f.sess.traceID = prevTrace
		}
		if f.o.Parent.IsValid() {
			f.sess.traceID = f.o.Parent.TraceID()
		}
		if p.What == client.ProcStart {
			f.sess.transport = "pipe"
			return
		}
		f.sess.transport = "tcp"
		f.sess.protoName = "http"
		if len(p.Argv) > 0 {
			f.sess.address, f.sess.port = hostPort(p.Argv[0])
		}
	case client.ProcExit:
		if p.Exit != nil && (p.Exit.Code != 0 || p.Exit.Signal != "") {
			f.sess.errType = ErrTypeProcessExit
		}
	case client.ProcSpawnFailed:
		f.sess = session{}
		clear(f.sets) // made from the session that is gone
	}
}

// hostPort reads server.address and server.port from a server's URL.
func hostPort(raw string) (string, int) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, _ := strconv.Atoi(port)
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	return host, n
}

// http learns the session id from the answers' Mcp-Session-Id.
//
// An exchange before any process or connect event is the HTTP tap's (the
// proxy's exchange with the server, whose URL it carries): it opens the
// session, over tcp, in the trace the spans so far took.
func (f *Folder) http(at time.Time, h *client.HTTPEvent) {
	if !f.sess.open && h.URL != "" {
		tid := f.sess.traceID
		f.sess = session{open: true, start: at, traceID: tid, transport: "tcp", protoName: "http"}
		if !tid.IsValid() {
			f.sess.traceID = newTraceID()
		}
		f.sess.address, f.sess.port = hostPort(h.URL)
		clear(f.sets)
	}
	if v := httpVersion(h.Proto); v != "" && v != f.sess.protoVersion {
		f.sess.protoVersion = v
		clear(f.sets)
	}
	for _, line := range h.Header {
		name, v, ok := strings.Cut(strings.TrimPrefix(line, "< "), ":")
		if ok && line != name && strings.EqualFold(strings.TrimSpace(name), "Mcp-Session-Id") {
			f.sess.id = strings.TrimSpace(v)
		}
	}
}

// httpVersion is network.protocol.version of an HTTP response's proto
// ("HTTP/1.1": "1.1", "HTTP/2.0": "2", as the conventions write them), or
// "" when proto is not an HTTP version.
func httpVersion(proto string) string {
	major, minor, ok := http.ParseHTTPVersion(proto)
	switch {
	case !ok:
		return ""
	case major >= 2 && minor == 0:
		return strconv.Itoa(major)
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
}
