// Package diagram draws a session as a sequence diagram: the client and
// the server as two lanes (the client named by its clientInfo: sonde, or
// the host of a tapped session; requests sonde injected into a host's
// session on a third lane of their own, sonde's), one arrow per frame (requests labelled with their
// method and id, responses with the id they resolve), notes where a
// response overtook an earlier request, where a request timed out or was
// cancelled, and where the server started or exited. It writes Mermaid
// (a sequenceDiagram) or a plain-text swimlane for the terminal.
//
// A Builder is fed the client's events in order (Add); a window (From, To)
// keeps only the events inside it, while requests sent before the window
// are still known, so their responses are labelled right.
package diagram

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// style is how an arrow is drawn.
type style uint8

const (
	styleRequest style = iota + 1 // a request
	styleReply                    // a response
	styleNotify                   // a notification
	styleBad                      // a line that is not a valid message
)

// side is where a note goes.
type side uint8

const (
	overBoth side = iota
	leftOfClient
	rightOfServer
)

// step is one arrow or note of the diagram.
type step struct {
	seq  uint64
	at   time.Duration
	note bool
	dir  client.Direction // an arrow: Out is the client to the server
	// injected: the arrow or note is of a request sonde injected into a
	// host's session (client.Injected), drawn on sonde's own lane.
	injected bool
	style    style
	side     side // a note
	label    string
}

// sent is a request of sonde's that was written.
type sent struct {
	seq uint64
	at  time.Duration
}

type reqKey struct {
	gen int
	id  jsonrpc.ID
}

// Options configure a Builder.
type Options struct {
	// Start is time 0 of the window's times (a capture's start; the first
	// event's time when zero).
	Start time.Time
	// From and To bound the window (both included); unset bounds are open.
	From, To Bound
}

// Builder collects the steps of a diagram. Use New; it is not safe for
// concurrent use.
type Builder struct {
	o      Options
	gen    int
	steps  []step
	sent   map[reqKey]sent
	server string
	// client is the client's name (clientInfo), "" until it said;
	// injected counts the steps of sonde's injected requests.
	client   string
	injected int
	first    uint64 // first and last event seq in the window
	last     uint64
}

// New returns an empty builder.
func New(o Options) *Builder {
	return &Builder{o: o, sent: map[reqKey]sent{}, server: "server"}
}

// Add folds one event in.
func (b *Builder) Add(ev client.Event) {
	if b.o.Start.IsZero() {
		b.o.Start = ev.Time
	}
	at := ev.Time.Sub(b.o.Start)
	in := b.o.From.before(ev.Seq, at) && b.o.To.after(ev.Seq, at)
	if in {
		if b.first == 0 {
			b.first = ev.Seq
		}
		b.last = ev.Seq
	}
	add := func(s step) {
		if in {
			s.seq, s.at = ev.Seq, at
			if s.injected {
				b.injected++
			}
			b.steps = append(b.steps, s)
		}
	}
	switch ev.Kind {
	case client.EvProcess:
		b.process(ev.Proc, add)
	case client.EvRequest:
		b.request(ev.Req, add)
	case client.EvFrame:
		if ev.Frame != nil {
			if f := ev.Frame; !f.Time.IsZero() {
				at = f.Time.Sub(b.o.Start)
			}
			b.frame(ev.Seq, at, ev.Frame, add)
		}
	}
}

func (b *Builder) process(p *client.ProcInfo, add func(step)) {
	if p == nil {
		return
	}
	switch p.What {
	case client.ProcStart, client.ProcConnect:
		b.gen++
		clear(b.sent)
		if p.What == client.ProcStart {
			add(step{note: true, side: rightOfServer, label: "server started (pid " + strconv.Itoa(p.Pid) + ")"})
		} else {
			add(step{note: true, side: rightOfServer, label: "connected"})
		}
	case client.ProcExit:
		what := "server exited"
		if x := p.Exit; x != nil {
			what = x.What()
			switch {
			case x.Signal != "":
				what += " (" + x.Signal + ")"
			case x.Code >= 0:
				what += " with code " + strconv.Itoa(x.Code)
			}
		}
		add(step{note: true, side: rightOfServer, label: what})
	}
}

func (b *Builder) request(q *client.ReqInfo, add func(step)) {
	if q == nil || q.Dir != client.Out || !q.State.Final() {
		return
	}
	k := reqKey{b.gen, q.ID}
	if _, ok := b.sent[k]; !ok {
		return // answered (the response frame came first) or never written
	}
	delete(b.sent, k)
	switch q.State {
	case client.StateTimeout, client.StateCancelled, client.StateExited, client.StateClosed, client.StateProtocol, client.StateHTTP:
		add(step{note: true, side: leftOfClient, injected: client.Injected(q.ID), label: fmt.Sprintf("id %s %s after %s", q.ID, q.State, textfmt.Dur(q.Latency))})
	}
}

