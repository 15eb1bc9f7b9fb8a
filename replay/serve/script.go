// Package serve turns a capture into a mock MCP server, on stdio (Serve) or
// over HTTP (NewHandler): it answers each request by matching it to a
// recorded client request and playing back what the server wrote after that
// request (its response with the id rewritten to the caller's, and the
// notifications, server requests and malformed lines around it) with their
// recorded timing, and answers on its own the housekeeping a capture rarely
// holds. docs/replay.md describes the matching rules.
package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// LineKind says how a played-back line is adjusted before it is written.
type LineKind uint8

// The kinds of line.
const (
	// Plain lines are written exactly as recorded.
	Plain LineKind = iota
	// Response lines answer their anchor's request: the id is rewritten to
	// the caller's.
	Response
	// Progress lines are notifications/progress for their anchor's request:
	// the progressToken is rewritten to the caller's.
	Progress
	// Stderr lines are a chunk of the server's stderr, written to stderr.
	Stderr
	// Exit lines end the mock as the recorded server ended (Code).
	Exit
)

// Line is one line the recorded server wrote, to be written again Offset
// after its anchor is triggered.
type Line struct {
	Offset time.Duration
	Raw    []byte
	Kind   LineKind
	// Code is the exit status of an Exit line.
	Code int
}

// Anchor is a message the recorded client sent, with the lines the server
// wrote after it (until the client's next message, or up to the response
// they preceded).
type Anchor struct {
	Method string
	t      int64
	Lines  []Line
	// Session is the recorded session (1 for the first; a restart record
	// starts the next) the anchor belongs to.
	Session int
}

// Exchange is a recorded client request and what the server wrote for it.
type Exchange struct {
	Anchor
	// ID is the recorded request's id.
	ID jsonrpc.ID
	// Params are the recorded params.
	Params json.RawMessage
	// Name is the loose-match key: the tool or prompt name, or the resource
	// URI ("" for other methods).
	Name  string
	canon string          // params without _meta, canonical JSON
	token json.RawMessage // the recorded progressToken, if any
	used  int
}

// Script is everything a mock server plays, built from a capture by Build.
type Script struct {
	// Exchanges are the recorded client requests, in recorded order.
	Exchanges []*Exchange
	// Start holds the lines written before the client's first message.
	Start Anchor
	// notes are the client's notifications by method, in order;
	// answers are the client's responses to server requests, by id.
	notes   map[string][]*Anchor
	answers map[string]*Anchor
	// Session is the recorded handshake outcome (from the session record).
	ProtocolVersion, ServerName, ServerVersion string
	// Warnings lists what was skipped while building.
	Warnings []string
	// Sessions is how many sessions the capture holds (restart records
	// separate them); 1 for a capture without restarts.
	Sessions int

	// HTTPAnswers says how the recorded server answered POSTed requests
	// over HTTP: "json" when always as application/json, "sse" when ever
	// as text/event-stream, "" when not over HTTP.
	HTTPAnswers string

	starts   []*Anchor   // the start anchor of each session (starts[0] is &Start)
	sessions []handshake // the session record of each session

	strict    bool   // Options.Strict
	loose     bool   // Options.Loose, and not Strict
	repeat    Repeat // Options.Repeat
	exhausted bool   // the last Match found recorded answers, all played (RepeatFail)
}

// handshake is what a session record says.
type handshake struct{ version, name, serverVersion string }

// Build reads a capture and builds its script. Each line the server wrote
// is given to one anchor: a response to the request with its id; a
// notifications/progress to the request whose progressToken it carries;
// any other line to the request or progress that directly follows it (no
// client message in between), else to the client message it followed, else
// to the start. Records after a restart record belong to a new client: ids
// start again.
func Build(r io.Reader) (*Script, error) {
	rd, err := capture.NewReader(r)
	if err != nil {
		return nil, err
	}
	s := &Script{notes: map[string][]*Anchor{}, answers: map[string]*Anchor{}, Sessions: 1, sessions: []handshake{{}}}
	s.starts = []*Anchor{&s.Start}
	s.Start.Session = 1
	b := &builder{s: s, byID: map[string]*Exchange{}, byToken: map[string]*Exchange{}}
	first := true
	for rec, err := range rd.Good(&s.Warnings) {
		if err != nil {
			return nil, err
		}
		if first {
			s.Start.t, first = rec.T, false
		}
		b.record(rec)
	}
	b.flush(b.lastOrStart())
	s.Warnings = append(s.Warnings, rd.Warnings()...)
	return s, nil
}

