// Package report builds the self-contained HTML page of `sonde export
// --format html` (docs/export.md): a capture's header figures, a waterfall
// of its requests, the sequence diagram in SVG, the frames with the filter
// language working in the page, and the lint findings. Every figure comes
// from sonde's own folds (stats, lint, diagram, filter, surface); the page
// only draws them. Its data is one JSON document, gzipped and base64'd
// inside the page, which the page's script decodes and renders with DOM
// text nodes only, so no server string is ever parsed as markup.
package report

import (
	"encoding/json"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diagram"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/lint"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/stats"
	"github.com/sonde-mcp/sonde/surface"
)

// Model is the page's data: what the script draws. Durations are
// nanoseconds, times are nanoseconds from the capture's start.
type Model struct {
	Meta     Meta           `json:"meta"`
	Rows     []Row          `json:"rows"`
	Spans    []Span         `json:"spans"`
	Methods  []stats.Method `json:"methods"`
	Findings []Finding      `json:"findings"`
	Rules    []lint.Rule    `json:"rules"`
	Diagram  Diagram        `json:"diagram"`
}

// Meta is the header of the page.
type Meta struct {
	File      string        `json:"file"`
	Sonde     string        `json:"sonde"`
	Transport string        `json:"transport"`
	Command   []string      `json:"command,omitempty"`
	URL       string        `json:"url,omitempty"`
	Redaction []string      `json:"redaction,omitempty"`
	Start     time.Time     `json:"start"`
	Server    string        `json:"server"`
	Version   string        `json:"version"`
	Protocol  string        `json:"protocol"`
	Era       string        `json:"era"`
	Client    string        `json:"client"`
	Duration  time.Duration `json:"duration"`
	Events    int           `json:"events"`
	Frames    int           `json:"frames"`
	// Calls, Requests and Errors are the client's (the host's, in a
	// tapped session); Injected counts the requests sonde injected into a
	// host's session, InjectedErrors those of them that failed.
	Calls          int            `json:"calls"`
	Requests       int            `json:"requests"`
	Errors         int            `json:"errors"`
	Injected       int            `json:"injected"`
	InjectedErrors int            `json:"injectedErrors"`
	Verdicts       map[string]int `json:"verdicts"`
	Findings       map[string]int `json:"findings"`
}

// Row is one entry of the frames list: a frame, a stderr chunk, a process
// event, a note or an HTTP exchange.
type Row struct {
	Seq    uint64        `json:"seq"`
	T      time.Duration `json:"t"`
	Kind   string        `json:"k"` // frame, stderr, process, note, http
	Dir    string        `json:"d,omitempty"`
	ID     string        `json:"id,omitempty"`
	Method string        `json:"m,omitempty"`
	// Verdict and Detail are a frame's; Text is the row's text otherwise.
	Verdict string `json:"v,omitempty"`
	Detail  string `json:"det,omitempty"`
	Text    string `json:"x,omitempty"`
	// Raw is the frame's bytes (valid UTF-8 or with U+FFFD), RawUTF8
	// whether they were valid UTF-8 as they are.
	Raw     string `json:"raw,omitempty"`
	RawUTF8 bool   `json:"u8,omitempty"`
	// Item is what the filter judges (filter.Requests over the session);
	// nil for a row the filter always keeps.
	Item *Item `json:"it,omitempty"`
	// Findings are indexes into Model.Findings.
	Findings []int `json:"f,omitempty"`
}

// Item is filter.Item as the page's filter reads it (its payload is the
// row's Raw).
type Item struct {
	Method      string        `json:"method,omitempty"`
	Tool        string        `json:"tool,omitempty"`
	ID          string        `json:"id,omitempty"`
	Dir         string        `json:"dir,omitempty"`
	Kind        string        `json:"kind,omitempty"`
	Status      []string      `json:"status,omitempty"`
	Failed      bool          `json:"failed,omitempty"`
	IsError     bool          `json:"isError,omitempty"`
	Duration    time.Duration `json:"dur,omitempty"`
	HasDuration bool          `json:"hasDur,omitempty"`
	// Payload is set when it is not the row's Raw.
	Payload *string `json:"payload,omitempty"`
}

// Span is one request on the waterfall: from its send to its end.
type Span struct {
	Dir    string `json:"dir"`
	ID     string `json:"id"`
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	// Start is when it was queued (sonde's) or received (the server's);
	// End when it settled, -1 while it never did.
	Start   time.Duration `json:"start"`
	End     time.Duration `json:"end"`
	State   string        `json:"state"`
	Latency time.Duration `json:"latency"`
	Failed  bool          `json:"failed,omitempty"`
	// Injected: a request sonde injected into a host's session.
	Injected bool            `json:"inj,omitempty"`
	Ticks    []time.Duration `json:"ticks,omitempty"` // progress
	// Marks are answers that came for it after it settled: late or
	// duplicate (the Seq of the frame, its time and verdict).
	Marks []Mark `json:"marks,omitempty"`
	// Seqs are the frames of the request (its send, its answer).
	Seqs []uint64 `json:"seqs,omitempty"`
	// RetryOf is, for a modern-era retry after input_required (an MRTR
	// chain), the id it continues; Chain the chain's first id; ClientWait
	// the time from the previous answer to this retry (the client's
	// share: answering the input requests); ServerShare the chain's
	// latencies so far, this one's included, without the client's waits.
	RetryOf     string        `json:"retryOf,omitempty"`
	Chain       string        `json:"chain,omitempty"`
	ClientWait  time.Duration `json:"clientWait,omitempty"`
	ServerShare time.Duration `json:"serverShare,omitempty"`
}

