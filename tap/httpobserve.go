package tap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/transport"
)

// httpBody is what the observer holds of one body.
type httpBody struct {
	buf     []byte
	tooLong bool
	broken  bool // a chunk was missed: the body cannot be decoded
	sse     *transport.SSESplitter
	// inf decodes a compressed body (enc, its Content-Encoding); badEnc
	// is why it could not.
	inf    *inflater
	enc    string
	badEnc error
	zBytes int64 // compressed bytes given to inf
}

// add takes the next bytes of a body that is not an SSE stream, keeping
// at most max of them (and the first 256 of a longer one, for its
// record); it reports whether the body is still within max.
func (b *httpBody) add(data []byte, max int) bool {
	if b.tooLong || b.broken {
		return false
	}
	if len(b.buf)+len(data) > max {
		b.tooLong = true
		if len(b.buf) < 256 {
			b.buf = append(b.buf, data[:min(len(data), 256-len(b.buf))]...)
		}
		return false
	}
	b.buf = append(b.buf, data...)
	return true
}

// observe is the observer goroutine: bodies are gathered (JSON) or split
// into events (SSE) and their messages fed to the client.Observer, until
// Close; it then takes what is already queued.
func (p *Proxy) observe() {
	def := p.opts.Observer
	if def == nil {
		<-p.closed
		return
	}
	o := def // the observer of the chunk being handled (route)
	type key struct {
		ex   *exchange
		kind int
	}
	bodies := map[key]*httpBody{}
	reportLost := func(t time.Time) {
		if p.lost.Load() == 0 { // the usual case: no write on each chunk
			return
		}
		if n := p.lost.Swap(0); n > 0 {
			o.Missed(uint64(n), fmt.Sprintf("observation fell behind: %d of the exchanges' headers, notes or ends went by unobserved", n), t)
		}
	}
	handle := func(c hchunk) {
		p.inflight.Add(-int64(len(c.data)))
		reportLost(c.t)
		if c.missed > 0 {
			o.Missed(c.missed, fmt.Sprintf("observation fell behind: %d bytes of %s (%d reads) were forwarded but not observed", c.missedBytes, c.ex.stream, c.missed), c.t)
		}
		switch c.kind {
		case hkHTTP:
			o.HTTP(*c.http, c.t)
			return
		case hkNote:
			if c.fault != nil {
				o.Fault(c.note, c.fault, c.t)
				return
			}
			if c.hold != nil {
				o.Hold(c.note, c.hold, c.t)
				return
			}
			o.Note(c.note, c.t)
			return
		}
		k := key{c.ex, c.kind}
		b := bodies[k]
		if b == nil {
			b = &httpBody{}
			if c.kind == hkResp && c.ctype == "text/event-stream" {
				b.sse = transport.NewSSESplitter(p.opts.MaxMessageBytes)
			}
			if c.enc != "" {
				b.inf, b.enc = newInflater(c.enc), c.enc
			}
			bodies[k] = b
		}
		if c.missed > 0 {
			b.broken = true
			if b.sse != nil {
				b.sse.Skip()
			}
			if b.inf != nil {
				// The compressed stream has a gap: nothing after it
				// decodes.
				b.inf.close()
			}
		}
		dir := client.Out
		if c.kind == hkResp {
			dir = client.In
		}
		if b.inf != nil {
			p.inflate(o, c, b)
			if !c.end {
				return
			}
			b.inf.close()
			c.data = nil
		}
		if b.sse != nil {
			emit := func(ev transport.SSEEvent, err error) { p.sseEvent(o, c.ex, ev, err, c.t) }
			b.sse.Feed(c.data, emit)
			if c.end {
				b.sse.End(emit)
				delete(bodies, k)
			}
			return
		}
		if !c.end {
			b.add(c.data, p.opts.MaxMessageBytes)
			return
		}
		delete(bodies, k)
		switch {
		case b.broken:
			o.Note(fmt.Sprintf("sonde tap: a body of %s was not observed whole: not decoded", c.ex.stream), c.t)
		case b.badEnc != nil && !b.tooLong:
			o.Note(fmt.Sprintf("sonde tap: a body of %s with Content-Encoding %s could not be decoded: %v", c.ex.stream, b.enc, b.badEnc), c.t)
		case b.tooLong:
			o.TooLong(dir, &client.LineTooLongError{Limit: p.opts.MaxMessageBytes, Prefix: b.buf[:min(len(b.buf), 256)]}, c.t)
		case c.kind == hkResp && c.ctype != "application/json":
			// 202 Accepted, an error page: nothing to decode (the
			// exchange's record has its status and content type).
		default:
			p.messages(o, dir, b.buf, c.t, c.ex.stream, "")
		}
	}
	route := p.router(def, &o, handle)
	tick := time.NewTimer(observeTick)
	tick.Stop()
	defer tick.Stop()
	// While nothing comes, idle sessions are looked for every so often
	// (while chunks come, route.next does it).
	var sweep <-chan time.Time
	if route.every > 0 && p.opts.Sessions != nil {
		t := time.NewTicker(route.every)
		defer t.Stop()
		sweep = t.C
	}
	for {
		select {
		case c := <-p.queue:
			route.next(c)
			p.whileBusy(route.next, tick)
			continue
		case now := <-sweep:
			route.sweep(now)
			continue
		case <-p.closed:
		}
		for {
			select {
			case c := <-p.queue:
				route.next(c)
			default:
				if p.ends.Load() > 0 {
					// An end is on its way (offerEnd), unless the one
					// counted saw the close first and was not sent:
					// look at the count again shortly.
					select {
					case c := <-p.queue:
						route.next(c)
					case <-time.After(endPoll):
					}
					continue
				}
				route.releaseAll()
				o = def
				reportLost(time.Now())
				for _, b := range bodies {
					if b.sse != nil {
						b.sse.Skip()
					}
					if b.inf != nil {
						b.inf.close()
					}
				}
				return
			}
		}
	}
}