// builder is Build's state while it reads a capture.
type builder struct {
	s       *Script
	gen     int // restarts so far
	byID    map[string]*Exchange
	byToken map[string]*Exchange
	// last is the anchor the records read go with (nil: the session's
	// start); buffer holds the server's records not yet given one.
	last   *Anchor
	buffer []capture.Record
}

// key names a request id within its server generation.
func (b *builder) key(id jsonrpc.ID) string { return strconv.Itoa(b.gen) + " " + id.String() }

// lastOrStart is the anchor the records read so far go with.
func (b *builder) lastOrStart() *Anchor {
	if b.last == nil {
		return b.s.starts[b.gen]
	}
	return b.last
}

// flush gives the buffered records to an anchor.
func (b *builder) flush(to *Anchor) {
	for _, rec := range b.buffer {
		b.s.add(to, rec, Plain)
	}
	b.buffer = b.buffer[:0]
}

// record takes one capture record.
func (b *builder) record(rec capture.Record) {
	s := b.s
	switch rec.Type {
	case capture.TypeRestart:
		// What the old server wrote last stays with its session.
		b.flush(b.lastOrStart())
		b.gen++
		s.Sessions++
		s.starts = append(s.starts, &Anchor{t: rec.T, Session: b.gen + 1})
		s.sessions = append(s.sessions, handshake{})
		b.last = nil
	case capture.TypeSession:
		s.sessions[b.gen] = handshake{rec.ProtocolVersion, rec.ServerName, rec.ServerVersion}
		if b.gen == 0 {
			s.ProtocolVersion, s.ServerName, s.ServerVersion = rec.ProtocolVersion, rec.ServerName, rec.ServerVersion
		}
	case capture.TypeHTTP:
		s.noteHTTP(rec)
	case capture.TypeFrame:
		if rec.Dir == capture.DirOut {
			b.sent(rec)
		} else {
			b.received(rec)
		}
	case capture.TypeStderr:
		b.buffer = append(b.buffer, rec)
	case capture.TypeProcess:
		// An exit the server chose (not sonde's close) is played too.
		if rec.What == string(client.ProcExit) && rec.Exit != nil && !rec.Exit.ByClose {
			b.buffer = append(b.buffer, rec)
		}
	}
}

// sent takes a frame the client sent: it anchors what the server wrote
// after it.
func (b *builder) sent(rec capture.Record) {
	s := b.s
	b.flush(b.lastOrStart())
	switch {
	case rec.Kind == capture.KindRequest && rec.ID != nil:
		ex, err := newExchange(rec, b.gen+1)
		if err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("capture line %d: %v", rec.Line, err))
			return
		}
		s.Exchanges = append(s.Exchanges, ex)
		b.byID[b.key(*rec.ID)] = ex
		if len(ex.token) > 0 {
			b.byToken[strconv.Itoa(b.gen)+" "+string(ex.token)] = ex
		}
		b.last = &ex.Anchor
	case rec.Kind == capture.KindNotification:
		a := &Anchor{Method: rec.Method, t: rec.T, Session: b.gen + 1}
		s.notes[rec.Method] = append(s.notes[rec.Method], a)
		b.last = a
	case rec.Kind == capture.KindResponse && rec.ID != nil:
		a := &Anchor{t: rec.T, Session: b.gen + 1}
		s.answers[b.key(*rec.ID)] = a
		b.last = a
	}
}

// received takes a frame the server wrote: a response or a progress
// notification goes with its exchange, anything else waits in the buffer.
func (b *builder) received(rec capture.Record) {
	var owner *Exchange
	kind := Plain
	switch {
	case rec.Kind == capture.KindResponse && rec.ID != nil:
		if owner = b.byID[b.key(*rec.ID)]; owner != nil {
			kind = Response
		}
	case rec.Kind == capture.KindNotification && rec.Method == mcp.MethodProgress:
		if tok := progressToken(rec); tok != nil {
			if owner = b.byToken[strconv.Itoa(b.gen)+" "+string(tok)]; owner != nil {
				kind = Progress
			}
		}
	}
	if owner == nil {
		b.buffer = append(b.buffer, rec)
		return
	}
	b.flush(&owner.Anchor)
	b.s.add(&owner.Anchor, rec, kind)
}

