package capture

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// benchEvents are a typical mix: a request frame, its lifecycle, the
// response frame, a stderr line.
func benchEvents() []client.Event {
	out := frameEvent(1, client.Out, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":7},"arguments":{"value":"hello"},"name":"echo"}}`), client.VerdictSent)
	out.Frame.Msg = jsonrpc.Message{Kind: jsonrpc.KindRequest, ID: jsonrpc.Int(7), Method: "tools/call"}
	in := frameEvent(3, client.In, []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}],"structuredContent":{"value":"hello"}}}`), client.VerdictResolved)
	in.Frame.Detail = "resolved id 7 after 1.2ms"
	return []client.Event{
		out,
		{Seq: 2, Time: t0, Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(7), Method: "tools/call", Tool: "echo", State: client.StateSent, Deadline: t0.Add(30 * time.Second)}},
		in,
		{Seq: 4, Time: t0, Kind: client.EvStderr, Stderr: []byte("server: handled tools/call echo in 1.1ms\n")},
	}
}

// BenchmarkRecordEvent is the recorder's cost per event: conversion to a
// record, JSON encoding and a buffered write (the file is io.Discard).
func BenchmarkRecordEvent(b *testing.B) {
	evs := benchEvents()
	r, err := NewRecorder(io.Discard, Options{Start: t0})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ev := evs[i%len(evs)]
		i++
		r.mu.Lock()
		rec, raw := r.enc.recordBytes(ev, &r.scratch) // as Recorder.run
		r.writeFrameLocked(&rec, &raw)
		r.mu.Unlock()
	}
	b.ReportMetric(float64(r.Summary().Bytes)/float64(i), "B/record")
}

// writeMillion writes a capture of n events (the benchEvents mix) to a file
// in dir.
func writeMillion(b *testing.B, dir string, n int) string {
	b.Helper()
	path := filepath.Join(dir, "million.jsonl")
	f, err := Create(path, true)
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewRecorder(f, Options{Start: t0})
	if err != nil {
		b.Fatal(err)
	}
	evs := benchEvents()
	r.mu.Lock()
	for i := range n {
		ev := evs[i%len(evs)]
		ev.Seq = uint64(i + 1)
		ev.Time = t0.Add(time.Duration(i) * time.Microsecond)
		rec := r.enc.record(ev)
		r.writeRecordLocked(&rec)
		r.sum.Events++
	}
	r.mu.Unlock()
	if s := r.Close(); s.Err != nil {
		b.Fatal(s.Err)
	}
	return path
}

const million = 1_000_000

// BenchmarkOpenMillion indexes a capture of a million events (what a replay
// does when it opens a file).
func BenchmarkOpenMillion(b *testing.B) {
	path := writeMillion(b, b.TempDir(), million)
	st, _ := os.Stat(path)
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(f.Index.Entries) != million+1 { // the events and the end record
			b.Fatalf("%d entries", len(f.Index.Entries))
		}
		f.Close()
	}
	b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
}

// BenchmarkReadMillion reads every record of a million-event capture and
// converts it back into a client event.
func BenchmarkReadMillion(b *testing.B) {
	path := writeMillion(b, b.TempDir(), million)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		rd, err := NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rec, err := range rd.All() {
			if err != nil {
				b.Fatal(err)
			}
			if _, ok, err := rd.Header().Event(rec); err != nil {
				b.Fatal(err)
			} else if ok {
				n++
			}
		}
		f.Close()
		if n != million {
			b.Fatalf("%d events", n)
		}
	}
}
