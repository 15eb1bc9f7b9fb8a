package transport

// Reading SSE streams: a POST's response stream and its resumption with
// GET and Last-Event-ID, and the standalone GET stream.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
)

// responseReader reads the SSE events of body with a reused buffer; done
// gives the buffer back once nothing reads body any more.
func (h *HTTP) responseReader(body io.Reader) (r *SSEReader, done func()) {
	br, _ := h.sseBufs.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(body, sseBufBytes)
	} else {
		br.Reset(body)
	}
	return newSSEReader(br, h.cfg.MaxEventBytes), func() {
		br.Reset(nil)
		h.sseBufs.Put(br)
	}
}

// streamState follows one stream of events: the last event id and retry
// delay, for resuming it.
type streamState struct {
	name     string
	lastID   string
	retry    time.Duration
	resumes  int
	answered bool // the response for the stream's request arrived
}

// readEvents reads one SSE body, delivering messages and noting the rest.
// It returns the reason it stopped: nil at a clean end of the body.
func (h *HTTP) readEvents(r *SSEReader, st *streamState, msg jsonrpc.Message) error {
	for {
		ev, err := r.Next()
		if err != nil {
			var inc *SSEIncompleteError
			if errors.As(err, &inc) {
				h.note(HTTPEvent{Stream: st.name, ReqID: reqID(msg), Raw: inc.Raw, Note: inc.Error(), Problem: true})
				return nil
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if ev.HasID {
			st.lastID = ev.ID
		}
		if ev.HasRetry {
			st.retry = ev.Retry
		}
		if !ev.IsMessage() {
			h.note(HTTPEvent{Stream: st.name, ReqID: reqID(msg), EventID: ev.ID, Raw: ev.Raw, Note: describeEvent(&ev)})
			continue
		}
		f := h.frame(ev.Data, st.name, ev.ID)
		if !h.deliver(inItem{f: f}) {
			return h.ctx.Err()
		}
		if msg.Kind == jsonrpc.KindRequest && f.Err == nil && f.Msg.Kind == jsonrpc.KindResponse && f.Msg.ID == msg.ID {
			st.answered = true
		}
	}
}

// describeEvent says what a non-message event is.
func describeEvent(ev *SSEEvent) string {
	var parts []string
	switch {
	case ev.Event != "" && ev.Event != "message":
		parts = append(parts, fmt.Sprintf("SSE event %q (not a message)", ev.Event))
	case ev.HasData && len(bytes.TrimSpace(ev.Data)) > 0:
		parts = append(parts, "SSE event with data {} (priming, not a message)")
	case ev.HasID && ev.HasData:
		parts = append(parts, "priming event (id, empty data)")
	case ev.Comments > 0 && !ev.HasData:
		parts = append(parts, "keep-alive comment")
	default:
		parts = append(parts, "SSE event without data")
	}
	if ev.HasID {
		parts = append(parts, "id "+ev.ID)
	}
	if ev.HasRetry {
		parts = append(parts, "retry "+ev.Retry.String())
	}
	if len(ev.Unknown) > 0 {
		parts = append(parts, fmt.Sprintf("%d line(s) that are not SSE fields, e.g. %q", len(ev.Unknown), ev.Unknown[0]))
	}
	return strings.Join(parts, "; ")
}

// readResponseStream reads the SSE answer to a request, resuming it with GET
// and Last-Event-ID when it ends before the response.
func (h *HTTP) readResponseStream(body io.Reader, stream string, msg jsonrpc.Message) {
	st := &streamState{name: stream, retry: DefaultRetry}
	r, done := h.responseReader(body)
	err := h.readEvents(r, st, msg)
	done()
	for h.ctx.Err() == nil && !st.answered {
		var tooLong *SSEEventTooLongError
		if errors.As(err, &tooLong) {
			h.fail(&ExchangeError{Kind: ExchangeProtocol, ID: msg.ID, Method: msg.Method, Body: tooLong.Prefix,
				Msg: fmt.Sprintf("%s %s: %v; the stream was dropped", msg.Method, msg.ID, err), Err: err})
			return
		}
		why := "the server closed the response stream"
		if err != nil {
			why = "the response stream broke (" + err.Error() + ")"
		}
		if st.lastID == "" || st.resumes >= MaxResumes || modernVersion(msg) != "" {
			reason := "it sent no event id to resume from"
			switch {
			case modernVersion(msg) != "":
				reason = "the modern era has no resumption (send the request again)"
			case st.lastID != "":
				reason = fmt.Sprintf("%d resumes did not bring it", MaxResumes)
			}
			h.fail(&ExchangeError{Kind: ExchangeStreamEnded, ID: msg.ID, Method: msg.Method,
				Msg: fmt.Sprintf("%s %s: %s before the response, and %s", msg.Method, msg.ID, why, reason), Err: err})
			return
		}
		st.resumes++
		h.note(HTTPEvent{Stream: st.name, ReqID: msg.ID, Problem: true, Note: fmt.Sprintf("%s before the response; resuming in %v with Last-Event-ID %s (attempt %d of %d)", why, st.retry, st.lastID, st.resumes, MaxResumes)})
		select {
		case <-time.After(st.retry):
		case <-h.ctx.Done():
			return
		}
		st.name = "GET resume " + msg.ID.String()
		resp, e := h.get(st.name, st.lastID, msg.ID)
		if e != nil {
			if h.ctx.Err() == nil {
				e.ID, e.Method = msg.ID, msg.Method
				e.Msg = fmt.Sprintf("%s %s: resuming the response stream failed: %s", msg.Method, msg.ID, e.Msg)
				h.fail(e)
			}
			return
		}
		err = h.readAndClose(resp, st, msg)
	}
}

// readAndClose reads a stream's events and closes its body.
func (h *HTTP) readAndClose(resp *http.Response, st *streamState, msg jsonrpc.Message) error {
	defer resp.Body.Close()
	r, done := h.responseReader(resp.Body)
	defer done()
	return h.readEvents(r, st, msg)
}

// get opens a GET stream (the standalone stream, or a resume with
// lastID). A non-2xx or non-SSE answer is an *ExchangeError.
func (h *HTTP) get(stream, lastID string, id jsonrpc.ID) (*http.Response, *ExchangeError) {
	req, shown := h.newRequest(h.ctx, http.MethodGet, h.url, nil, "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
		shown = append(shown, "> Last-Event-ID: "+lastID)
	}
	start := time.Now()
	resp, err := h.hc.Do(req)
	ev := HTTPEvent{Method: http.MethodGet, URL: h.url.Redacted(), Header: shown, Duration: time.Since(start), Stream: stream, ReqID: id}
	if err != nil {
		if h.ctx.Err() == nil {
			ev.Note = err.Error()
			h.note(ev)
		}
		return nil, &ExchangeError{Kind: ExchangeNetwork, Msg: fmt.Sprintf("GET %s: %v", h.url.Redacted(), httpshow.URLError(err)), Err: err}
	}
	ev.Status, ev.Proto = resp.StatusCode, resp.Proto
	ev.Header = append(ev.Header, httpshow.ResponseHeaders(resp)...)
	if resp.StatusCode/100 != 2 {
		e := h.statusError(req, resp, jsonrpc.Message{Method: "GET stream"}, id.IsValid())
		resp.Body.Close()
		ev.Note = e.Msg
		h.note(ev)
		return nil, e
	}
	h.note(ev)
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		resp.Body.Close()
		return nil, &ExchangeError{Kind: ExchangeProtocol, Status: resp.StatusCode, Body: b,
			Msg: fmt.Sprintf("GET %s answered Content-Type %q, not text/event-stream: %s", h.url.Redacted(), resp.Header.Get("Content-Type"), httpshow.Body(b))}
	}
	return resp, nil
}

// startGet opens the standalone GET stream once, after initialization.
// The channel it returns is closed once the first GET has its answer.
func (h *HTTP) startGet() <-chan struct{} {
	opened := make(chan struct{})
	h.mu.Lock()
	if h.getStarted || h.mode != ModeStreamable || h.closed {
		h.mu.Unlock()
		close(opened)
		return opened
	}
	h.getStarted = true
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		h.getLoop(sync.OnceFunc(func() { close(opened) }))
	}()
	return opened
}

