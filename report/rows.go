package report

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/mcp"
)

// Model finishes the fold: the rows with what the filter judges of each,
// the per-method latency table, the diagram and the header's figures. Call
// it once, after the last Add.
func (b *Builder) Model() *Model {
	m := &b.m
	rep := b.stats.Report(0)
	m.Methods = rep.Methods
	m.Meta.Requests = rep.Requests
	for _, mt := range rep.Methods {
		m.Meta.Errors += mt.Errors
		if mt.Dir == client.Out.String() && mt.Method == mcp.MethodToolsCall {
			m.Meta.Calls += mt.Count
		}
	}
	inj := b.injected.Report(0)
	m.Meta.Injected = inj.Requests
	for _, mt := range inj.Methods {
		m.Meta.InjectedErrors += mt.Errors
		mt.Dir = "injected" // the latency table's rows of sonde's own
		m.Methods = append(m.Methods, mt)
	}
	m.Meta.Server, m.Meta.Version = b.known.Server.Name, b.known.Server.Version
	m.Meta.Protocol = b.known.Protocol
	m.Diagram = Diagram{Client: b.diagram.Client(), Injected: b.diagram.Injected(), Server: b.diagram.Server(), Steps: steps(b.diagram.Steps())}
	for _, mk := range b.unknown {
		m.Spans = append(m.Spans, Span{Dir: "in", ID: "?", Method: "(" + mk.Verdict + " answer)", Start: mk.T, End: mk.T,
			State: mk.Verdict, Failed: true, Marks: []Mark{mk}, Seqs: []uint64{mk.Seq}})
	}
	bySeq := map[uint64][]int{}
	for i, f := range m.Findings {
		bySeq[f.Seq] = append(bySeq[f.Seq], i)
	}
	b.reqs.Rewind()
	for _, ev := range b.events {
		it, judged := b.reqs.Item(ev)
		row, ok := b.row(ev)
		if !ok {
			continue
		}
		if judged {
			row.Item = pageItem(&it, row.Raw)
		}
		row.Findings = bySeq[ev.Seq]
		m.Rows = append(m.Rows, row)
	}
	b.events = nil
	// The page reads every list: none is null.
	m.Rows, m.Spans, m.Findings = nonNil(m.Rows), nonNil(m.Spans), nonNil(m.Findings)
	m.Methods, m.Diagram.Steps = nonNil(m.Methods), nonNil(m.Diagram.Steps)
	return m
}

// row is the frames list's entry for ev; request transitions have none
// (they are the waterfall's).
func (b *Builder) row(ev client.Event) (Row, bool) {
	r := Row{Seq: ev.Seq, T: ev.Time.Sub(b.start)}
	switch ev.Kind {
	case client.EvFrame:
		f := ev.Frame
		if f == nil {
			return r, false
		}
		r.Kind, r.Dir, r.Method, r.Verdict = "frame", f.Dir.String(), f.Msg.Method, string(f.Verdict)
		r.Detail = f.Detail
		if f.Msg.ID.IsValid() {
			r.ID = f.Msg.ID.String()
		}
		r.Raw, r.RawUTF8 = text(f.Raw)
		if f.Stream != "" {
			r.Text = f.Stream
		}
	case client.EvStderr:
		r.Kind, r.Dir = "stderr", "in"
		r.Text, _ = text(ev.Stderr)
	case client.EvProcess:
		r.Kind = "process"
		r.Text = procText(ev.Proc)
	case client.EvNote:
		r.Kind, r.Text = "note", ev.Note
	case client.EvHTTP:
		h := ev.HTTP
		if h == nil {
			return r, false
		}
		r.Kind = "http"
		r.Text = strings.TrimSpace(strings.Join([]string{h.Method, h.URL, status(h.Status), h.Stream, h.Note}, " "))
		r.Raw, _ = text(h.Raw)
	default:
		return r, false
	}
	return r, true
}

// pageItem is it for the page; its payload is given only when it is not
// the row's raw bytes.
func pageItem(it *filter.Item, raw string) *Item {
	p := &Item{Method: it.Method, Tool: it.Tool, ID: it.ID, Dir: it.Dir, Kind: it.Kind, Status: it.Status,
		Failed: it.Failed, IsError: it.IsError, Duration: it.Duration, HasDuration: it.HasDuration}
	if pl, _ := text(it.Payload); pl != raw {
		p.Payload = &pl
	}
	return p
}

// text is b as a string for the page, and whether it was valid UTF-8
// (invalid bytes become U+FFFD).
func text(b []byte) (string, bool) {
	if utf8.Valid(b) {
		return string(b), true
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), false
}

func status(code int) string {
	if code == 0 {
		return ""
	}
	return strconv.Itoa(code)
}

// procText says what a process event was.
func procText(p *client.ProcInfo) string {
	if p == nil {
		return ""
	}
	switch p.What {
	case client.ProcStart:
		return "server started (pid " + strconv.Itoa(p.Pid) + "): " + strings.Join(p.Argv, " ")
	case client.ProcConnect:
		return "connected: " + strings.Join(p.Argv, " ")
	case client.ProcExit:
		if p.Exit != nil {
			return "server " + p.Exit.What()
		}
		return "server exited"
	case client.ProcSignal:
		return "signal " + p.Signal
	}
	return string(p.What)
}

// nonNil is s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