func (b *Builder) frame(seq uint64, at time.Duration, f *client.FrameInfo, add func(step)) {
	m := &f.Msg
	if f.Err != nil && !(m.Kind == jsonrpc.KindResponse && m.ID.IsValid()) {
		add(step{dir: f.Dir, style: styleBad, label: badLabel(f)})
		return
	}
	switch m.Kind {
	case jsonrpc.KindRequest:
		injected := f.Dir == client.Out && client.Injected(m.ID)
		add(step{dir: f.Dir, style: styleRequest, injected: injected, label: requestLabel(m)})
		if f.Dir == client.Out {
			b.sent[reqKey{b.gen, m.ID}] = sent{seq: seq, at: at}
			if !injected && b.client == "" {
				b.client = clientName(m)
			}
		}
	case jsonrpc.KindNotification:
		add(step{dir: f.Dir, style: styleNotify, label: notificationLabel(m)})
	case jsonrpc.KindResponse:
		if f.Dir == client.Out {
			add(step{dir: f.Dir, style: styleReply, label: responseLabel(m, "")})
			return
		}
		b.response(at, f, add)
	}
}

// response draws an answer to one of sonde's requests, with a note when it
// overtook a request sent before its own.
func (b *Builder) response(at time.Duration, f *client.FrameInfo, add func(step)) {
	m := &f.Msg
	k := reqKey{b.gen, m.ID}
	s, pending := b.sent[k]
	extra := ""
	switch f.Verdict {
	case client.VerdictResolved, client.VerdictRemoteError:
		if pending {
			extra = textfmt.Dur(at - s.at)
		}
	case client.VerdictInvalid:
		extra = "invalid"
	default:
		extra = string(f.Verdict)
	}
	if f.Verdict == client.VerdictResolved && m.Result != nil && m.Error == nil && b.server == "server" {
		var r mcp.InitializeResult
		if json.Unmarshal(m.Result, &r) == nil && r.ServerInfo.Name != "" && r.ProtocolVersion != "" {
			b.server = r.ServerInfo.Name
		}
	}
	add(step{dir: client.In, style: styleReply, injected: client.Injected(m.ID), label: responseLabel(m, extra)})
	if !pending {
		return
	}
	delete(b.sent, k)
	var earliest jsonrpc.ID
	earliestSeq, waiting := uint64(0), 0
	for k2, o := range b.sent {
		if k2.gen == b.gen && o.seq < s.seq {
			waiting++
			if earliestSeq == 0 || o.seq < earliestSeq {
				earliest, earliestSeq = k2.id, o.seq
			}
		}
	}
	if waiting > 0 {
		label := fmt.Sprintf("id %s answered before id %s, sent earlier", m.ID, earliest)
		if waiting > 1 {
			label += fmt.Sprintf(" (and %d more)", waiting-1)
		}
		add(step{note: true, side: overBoth, label: label})
	}
}

// clientName is the name a client gives itself in a request: initialize's
// clientInfo, or a modern request's _meta ("" when it gives none).
func clientName(m *jsonrpc.Message) string {
	var p struct {
		ClientInfo mcp.Implementation         `json:"clientInfo"`
		Meta       map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return ""
	}
	if m.Method != mcp.MethodInitialize {
		p.ClientInfo = mcp.Implementation{}
		json.Unmarshal(p.Meta[mcp.MetaClientInfo], &p.ClientInfo)
	}
	return p.ClientInfo.Name
}

// Client is the client's lane's name: its clientInfo name; before it gave
// one, "sonde" (a session of sonde's own), or "host" in a tapped session
// (one with injected requests).
func (b *Builder) Client() string {
	switch {
	case b.client != "":
		return b.client
	case b.injected > 0:
		return "host"
	}
	return "sonde"
}

// Injected reports whether the diagram has sonde's lane: steps of requests
// sonde injected into a host's session.
func (b *Builder) Injected() bool { return b.injected > 0 }

func requestLabel(m *jsonrpc.Message) string {
	name := m.Method
	if m.Method == mcp.MethodToolsCall {
		var p struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.Name != "" {
			name += " " + p.Name
		}
	}
	return name + " [id " + m.ID.String() + "]"
}

func notificationLabel(m *jsonrpc.Message) string {
	switch m.Method {
	case mcp.MethodCancelled:
		var p struct {
			ID jsonrpc.ID `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.ID.IsValid() {
			return m.Method + " [id " + p.ID.String() + "]"
		}
	case mcp.MethodProgress:
		var p mcp.ProgressParams
		if json.Unmarshal(m.Params, &p) == nil {
			s := m.Method + " " + strconv.FormatFloat(p.Progress, 'f', -1, 64)
			if p.Total != nil {
				s += "/" + strconv.FormatFloat(*p.Total, 'f', -1, 64)
			}
			var tok jsonrpc.ID
			if json.Unmarshal(p.ProgressToken, &tok) == nil && tok.IsValid() {
				s += " [token " + tok.String() + "]"
			}
			return s
		}
	}
	return m.Method
}

func responseLabel(m *jsonrpc.Message, extra string) string {
	what := "result"
	if m.Error != nil {
		what = "error " + mcp.CodeText(m.Error.Code)
	}
	s := what + " [id " + m.ID.String() + "]"
	if extra != "" {
		s += " " + extra
	}
	return s
}

// badLabel names a line that is not a valid message, with its start.
func badLabel(f *client.FrameInfo) string {
	what := string(f.Verdict)
	var de *jsonrpc.DecodeError
	switch e := f.Err.(type) {
	case *jsonrpc.DecodeError:
		de = e
	case *client.LineTooLongError:
		what = "too long"
	}
	if de != nil {
		what = strings.ReplaceAll(de.Class.String(), "-", " ")
	}
	return what + ": " + textfmt.Preview(f.Raw, 32)
}