// getLoop keeps the standalone stream open: on a clean end it reconnects
// after the retry delay (with Last-Event-ID); it gives up after a refusal
// or after repeated ends that brought nothing.
func (h *HTTP) getLoop(opened func()) {
	defer opened()
	st := &streamState{name: "GET", retry: DefaultRetry}
	idle := 0
	authorized := false
	for h.ctx.Err() == nil {
		sent := h.token()
		resp, e := h.get("GET", st.lastID, jsonrpc.ID{})
		if e != nil && e.Status == http.StatusUnauthorized && h.auth != nil && !authorized && h.ctx.Err() == nil {
			// A token that expired: refresh it (once) and open the stream
			// again.
			authorized = true
			if err := h.authorize(sent, e.Auth, false); err == nil {
				h.note(HTTPEvent{Stream: oauthStream, Note: "authorized: opening the GET stream again with the access token"})
				resp, e = h.get("GET", st.lastID, jsonrpc.ID{})
			} else {
				e.Msg += "; " + err.Error()
			}
		}
		opened()
		if e != nil {
			if h.ctx.Err() != nil {
				return
			}
			if e.Status == http.StatusMethodNotAllowed {
				h.note(HTTPEvent{Stream: "GET", Note: "the server offers no GET stream (405): server-initiated messages can only come on POST streams"})
			} else {
				h.note(HTTPEvent{Stream: "GET", Note: "no GET stream: " + e.Msg})
			}
			return
		}
		before := st.lastID
		err := h.readAndClose(resp, st, jsonrpc.Message{})
		if h.ctx.Err() != nil || h.isClosed() {
			return
		}
		if err != nil {
			h.note(HTTPEvent{Stream: "GET", Note: "the GET stream broke: " + err.Error(), Problem: true})
		}
		if st.lastID == before {
			idle++
		} else {
			idle = 0
		}
		if idle >= 3 {
			h.note(HTTPEvent{Stream: "GET", Note: "the GET stream keeps ending with nothing new; not reopening it"})
			return
		}
		h.note(HTTPEvent{Stream: "GET", Note: fmt.Sprintf("the GET stream ended; reopening in %v", st.retry)})
		select {
		case <-time.After(st.retry):
		case <-h.ctx.Done():
			return
		}
	}
}