// noteHTTP notes the content type of a recorded POST's answer.
func (s *Script) noteHTTP(rec capture.Record) {
	if rec.HTTP == nil || rec.HTTP.Method != "POST" {
		return
	}
	for _, h := range rec.HTTP.Header {
		name, value, ok := strings.Cut(strings.TrimPrefix(h, "< "), ":")
		if !ok || !strings.HasPrefix(h, "< ") || !strings.EqualFold(name, "Content-Type") {
			continue
		}
		switch value = strings.ToLower(strings.TrimSpace(value)); {
		case strings.HasPrefix(value, "text/event-stream"):
			s.HTTPAnswers = "sse"
		case strings.HasPrefix(value, "application/json") && s.HTTPAnswers == "":
			s.HTTPAnswers = "json"
		}
	}
}

// add appends a recorded frame, stderr chunk or exit to anchor a.
func (s *Script) add(a *Anchor, rec capture.Record, kind LineKind) {
	at := time.Duration(max(rec.T-a.t, 0))
	switch rec.Type {
	case capture.TypeStderr:
		kind = Stderr
	case capture.TypeProcess:
		code := rec.Exit.Code
		if code < 0 {
			code = 1 // ended by a signal
		}
		a.Lines = append(a.Lines, Line{Offset: at, Kind: Exit, Code: code})
		return
	}
	raw, err := rec.Bytes()
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("capture line %d: frame bytes: %v (skipped)", rec.Line, err))
		return
	}
	a.Lines = append(a.Lines, Line{Offset: at, Raw: raw, Kind: kind})
}

func newExchange(rec capture.Record, session int) (*Exchange, error) {
	raw, err := rec.Bytes()
	if err != nil {
		return nil, fmt.Errorf("request bytes: %v", err)
	}
	msg, _ := jsonrpc.Decode(raw)
	ex := &Exchange{Anchor: Anchor{Method: rec.Method, t: rec.T, Session: session}, ID: *rec.ID, Params: msg.Params}
	ex.canon, ex.Name, ex.token = canonical(rec.Method, msg.Params)
	return ex, nil
}

// canonical returns params without their top-level _meta as canonical JSON
// (keys sorted, no spaces), the loose-match name, and the progress token.
func canonical(method string, params json.RawMessage) (canon, name string, token json.RawMessage) {
	if len(bytes.TrimSpace(params)) == 0 {
		return "", "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(params), "", nil
	}
	if obj, ok := v.(map[string]any); ok {
		if meta, ok := obj["_meta"].(map[string]any); ok {
			if t, ok := meta["progressToken"]; ok {
				token, _ = json.Marshal(t)
			}
		}
		delete(obj, "_meta")
		// No arguments, "arguments": null and "arguments": {} ask the same
		// (clients differ: the Inspector sends {} where a recording had none).
		if a, ok := obj["arguments"]; ok {
			if m, isObj := a.(map[string]any); a == nil || (isObj && len(m) == 0) {
				delete(obj, "arguments")
			}
		}
		name = looseName(method, obj)
		if len(obj) == 0 {
			return "", name, token
		}
	}
	b, _ := json.Marshal(v)
	return string(b), name, token
}

// looseName is the part of the params the looser match compares: the name
// of a tools/call or prompts/get, the uri of a resources request.
func looseName(method string, obj map[string]any) string {
	field := ""
	switch method {
	case mcp.MethodToolsCall, "prompts/get":
		field = "name"
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		field = "uri"
	}
	if field == "" {
		return ""
	}
	s, _ := obj[field].(string)
	return s
}

// progressToken returns the progressToken of a recorded progress
// notification, as JSON.
func progressToken(rec capture.Record) json.RawMessage {
	raw, err := rec.Bytes()
	if err != nil {
		return nil
	}
	msg, err := jsonrpc.Decode(raw)
	if err != nil {
		return nil
	}
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || len(p.Token) == 0 {
		return nil
	}
	return canonicalToken(p.Token)
}

// canonicalToken re-encodes a token so 3 and 3.0 or spaced forms compare
// equal as map keys.
func canonicalToken(t json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return t
	}
	b, _ := json.Marshal(v)
	return b
}
