// Package har writes an HTTP session's capture as HAR 1.2 (the HTTP
// Archive format Chrome DevTools, Firefox and Charles import): one entry
// per exchange (POST, GET, DELETE) with its headers redacted, the
// JSON-RPC message it carried as the request body, what came back (a JSON
// body, or the SSE events of its stream) as the response body, and the
// timings, the server's share in wait. A stdio session has no HTTP to
// write (ErrStdio).
package har

import (
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// ErrStdio is the error for a capture of a stdio session.
var ErrStdio = errors.New("a stdio session has no HTTP exchanges: HAR is for sessions over HTTP (--url); use --format html")

// Options are what a Builder writes beside the entries.
type Options struct {
	Creator, Version string
}

// Builder folds a capture's events into a HAR log. Use New, Add every
// event in order, then Write.
type Builder struct {
	h       capture.Header
	o       Options
	red     *capture.Redactor
	entries []*entry
	streams map[string]*entry // the latest exchange of each stream name
	// outbox holds the messages sonde wrote that no exchange has carried
	// yet, oldest first.
	outbox []outMsg
}

type outMsg struct {
	id  jsonrpc.ID
	req bool
	raw []byte
}

// entry is an exchange being built.
type entry struct {
	ev    *client.HTTPEvent
	start time.Time // request sent
	head  time.Time // response headers arrived
	last  time.Time // the last byte of the body seen
	body  []byte    // request
	resp  strings.Builder
	sse   bool
}

// New returns a Builder for a capture with header h.
func New(h capture.Header, o Options) *Builder {
	red, _ := capture.NewRedactor(nil, nil) // headers only: a capture's values are redacted already
	return &Builder{h: h, o: o, red: red, streams: map[string]*entry{}}
}

// Check reports ErrStdio for a session that was not over HTTP.
func (b *Builder) Check() error {
	if b.h.Transport != "http" {
		return ErrStdio
	}
	return nil
}

// Add folds one event in.
func (b *Builder) Add(ev client.Event) {
	switch {
	case ev.Kind == client.EvFrame && ev.Frame != nil:
		b.frame(ev.Frame, ev.Time)
	case ev.Kind == client.EvHTTP && ev.HTTP != nil:
		b.http(ev.HTTP, ev.Time)
	}
}

func (b *Builder) frame(f *client.FrameInfo, at time.Time) {
	if f.Dir == client.Out {
		b.outbox = append(b.outbox, outMsg{id: f.Msg.ID, req: f.Msg.Kind == jsonrpc.KindRequest, raw: f.Raw})
		return
	}
	e := b.streams[f.Stream]
	if e == nil {
		return
	}
	if e.sse {
		if f.EventID != "" {
			e.resp.WriteString("id: " + f.EventID + "\n")
		}
		e.resp.WriteString("data: ")
		e.resp.Write(f.Raw)
		e.resp.WriteString("\n\n")
	} else {
		e.resp.Write(f.Raw)
	}
	e.last = at
}

func (b *Builder) http(h *client.HTTPEvent, at time.Time) {
	if h.Method == "" { // a stream event that is not a message
		if e := b.streams[h.Stream]; e != nil && e.sse && len(h.Raw) > 0 {
			e.resp.Write(h.Raw)
			e.last = at
		}
		return
	}
	hc := *h
	e := &entry{ev: &hc, start: at.Add(-h.Duration), head: at, last: at}
	for _, l := range h.Header {
		if ct, ok := strings.CutPrefix(l, "< Content-Type: "); ok && strings.HasPrefix(ct, "text/event-stream") {
			e.sse = true
		}
	}
	if h.Method == "POST" {
		e.body = b.carried(h.ReqID)
	}
	b.entries = append(b.entries, e)
	if h.Stream != "" {
		b.streams[h.Stream] = e
	}
}

// carried takes from the outbox the message a POST carried: the request
// of its id, or else the oldest message that is not a request.
func (b *Builder) carried(id jsonrpc.ID) []byte {
	for i, m := range b.outbox {
		if id.IsValid() && m.req && m.id == id || !id.IsValid() && !m.req {
			b.outbox = append(b.outbox[:i:i], b.outbox[i+1:]...)
			return m.raw
		}
	}
	return nil
}

// Write writes the HAR document.
func (b *Builder) Write(w io.Writer) error {
	if err := b.Check(); err != nil {
		return err
	}
	doc := Document{Log: Log{Version: "1.2", Creator: Creator{Name: b.o.Creator, Version: b.o.Version},
		Pages:   []Page{{StartedDateTime: stamp(b.h.Start), ID: "session", Title: b.h.URL, PageTimings: PageTimings{OnContentLoad: -1, OnLoad: -1}}},
		Entries: []Entry{}}}
	for _, e := range b.entries {
		doc.Log.Entries = append(doc.Log.Entries, b.entry(e))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// entry is the HAR entry of an exchange.
func (b *Builder) entry(e *entry) Entry {
	h := e.ev
	reqH, respH := b.headers(h.Header)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	wait, receive := ms(e.head.Sub(e.start)), ms(e.last.Sub(e.head))
	proto := h.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	en := Entry{Pageref: "session", StartedDateTime: stamp(e.start), Time: wait + receive,
		Request: Request{Method: h.Method, URL: h.URL, HTTPVersion: proto, Headers: reqH, Cookies: []Cookie{},
			QueryString: query(h.URL), HeadersSize: -1, BodySize: len(e.body)},
		Response: Response{Status: h.Status, StatusText: statusText(h.Status), HTTPVersion: proto, Headers: respH,
			Cookies: []Cookie{}, RedirectURL: "", HeadersSize: -1, BodySize: e.resp.Len()},
		Cache:   Cache{},
		Timings: Timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 0, Wait: wait, Receive: receive},
		Comment: h.Note,
	}
	if e.body != nil {
		en.Request.PostData = &PostData{MimeType: "application/json", Text: string(e.body), Params: []Param{}}
	}
	mime := header(respH, "Content-Type")
	if mime == "" {
		mime = "x-unknown"
	}
	en.Response.Content = Content{Size: e.resp.Len(), MimeType: mime, Text: e.resp.String()}
	if h.Status == 0 {
		en.Response.BodySize, en.Response.StatusText = -1, "no response"
	}
	return en
}

// headers splits the capture's header lines ("> " sent, "< " received)
// into the request's and the response's, secrets redacted.
func (b *Builder) headers(lines []string) (req, resp []NameValue) {
	lines, _ = b.red.HeaderLines(lines)
	req, resp = []NameValue{}, []NameValue{}
	for _, l := range lines {
		dir, rest := l[:min(2, len(l))], l[min(2, len(l)):]
		name, value, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		nv := NameValue{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}
		switch dir {
		case "> ":
			req = append(req, nv)
		case "< ":
			resp = append(resp, nv)
		}
	}
	return req, resp
}

func header(hs []NameValue, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func query(raw string) []NameValue {
	out := []NameValue{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	return sortedQuery(u.Query())
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
