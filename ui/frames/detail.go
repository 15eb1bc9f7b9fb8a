package frames

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/lint"
	"github.com/sonde-mcp/sonde/ui/list"
)

// prettyMax is the largest message the detail view pretty-prints; larger
// ones are shown raw only.
const prettyMax = 1 << 20

// detail is the open detail view: one frame, laid out as wrapped lines of
// spans for the current width, and the scroll offset.
type detail struct {
	e     entry
	lines [][]span
	off   int
}

// openDetail shows the selected frame. The view keeps its own copy of the
// frame, so it survives eviction.
func (m *Model) openDetail() {
	if m.count() == 0 {
		return
	}
	m.det = detail{e: *m.ring.at(m.absAt(m.indexOf(m.sel)))}
	m.mode = modeDetail
	m.buildDetail()
}

func (m *Model) updateDetail(msg tea.KeyPressMsg) {
	k, page := &m.keys, max(m.h-2, 1)
	if key.Matches(msg, k.Back) {
		m.mode = modeList
		m.det = detail{}
	} else if d, ok := k.Delta(msg, page); ok {
		m.scrollDetail(d)
	}
}

func (m *Model) scrollDetail(delta int) {
	rows := max(m.h-1, 0)
	m.det.off = list.ClampTop(m.det.off+delta, len(m.det.lines), rows)
}

// buildDetail lays the frame out for the current width: header (direction,
// time, id, method, verdict and detail), the message pretty-printed, and
// the exact raw bytes.
func (m *Model) buildDetail() {
	e, f := &m.det.e, m.det.e.f
	sep := span{skSubtle, " · "}
	var doc [][]span
	add := func(l ...span) { doc = append(doc, l) }

	dirSt := skInfo
	if f.Dir == client.Out {
		dirSt = skAccent
	}
	add(span{dirSt, f.Dir.Arrow() + " " + f.Dir.String()}, sep,
		span{skText, "+" + textfmt.Dur(e.t.Sub(m.t0))}, sep,
		span{skText, e.t.Format("15:04:05.000")}, sep,
		span{skText, textfmt.Size(len(f.Raw))}, sep,
		span{skSubtle, "event " + strconv.FormatUint(e.seq, 10)})
	if who := whoSpans(f, sep); len(who) > 0 {
		add(who...)
	}
	verdict := []span{{skVerdict, string(f.Verdict)}}
	if f.Detail != "" {
		verdict = append(verdict, span{skText, "  " + textfmt.Escape(f.DetailAfterVerdict())})
	}
	add(verdict...)
	for _, fd := range e.lint {
		r, _ := lint.Lookup(fd.Rule)
		add(span{pick(r.Level == lint.Must, skError, skWarn), "lint " + fd.Rule}, span{skText, "  " + textfmt.Escape(fd.Detail)})
		add(span{skSubtle, "  " + r.Summary + " (" + r.Spec + ")"})
	}
	if f.Err != nil {
		add(span{skError, "decode error: "}, span{skText, textfmt.Escape(f.Err.Error())})
	}
	if f.Stream != "" {
		st := []span{{skSubtle, "stream "}, {skText, textfmt.Escape(f.Stream)}}
		if f.EventID != "" {
			st = append(st, sep, span{skSubtle, "event id "}, span{skText, textfmt.Escape(f.EventID)})
		}
		add(st...)
	}
	if h := e.h; h != nil {
		m.httpDetail(add, h)
		m.setDetail(doc)
		return
	}

	doc = append(doc, messageSpans(f, sep)...)
	m.setDetail(doc)
}

// whoSpans is the detail's line of who the frame is: its id (and whether
// sonde injected it), method and kind.
func whoSpans(f *client.FrameInfo, sep span) []span {
	var who []span
	if f.Msg.ID.IsValid() {
		who = append(who, span{skSubtle, "id "}, span{skText, f.Msg.ID.String()})
		if client.Injected(f.Msg.ID) {
			who = append(who, span{skInfo, " (injected by sonde: the host never saw the answer)"})
		}
	}
	if f.Msg.Method != "" {
		who = append(who, sep, span{skText, textfmt.Escape(f.Msg.Method)})
	}
	if f.Msg.Kind != jsonrpc.KindInvalid {
		who = append(who, sep, span{skSubtle, f.Msg.Kind.String()})
	}
	if len(who) > 0 && who[0] == sep {
		who = who[1:]
	}
	return who
}