// endPoll is how often the closing observer looks again at the ends
// counted but not yet queued (offerEnd).
const endPoll = time.Millisecond

// whileBusy handles what the queue holds a tick at a time, until a tick
// brings nothing (or the proxy closes): while chunks keep coming, the
// observer is not woken for each (see tap.observe).
func (p *Proxy) whileBusy(handle func(hchunk), tick *time.Timer) {
	for {
		tick.Reset(observeTick)
		select {
		case <-tick.C:
		case <-p.closed:
			return
		}
		n := 0
		for more := true; more; {
			select {
			case c := <-p.queue:
				handle(c)
				n++
			default:
				more = false
			}
		}
		if n == 0 {
			return
		}
	}
}

// inflate passes chunk c of a compressed body b to its decoder, and what
// it decodes on as the body's bytes (an SSE stream's events, or a body
// gathered up to MaxMessageBytes: past it, the decoder is stopped and the
// body is too long, however much more it would have decoded to).
func (p *Proxy) inflate(o *client.Observer, c hchunk, b *httpBody) {
	if b.broken {
		return
	}
	b.zBytes += int64(len(c.data))
	_, err := b.inf.feed(c.data, c.end, func(d []byte) bool {
		if b.sse == nil {
			return b.add(d, p.opts.MaxMessageBytes)
		}
		over := false
		b.sse.Feed(d, func(ev transport.SSEEvent, err error) {
			over = over || errors.Is(err, transport.ErrSSEEventTooLong)
			p.sseEvent(o, c.ex, ev, err, c.t)
		})
		if !over {
			return true
		}
		// An event that decodes past the cap may never end (a bomb
		// has no blank line): it is too long now (the splitter said
		// so as it passed the cap), and the decoder stops.
		o.Note(fmt.Sprintf("sonde tap: an event of the SSE stream of %s (Content-Encoding %s) decodes to more than %d bytes: the rest of the stream is forwarded, not decoded", c.ex.stream, b.enc, p.opts.MaxMessageBytes), c.t)
		b.tooLong = true
		b.sse.Skip()
		return false
	})
	if err != nil && b.zBytes == 0 {
		err = nil // an empty body, nothing to decode
	}
	if err != nil && b.badEnc == nil {
		b.badEnc = err
		if b.sse != nil {
			o.Note(fmt.Sprintf("sonde tap: the SSE stream of %s with Content-Encoding %s could not be decoded past this point: %v", c.ex.stream, b.enc, err), c.t)
		}
	}
}

// messages feeds a body (one message or a batch) to o.
func (p *Proxy) messages(o *client.Observer, dir client.Direction, body []byte, t time.Time, stream, eventID string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil && len(batch) > 0 {
			for _, m := range batch {
				o.Message(dir, m, t, stream, eventID)
			}
			return
		}
	}
	o.Message(dir, body, t, stream, eventID)
}

// sseEvent feeds what an SSE splitter gave (an event, or err) to o: an
// event's data as a message, or an HTTP event for one that carries none
// (an endpoint, a priming event); an event over the cap as too long. An
// event the stream's end cut is never dispatched, and not shown.
func (p *Proxy) sseEvent(o *client.Observer, ex *exchange, ev transport.SSEEvent, err error, t time.Time) {
	var long *transport.SSEEventTooLongError
	switch {
	case errors.As(err, &long):
		o.TooLong(client.In, &client.LineTooLongError{Limit: p.opts.MaxMessageBytes, Prefix: long.Prefix}, t)
		return
	case err != nil:
		return
	}
	if ev.Event == "endpoint" {
		ex.stream = "SSE" // the legacy transport's stream
	}
	if (ev.Event == "" || ev.Event == "message") && len(ev.Data) > 0 {
		p.messages(o, client.In, ev.Data, t, ex.stream, ev.ID)
		return
	}
	note := "SSE event"
	if ev.Event != "" {
		note += " " + ev.Event
	}
	if len(ev.Data) > 0 {
		note += ": " + string(ev.Data)
	}
	o.HTTP(client.HTTPEvent{Stream: ex.stream, EventID: ev.ID, Raw: ev.Raw, Note: note}, t)
}
