// Package capturegen writes synthetic captures for tests and benchmarks of
// the replay: a session of pipelined tools/call requests with the records
// sonde writes (capture.Record, encoded as the recorder encodes them), with
// progress, stderr, slow requests that stay in flight for thousands of
// events, timeouts followed by late responses, and a tools/list.
package capturegen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Options shape the session.
type Options struct {
	// Events is how many event records to write (about; the last request
	// may be cut).
	Events int
	// Step is the time between two events (default 1ms).
	Step time.Duration
	// Start is the header's start time (default 2026-01-01 UTC).
	Start time.Time
	// SlowEvery makes every SlowEvery-th call wait SlowFor events before
	// its answer (0: none).
	SlowEvery, SlowFor int
	// TimeoutEvery makes every TimeoutEvery-th call time out, its answer
	// arriving late (0: none).
	TimeoutEvery int
	// Truncate cuts the last line in the middle.
	Truncate bool
}

// Write writes the capture to path (which must not exist).
func Write(path string, o Options) error {
	if o.Step <= 0 {
		o.Step = time.Millisecond
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	g := &gen{o: o, enc: json.NewEncoder(bw)}
	g.enc.SetEscapeHTML(false)
	g.put(capture.Header{Type: capture.TypeHeader, Format: capture.Format, Version: "1.0", Sonde: "capturegen",
		Start: o.Start, Transport: "stdio", Command: []string{"server"}})
	g.session()
	for id := int64(3); g.n < o.Events; id++ {
		g.call(id)
	}
	g.flushDue(1 << 62)
	if o.Truncate {
		if err := bw.Flush(); err != nil {
			return err
		}
		if _, err := bw.WriteString(`{"type":"frame","seq":999999999,"t":1,"dir":"in","raw":"cut`); err != nil {
			return err
		}
	}
	if g.err == nil {
		g.err = bw.Flush()
	}
	if err := f.Close(); g.err == nil {
		g.err = err
	}
	return g.err
}

type gen struct {
	o   Options
	enc *json.Encoder
	n   int // events written
	err error
	// due are answers waiting for their event count.
	due []answer
}

type answer struct {
	at   int
	id   int64
	late bool
	q    int64 // when it was queued (T)
}

// Temp writes a capture with o to a file named name in a new temporary
// folder of t (Write), and returns its path; a failure ends the test.
func Temp(t testing.TB, name string, o Options) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := Write(path, o); err != nil {
		t.Fatal(err)
	}
	return path
}

func (g *gen) t() int64 { return int64(g.n) * int64(g.o.Step) }

func (g *gen) put(v any) {
	if g.err == nil {
		g.err = g.enc.Encode(v)
	}
}

// ev writes an event record (seq and t filled in).
func (g *gen) ev(r capture.Record) {
	g.n++
	r.Seq, r.T = uint64(g.n), g.t()
	g.put(r)
}

func idp(n int64) *jsonrpc.ID { id := jsonrpc.Int(n); return &id }

func deadline(t int64) *int64 { d := t + int64(30*time.Second); return &d }

func (g *gen) frame(dir string, id int64, kind, method, raw, verdict, detail string) {
	r := capture.Record{Type: capture.TypeFrame, Dir: dir, Method: method, Kind: kind, Raw: raw, Size: len(raw), Verdict: verdict, Detail: detail}
	if id != 0 {
		r.ID = idp(id)
	}
	g.ev(r)
}

func (g *gen) req(id int64, method, tool, state string, q int64, lat int64, errCode string) {
	r := capture.Record{Type: capture.TypeRequest, Dir: "out", ID: idp(id), Method: method, Tool: tool, State: state, Deadline: deadline(q), Latency: lat}
	if errCode != "" {
		r.Err = &capture.ErrorRec{Code: errCode, Message: fmt.Sprintf("%s id %d: no response within 30s", method, id)}
	}
	g.ev(r)
}

// session writes the process start, initialize and tools/list.
func (g *gen) session() {
	g.ev(capture.Record{Type: capture.TypeProcess, What: "start", Pid: 4242, Argv: []string{"server"}})
	for _, m := range []struct {
		id     int64
		method string
		result string
	}{
		{1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"gen-server","version":"1.0"}}`},
		{2, "tools/list", `{"tools":[{"name":"echo","description":"Echoes","inputSchema":{"type":"object"}},{"name":"add","inputSchema":{"type":"object"}}]}`},
	} {
		q := g.t()
		g.req(m.id, m.method, "", "queued", q, 0, "")
		g.frame("out", m.id, "request", m.method, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, m.id, m.method), "sent", "")
		g.req(m.id, m.method, "", "sent", q, 0, "")
		g.frame("in", m.id, "response", "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, m.id, m.result), "resolved", fmt.Sprintf("resolved id %d", m.id))
		if m.id == 1 {
			g.put(capture.Record{Type: capture.TypeSession, T: g.t(), ProtocolVersion: "2025-11-25", ServerName: "gen-server", ServerVersion: "1.0"})
		}
		g.req(m.id, m.method, "", "resolved", q, g.t()-q, "")
	}
}

// call writes one tools/call: queued, its frame, sent, then (now or later)
// its answer; answers that are due are written first.
func (g *gen) call(id int64) {
	g.flushDue(g.n)
	q := g.t()
	g.req(id, "tools/call", "echo", "queued", q, 0, "")
	g.frame("out", id, "request", "tools/call", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"value":"v%d"}}}`, id, id), "sent", "")
	g.req(id, "tools/call", "echo", "sent", q, 0, "")
	switch {
	case g.o.TimeoutEvery > 0 && id%int64(g.o.TimeoutEvery) == 0:
		g.due = append(g.due, answer{at: g.n + 40, id: id, late: true, q: q})
	case g.o.SlowEvery > 0 && id%int64(g.o.SlowEvery) == 0:
		g.due = append(g.due, answer{at: g.n + g.o.SlowFor, id: id, q: q})
	default:
		if id%3 == 0 {
			total := 2.0
			r := capture.Record{Type: capture.TypeRequest, Dir: "out", ID: idp(id), Method: "tools/call", Tool: "echo", State: "progress",
				Deadline: deadline(q), Latency: g.t() - q, Progress: &capture.ProgressRec{Progress: 1, Total: &total, Message: "half"}}
			g.ev(r)
		}
		g.answer(answer{id: id, q: q})
		if id%5 == 0 {
			g.ev(capture.Record{Type: capture.TypeStderr, Data: fmt.Sprintf("server: handled id %d\n", id), Size: 24})
		}
	}
}

func (g *gen) answer(a answer) {
	raw := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"v%d"}]}}`, a.id, a.id)
	if a.late {
		g.req(a.id, "tools/call", "echo", "timeout", a.q, g.t()-a.q, "MCP_TIMEOUT")
		g.frame("in", a.id, "response", "", raw, "late", fmt.Sprintf("late response for id %d (timed out)", a.id))
		return
	}
	g.frame("in", a.id, "response", "", raw, "resolved", fmt.Sprintf("resolved id %d", a.id))
	g.req(a.id, "tools/call", "echo", "resolved", a.q, g.t()-a.q, "")
}

// flushDue writes the answers due by event n.
func (g *gen) flushDue(n int) {
	keep := g.due[:0]
	var now []answer
	for _, a := range g.due {
		if a.at <= n {
			now = append(now, a)
		} else {
			keep = append(keep, a)
		}
	}
	g.due = keep
	for _, a := range now {
		g.answer(a)
	}
}