// messageSpans are the frame's message, pretty-printed when it can be,
// and its raw bytes.
func messageSpans(f *client.FrameInfo, sep span) [][]span {
	var doc [][]span
	add := func(l ...span) { doc = append(doc, l) }
	add()
	add(span{skHeader, "message"})
	if len(f.Raw) <= prettyMax && json.Valid(f.Raw) {
		doc = append(doc, colorJSON(f.Raw)...)
	} else {
		why := "not valid JSON; shown as received"
		if len(f.Raw) > prettyMax {
			why = "too large to pretty-print; shown as received"
		}
		add(span{skWarn, why})
		add(span{skText, rawText(f.Raw)})
	}

	add()
	head := []span{{skHeader, "raw bytes"}, sep, {skText, strconv.Itoa(len(f.Raw)) + " bytes"}}
	if bytes.HasSuffix(f.Raw, []byte("\r")) {
		head = append(head, sep, span{skWarn, `line ended with \r (CRLF)`})
	}
	if f.Verdict == client.VerdictTooLong {
		head = append(head, sep, span{skWarn, "only the start of an over-long line"})
	}
	add(head...)
	add(span{skText, rawText(f.Raw)})

	return doc
}

// setDetail wraps doc to the pane's width as the detail's lines, from the top.
func (m *Model) setDetail(doc [][]span) {
	m.det.lines = m.det.lines[:0]
	for _, l := range doc {
		m.det.lines = append(m.det.lines, wrapSpans(l, m.w)...)
	}
	m.scrollDetail(0)
}

// rawText is the exact bytes on one line, escaped.
func rawText(b []byte) string { return textfmt.Preview(b, -1) }

// detailView draws the visible lines of the detail view and a footer.
func (m *Model) detailView() string {
	rows := max(m.h-1, 0)
	d := &m.det
	lines := make([]string, 0, m.h)
	end := min(len(d.lines), d.off+rows)
	for _, l := range d.lines[d.off:end] {
		var sb strings.Builder
		for _, sp := range l {
			m.pen(sp.k, false).write(&sb, sp.s)
		}
		lines = append(lines, sb.String())
	}
	for len(lines) < rows {
		lines = append(lines, "")
	}
	foot := "lines " + strconv.Itoa(min(d.off+1, end)) + "-" + strconv.Itoa(end) + " of " +
		strconv.Itoa(len(d.lines)) + " · esc back"
	if m.note != "" {
		foot += " · " + textfmt.Clean(m.note)
	}
	lines = append(lines, m.pen(skSubtle, false).render(foot))
	return textfmt.Lines(strings.Join(lines, "\n"), m.w, m.h)
}

// httpDetail lays out an HTTP row: the exchange, its headers (secret values
// already redacted by the transport), and the raw bytes of a stream event
// or of an exchange's body.
func (m *Model) httpDetail(add func(...span), h *client.HTTPEvent) {
	add()
	add(span{skHeader, "http"})
	if h.Method != "" {
		status := "no answer"
		if h.Status != 0 {
			status = strconv.Itoa(h.Status) + " after " + textfmt.Dur(h.Duration)
		}
		add(span{skText, h.Method + " " + textfmt.Escape(h.URL)}, span{skSubtle, " → "}, span{pick(httpProblem(h), skError, skText), status})
	}
	if h.Note != "" {
		add(span{pick(httpProblem(h), skWarn, skText), textfmt.Escape(h.Note)})
	}
	if len(h.Header) > 0 {
		add()
		add(span{skHeader, "headers"}, span{skSubtle, "  > sent, < received"})
		for _, l := range h.Header {
			add(span{skText, textfmt.Escape(l)})
		}
	}
	if len(h.Raw) > 0 {
		add()
		of := " bytes of the SSE event"
		if h.Method != "" { // an exchange: the start of its body (authorization discovery's metadata)
			of = " bytes of the body"
		}
		add(span{skHeader, "raw bytes"}, span{skSubtle, " · "}, span{skText, strconv.Itoa(len(h.Raw)) + of})
		add(span{skText, rawText(h.Raw)})
	}
}