// Mark is an answer drawn on the waterfall: late, duplicate, unknown.
type Mark struct {
	Seq     uint64        `json:"seq"`
	T       time.Duration `json:"t"`
	Verdict string        `json:"v"`
}

// Finding is a lint finding with its rule's level.
type Finding struct {
	Rule   string `json:"rule"`
	Level  string `json:"level"`
	Seq    uint64 `json:"seq"`
	Detail string `json:"detail"`
}

// Diagram is the sequence diagram's steps (the Mermaid export's content):
// the client's lane (its name), sonde's when it injected requests into a
// host's session, the server's.
type Diagram struct {
	Client   string `json:"client"`
	Injected bool   `json:"injected,omitempty"`
	Server   string `json:"server"`
	Steps    []Step `json:"steps"`
}

// Step is a diagram.Step for the page: an arrow from Dir's sender, or a
// note.
type Step struct {
	Seq   uint64        `json:"seq"`
	At    time.Duration `json:"at"`
	Note  bool          `json:"note,omitempty"`
	Where string        `json:"where,omitempty"`
	Dir   string        `json:"dir,omitempty"`
	Arrow string        `json:"arrow,omitempty"`
	// Inj: a step of a request sonde injected (sonde's lane).
	Inj   bool   `json:"inj,omitempty"`
	Label string `json:"label"`
}

// steps are the diagram's steps for the page.
func steps(in []diagram.Step) []Step {
	out := make([]Step, len(in))
	for i, s := range in {
		out[i] = Step{Seq: s.Seq, At: s.At, Note: s.Note, Where: string(s.Where), Arrow: string(s.Arrow), Inj: s.Injected, Label: s.Label}
		if !s.Note {
			out[i].Dir = s.Dir.String()
		}
	}
	return out
}

// spanKey names a request: its server process, direction and id.
type spanKey struct {
	gen int
	dir client.Direction
	id  string
}

// Builder folds a capture's events into a Model. Use New; Add every event
// in order, then Model (or Write).
type Builder struct {
	m      Model
	start  time.Time
	events []client.Event
	reqs   *filter.Requests
	stats  *stats.Collector
	// injected folds sonde's injected requests, which stats leaves out.
	injected *stats.Collector
	lint     *lint.Linter
	diagram  *diagram.Builder
	known    surface.Known
	gen      int
	spans    map[spanKey]int
	// lastSpan is the span of the latest request of an id, for an answer
	// that came after it settled.
	unknown []Mark
}

// Options are what a Builder knows besides the events.
type Options struct {
	// File is the capture's name as the page shows it.
	File string
	// Sonde is the version of sonde that writes the page.
	Sonde string
}

// New returns a Builder for a capture with header h.
func New(h capture.Header, o Options) *Builder {
	b := &Builder{
		start: h.Start, reqs: filter.NewRequests(), stats: stats.New(h.Start), injected: stats.New(h.Start), lint: lint.New(),
		diagram: diagram.New(diagram.Options{Start: h.Start}), spans: map[spanKey]int{},
	}
	b.m.Meta = Meta{File: o.File, Sonde: o.Sonde, Transport: h.Transport, Command: h.Command, URL: h.URL,
		Redaction: h.Redaction, Start: h.Start, Verdicts: map[string]int{}, Findings: map[string]int{}}
	b.m.Rules = lint.Rules()
	return b
}

// Add folds one event in.
func (b *Builder) Add(ev client.Event) {
	if b.start.IsZero() {
		b.start = ev.Time
	}
	b.events = append(b.events, ev)
	b.reqs.Learn(ev)
	// The host's requests are counted apart from those sonde injected.
	switch {
	case !injectedEvent(ev):
		b.stats.Add(ev)
		if ev.Kind != client.EvRequest && ev.Kind != client.EvFrame {
			b.injected.Add(ev) // a process start: a new id space for both
		}
	default:
		b.injected.Add(ev)
	}
	b.diagram.Add(ev)
	b.known.Apply(ev)
	if ev.StartsSession() {
		b.gen++
	}
	b.m.Meta.Events++
	at := ev.Time.Sub(b.start)
	b.m.Meta.Duration = max(b.m.Meta.Duration, at)
	for _, f := range b.lint.Check(ev) {
		lv := "should"
		if r, ok := lint.Lookup(f.Rule); ok {
			lv = string(r.Level)
		}
		b.m.Findings = append(b.m.Findings, Finding{Rule: f.Rule, Level: lv, Seq: f.Seq, Detail: f.Detail})
		b.m.Meta.Findings[lv]++
	}
	switch ev.Kind {
	case client.EvRequest:
		b.request(ev, at)
	case client.EvFrame:
		b.frame(ev, at)
	}
}

