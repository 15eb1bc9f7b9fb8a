package transport

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// specEvents reads in whole and returns its dispatched events and how the
// stream ended.
func specEvents(t *testing.T, in string) ([]SSEEvent, error) {
	t.Helper()
	return readEventsAll(t, NewSSEReader(strings.NewReader(in), 1024))
}

// One test per rule of the HTML living standard's event-stream parsing
// (§9.2.6 "Interpreting an event stream").
func TestSSESpecRules(t *testing.T) {
	type want struct {
		data, event, id string
		hasID           bool
		retry           time.Duration
	}
	cases := []struct {
		rule string
		in   string
		want []want
		end  error // how the stream ends (nil: io.EOF)
	}{
		{"a field without a colon is the whole line as name, empty value", "data\ndata\n\n", []want{{data: "\n"}}, nil},
		{"exactly one leading space stripped after the colon", "data:  two\n\n", []want{{data: " two"}}, nil},
		{"no space after the colon", "data:x\n\n", []want{{data: "x"}}, nil},
		{"LF line ends", "data: a\n\n", []want{{data: "a"}}, nil},
		{"CR line ends", "data: a\rdata: b\r\r", []want{{data: "a\nb"}}, nil},
		{"CRLF line ends", "data: a\r\ndata: b\r\n\r\n", []want{{data: "a\nb"}}, nil},
		{"a NUL in id ignores that id", "id: a\x00b\ndata: x\n\n", []want{{data: "x"}}, nil},
		{"an id without NUL is kept", "id: 7\ndata: x\n\n", []want{{data: "x", id: "7", hasID: true}}, nil},
		{"comment lines are ignored", ": ping\ndata: x\n: again\n\n", []want{{data: "x"}}, nil},
		{"retry only with ASCII digits", "retry: 12a\nretry: 300\ndata: x\n\nretry: -5\ndata: y\n\n", []want{{data: "x", retry: 300 * time.Millisecond}, {data: "y"}}, nil},
		{"the event field sets the type", "event: endpoint\ndata: /m\n\n", []want{{data: "/m", event: "endpoint"}}, nil},
		{"an event is dispatched only on a blank line", "data: a\ndata: b\n\ndata: c\n\n", []want{{data: "a\nb"}, {data: "c"}}, nil},
		{"a BOM at the start is dropped", "\xEF\xBB\xBFdata: x\n\n", []want{{data: "x"}}, nil},
		{"a BOM later is part of the line", "data: a\n\n\xEF\xBB\xBFdata: x\n\n", []want{{data: "a"}}, nil},
		{"a trailing partial event at EOF is discarded", "data: a\n\ndata: cut", []want{{data: "a"}}, &SSEIncompleteError{}},
		{"a trailing event without its blank line is discarded", "data: a\n\ndata: cut\n", []want{{data: "a"}}, &SSEIncompleteError{}},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			evs, err := specEvents(t, c.in)
			if c.end == nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("end: %v, want EOF", err)
				}
			} else {
				var inc *SSEIncompleteError
				if !errors.As(err, &inc) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("end: %v, want a cut event", err)
				}
			}
			var got []want
			for _, e := range evs {
				if !e.HasData {
					continue // not dispatched by the standard (no data buffer)
				}
				got = append(got, want{data: string(e.Data), event: e.Event, id: e.ID, hasID: e.HasID, retry: e.Retry})
			}
			if len(got) != len(c.want) {
				t.Fatalf("events %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("event %d: %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}
