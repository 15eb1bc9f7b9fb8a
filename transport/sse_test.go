package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func readEventsAll(t *testing.T, r *SSEReader) ([]SSEEvent, error) {
	t.Helper()
	var evs []SSEEvent
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEFields(t *testing.T) {
	in := ": keep-alive\n\n" +
		"id: 7\nretry: 300\ndata:\n\n" +
		"event: message\nid: 8\ndata: {\"a\":\ndata:  1}\n\n" +
		"event: endpoint\ndata: /message?sessionId=x\n\n" +
		"retry: nope\nbogus line\ndata: x\n\n"
	evs, err := readEventsAll(t, NewSSEReader(strings.NewReader(in), 1024))
	if !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
	if len(evs) != 5 {
		t.Fatalf("got %d events: %+v", len(evs), evs)
	}
	if evs[0].Comments != 1 || evs[0].IsMessage() {
		t.Errorf("keep-alive: %+v", evs[0])
	}
	if !evs[1].HasID || evs[1].ID != "7" || evs[1].Retry != 300*time.Millisecond || !evs[1].HasData || evs[1].IsMessage() {
		t.Errorf("priming: %+v", evs[1])
	}
	if string(evs[2].Data) != "{\"a\":\n 1}" || evs[2].ID != "8" || !evs[2].IsMessage() {
		t.Errorf("multi-line data: %q", evs[2].Data)
	}
	if string(evs[2].Raw) != "event: message\nid: 8\ndata: {\"a\":\ndata:  1}\n\n" {
		t.Errorf("raw bytes not kept: %q", evs[2].Raw)
	}
	if evs[3].Event != "endpoint" || evs[3].IsMessage() || string(evs[3].Data) != "/message?sessionId=x" {
		t.Errorf("endpoint: %+v", evs[3])
	}
	if evs[4].HasRetry || len(evs[4].Unknown) != 1 || string(evs[4].Unknown[0]) != "bogus line" {
		t.Errorf("bad retry / unknown line: %+v", evs[4])
	}
}

func TestSSELineEndings(t *testing.T) {
	for name, in := range map[string]string{
		"crlf": "id: 1\r\ndata: {\"x\":1}\r\n\r\n",
		"cr":   "id: 1\rdata: {\"x\":1}\r\r",
		"lf":   "id: 1\ndata: {\"x\":1}\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			// One byte at a time: a "\r" at the end of a read must still
			// pair with the "\n" of the next one.
			evs, err := readEventsAll(t, NewSSEReader(iotest.OneByteReader(strings.NewReader(in)), 1024))
			if !errors.Is(err, io.EOF) || len(evs) != 1 {
				t.Fatalf("%d events, %v", len(evs), err)
			}
			if evs[0].ID != "1" || string(evs[0].Data) != `{"x":1}` {
				t.Fatalf("%+v", evs[0])
			}
			if name != "crlf" && string(evs[0].Raw) != in {
				t.Fatalf("raw %q, want %q", evs[0].Raw, in)
			}
		})
	}
}

func TestSSEIncompleteEvent(t *testing.T) {
	r := NewSSEReader(strings.NewReader("data: {\"a\":1}\n\nid: 2\ndata: {\"cut\":"), 1024)
	if ev, err := r.Next(); err != nil || string(ev.Data) != `{"a":1}` {
		t.Fatalf("%+v %v", ev, err)
	}
	_, err := r.Next()
	var inc *SSEIncompleteError
	if !errors.As(err, &inc) || string(inc.Raw) != "id: 2\ndata: {\"cut\":" {
		t.Fatalf("got %v", err)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the incomplete event: %v", err)
	}
}

func TestSSEEventTooLong(t *testing.T) {
	for name, in := range map[string]io.Reader{
		"one long line":   io.MultiReader(strings.NewReader("data: "), bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20))),
		"many data lines": strings.NewReader(strings.Repeat("data: 0123456789\n", 1000)),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewSSEReader(in, 4096).Next()
			var tl *SSEEventTooLongError
			if !errors.As(err, &tl) || tl.Limit != 4096 || len(tl.Prefix) == 0 || !errors.Is(err, ErrSSEEventTooLong) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// An endless event is refused after the cap, without reading it all.
func TestSSEEndlessEventIsBounded(t *testing.T) {
	endless := io.MultiReader(strings.NewReader("data: "), infinite{})
	if _, err := NewSSEReader(endless, 64<<10).Next(); !errors.Is(err, ErrSSEEventTooLong) {
		t.Fatalf("got %v", err)
	}
}

type infinite struct{}

func (infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"", "data: x\n\n", "id: 1\rretry: 5\r\r", ": c\r\n\r\n", "data: a\ndata: b", "event: endpoint\ndata: /m\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewSSEReader(bytes.NewReader(in), 256)
		// The same stream through the smallest read buffer: its lines span
		// many reads (gathered in blocks and joined behind the event's
		// bytes), and every event and error must come out the same. (Not
		// with a "\r": a "\r\n" split across two reads leaves the "\n"
		// out of Raw, as it always has.)
		small := newSSEReader(bufio.NewReaderSize(bytes.NewReader(in), 16), 256)
		same := bytes.IndexByte(in, '\r') < 0
		total := 0
		for {
			ev, err := r.Next()
			if same {
				ev2, err2 := small.Next()
				if !reflect.DeepEqual(ev, ev2) || fmt.Sprint(err) != fmt.Sprint(err2) {
					t.Fatalf("4 KiB buffer: %+v, %v; 16 bytes: %+v, %v", ev, err, ev2, err2)
				}
			}
			if err != nil {
				break
			}
			if len(ev.Raw) > 256 {
				t.Fatalf("event of %d bytes over the cap", len(ev.Raw))
			}
			total += len(ev.Raw)
			if total > len(in) {
				t.Fatalf("events hold %d bytes, more than the %d read", total, len(in))
			}
		}
	})
}