// frame counts a frame's verdict and learns the session's era and client.
func (b *Builder) frame(ev client.Event, at time.Duration) {
	f := ev.Frame
	if f == nil {
		return
	}
	b.m.Meta.Frames++
	b.m.Meta.Verdicts[string(f.Verdict)]++
	if f.Dir == client.Out && f.Msg.Kind == jsonrpc.KindRequest {
		switch f.Msg.Method {
		case mcp.MethodInitialize:
			b.m.Meta.Era = string(client.EraLegacy)
			b.clientInfo(f.Msg.Params, "clientInfo")
		case mcp.MethodServerDiscover:
			b.m.Meta.Era = string(client.EraModern)
		}
	}
	switch f.Verdict {
	case client.VerdictLate, client.VerdictDuplicate, client.VerdictUnknown:
		mk := Mark{Seq: ev.Seq, T: at, Verdict: string(f.Verdict)}
		if i, ok := b.spans[spanKey{b.gen, client.Out, f.Msg.ID.String()}]; ok && f.Msg.ID.IsValid() {
			b.m.Spans[i].Marks = append(b.m.Spans[i].Marks, mk)
		} else {
			b.unknown = append(b.unknown, mk)
		}
	case client.VerdictResolved, client.VerdictRemoteError:
		if i, ok := b.spans[spanKey{b.gen, client.Out, f.Msg.ID.String()}]; ok {
			b.m.Spans[i].Seqs = append(b.m.Spans[i].Seqs, ev.Seq)
		}
	case client.VerdictSent:
		if f.Msg.Kind == jsonrpc.KindRequest {
			if i, ok := b.spans[spanKey{b.gen, client.Out, f.Msg.ID.String()}]; ok {
				b.m.Spans[i].Seqs = append(b.m.Spans[i].Seqs, ev.Seq)
			}
		}
	}
}

// clientInfo reads the host's name and version from a request's params.
func (b *Builder) clientInfo(params json.RawMessage, field string) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var impl mcp.Implementation
	if json.Unmarshal(p[field], &impl) == nil && impl.Name != "" {
		b.m.Meta.Client = impl.Name + " " + impl.Version
	}
}

// request follows a request's lifecycle onto its span.
func (b *Builder) request(ev client.Event, at time.Duration) {
	q := ev.Req
	if q == nil || !q.ID.IsValid() {
		return
	}
	k := spanKey{b.gen, q.Dir, q.ID.String()}
	i, ok := b.spans[k]
	if !ok || b.m.Spans[i].End >= 0 && !q.State.Final() {
		i = len(b.m.Spans)
		b.spans[k] = i
		b.m.Spans = append(b.m.Spans, Span{Dir: q.Dir.String(), ID: k.id, Start: at, End: -1, Injected: q.Dir == client.Out && client.Injected(q.ID)})
		if q.RetryOf.IsValid() {
			b.retry(i, spanKey{b.gen, q.Dir, q.RetryOf.String()}, at)
		}
	}
	s := &b.m.Spans[i]
	if q.Method != "" {
		s.Method = q.Method
	}
	if q.Tool != "" {
		s.Tool = q.Tool
	}
	s.State = string(q.State)
	switch {
	case q.State == client.StateProgress:
		s.Ticks = append(s.Ticks, at)
	case q.State.Final() && s.End < 0:
		s.End, s.Latency = at, q.Latency
		s.Failed = client.Errored(q.State, false)
		s.ServerShare += q.Latency
	}
}

// retry links span i, a retry, to the span of the request it continues.
func (b *Builder) retry(i int, prev spanKey, at time.Duration) {
	s := &b.m.Spans[i]
	s.RetryOf, s.Chain = prev.id, prev.id
	j, ok := b.spans[prev]
	if !ok {
		return
	}
	p := b.m.Spans[j]
	if p.Chain != "" {
		s.Chain = p.Chain
	}
	s.ServerShare = p.ServerShare
	if p.End >= 0 {
		s.ClientWait = at - p.End
	}
}

// injectedEvent reports whether ev is of a request sonde injected into a
// host's session: its lifecycle, its frame or its answer's.
func injectedEvent(ev client.Event) bool {
	switch {
	case ev.Kind == client.EvRequest && ev.Req != nil:
		return ev.Req.Dir == client.Out && client.Injected(ev.Req.ID)
	case ev.Kind == client.EvFrame && ev.Frame != nil:
		m := &ev.Frame.Msg
		return (ev.Frame.Dir == client.Out) == (m.Kind == jsonrpc.KindRequest) && client.Injected(m.ID)
	}
	return false
}
